/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <string.h>

#include "models/policy.h"

const lbs_policy_ops *const lbs_policies[] = {
	&lbs_policy_static,
	NULL,
};

const lbs_policy_ops *lbs_policy_find(const char *name)
{
	for (size_t i = 0; lbs_policies[i]; i++)
		if (strcmp(lbs_policies[i]->name, name) == 0)
			return lbs_policies[i];
	return NULL;
}

void lbs_policy_names(char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t i = 0; lbs_policies[i]; i++) {
		if (i)
			strncat(buf, ", ", len - strlen(buf) - 1);
		strncat(buf, lbs_policies[i]->name, len - strlen(buf) - 1);
	}
}

void lbs_policy_document(FILE *out)
{
	fprintf(out, "| `name` | what it does |\n|---|---|\n");
	/* `name` defaults to static when [policy] is absent. */
	for (size_t i = 0; lbs_policies[i]; i++)
		fprintf(out, "| `%s` | %s |\n", lbs_policies[i]->name, lbs_policies[i]->summary);
	for (size_t i = 0; lbs_policies[i]; i++)
		if (lbs_policies[i]->n_options) {
			fprintf(out, "\nOptions of `%s`:\n\n", lbs_policies[i]->name);
			lbs_keys_document(out, lbs_policies[i]->options, lbs_policies[i]->n_options);
		}
}

void lbs_split_even(int64_t total, size_t n, int64_t *batch)
{
	int64_t base = total / (int64_t)n, extra = total % (int64_t)n;
	for (size_t i = 0; i < n; i++)
		batch[i] = base + ((int64_t)i < extra);
}
