/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The files of analysis/ compiled into lbsim (the SQL views, the gnuplot
 * scripts), so that the commands that read results work wherever the
 * binary is, installed or not. */
#ifndef LBS_FILES_H
#define LBS_FILES_H

/* analysis/embed.sh writes the table; the last entry is { NULL, NULL }. */
typedef struct lbs_analysis_file {
	const char *name; /* e.g. "views.sql", "speedup.gp" */
	const char *text;
} lbs_analysis_file;
extern const lbs_analysis_file lbs_analysis_files[];

/* The text of analysis file `name`, or NULL. */
const char *lbs_analysis_text(const char *name);

#endif
