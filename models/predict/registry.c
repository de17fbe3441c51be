/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <string.h>

#include "models/predict.h"

const lbs_predictor_ops *const lbs_predictors[] = {
	&lbs_predictor_last,
	&lbs_predictor_ema,
	&lbs_predictor_arima,
	&lbs_predictor_narx,
	&lbs_predictor_arx,
	NULL,
};

const lbs_predictor_ops *lbs_predictor_find(const char *name)
{
	for (size_t i = 0; lbs_predictors[i]; i++)
		if (strcmp(lbs_predictors[i]->name, name) == 0)
			return lbs_predictors[i];
	return NULL;
}

void lbs_predictor_names(char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t i = 0; lbs_predictors[i]; i++) {
		if (i)
			strncat(buf, ", ", len - strlen(buf) - 1);
		strncat(buf, lbs_predictors[i]->name, len - strlen(buf) - 1);
	}
}

void lbs_predictor_document(FILE *out)
{
	fprintf(out, "\nPredictors:\n\n| predictor | what it does |\n|---|---|\n");
	for (size_t i = 0; lbs_predictors[i]; i++)
		fprintf(out, "| `%s` | %s |\n", lbs_predictors[i]->name, lbs_predictors[i]->summary);
	for (size_t i = 0; lbs_predictors[i]; i++)
		if (lbs_predictors[i]->n_options) {
			fprintf(out, "\n### [predictor.%s]\n\n", lbs_predictors[i]->name);
			lbs_keys_document(out, lbs_predictors[i]->options, lbs_predictors[i]->n_options);
		}
}
