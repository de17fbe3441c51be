/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "analysis/files.h"

#include <string.h>

const char *lbs_analysis_text(const char *name)
{
	for (const lbs_analysis_file *f = lbs_analysis_files; f->name; f++)
		if (!strcmp(f->name, name))
			return f->text;
	return NULL;
}
