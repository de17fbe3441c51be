/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <string.h>

#include "models/predict.h"

const lbs_predictor_ops *const lbs_predictors[] = {
	&lbs_predictor_last,
	NULL,
};

const lbs_predictor_ops *lbs_predictor_find(const char *name)
{
	for (size_t i = 0; lbs_predictors[i]; i++)
		if (strcmp(lbs_predictors[i]->name, name) == 0)
			return lbs_predictors[i];
	return NULL;
}
