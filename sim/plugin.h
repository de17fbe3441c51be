/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Loading policy and predictor plugins (models/plugin.h, doc/extending.md).
 * A scenario owns the plugins it names: they are opened while it is read
 * and closed when it is destroyed, after every run that used them. */
#ifndef LBS_SIM_PLUGIN_H
#define LBS_SIM_PLUGIN_H

#include <stdbool.h>

#include "models/plugin.h"
#include "util/datapath.h"
#include "util/error.h"

typedef struct lbs_plugin {
	void *handle;
	char path[LBS_DATAPATH_MAX];
	const lbs_policy_ops *policy;       /* a policy plugin's table, else NULL */
	const lbs_predictor_ops *predictor; /* a predictor plugin's table, else NULL */
} lbs_plugin;

/* Opens the shared object at `path` (which holds a '/') and checks it: its
 * ABI version, its table (a predictor's when `predictor`, else a policy's),
 * the table's name and required functions, and that the symbols, the
 * table, its strings and option rows lie inside the loaded object and its
 * function pointers inside the object's code. Errors (LBS_EINPUT) say what is
 * wrong with the file; the caller adds where it was named. */
lbs_status lbs_plugin_open(lbs_plugin *p, const char *path, bool predictor, lbs_error *err);

void lbs_plugin_close(lbs_plugin *p);

/* Whether plugins load (doc/extending.md, "What a plugin is trusted
 * with"): a plugin is code that runs with the user's privileges as soon
 * as it is loaded, so a scenario that merely names one loads nothing
 * unless the command line allows it. mode 1: allowed (`--plugins`); 0:
 * the environment decides (LBSIM_PLUGINS=1 allows); -1: never (while
 * listing, whatever the rest says). lbs_plugin_open refuses, saying how
 * to allow it, when plugins are not allowed. */
void lbs_plugins_permit(int mode);
bool lbs_plugins_allowed(void);
bool lbs_plugins_listing(void);

#endif
