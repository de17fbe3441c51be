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
	const void *other;                  /* a table of a kind lbs_plugin_open_kind opened */
} lbs_plugin;

/* What lbs_plugin_open_kind checks of a table: its name, summary, option
 * rows and function pointers (required: the ones a member must have are
 * there). */
typedef struct lbs_plugin_desc {
	const char *name, *summary;
	const lbs_key_spec *options;
	size_t n_options, options_size;
	bool required;
	const void *fns[8];
	size_t n_fns;
} lbs_plugin_desc;

/* A kind of plugin: its word in messages ("policy"), the table's symbol,
 * its size, how to describe one, and the functions it needs (for the
 * message). */
typedef struct lbs_plugin_kind {
	const char *kind, *symbol;
	size_t size;
	void (*describe)(const void *ops, lbs_plugin_desc *d);
	const char *needs;
} lbs_plugin_kind;

/* Opens the shared object at `path` (which holds a '/') and checks it: its
 * ABI version, its table (a predictor's when `predictor`, else a policy's),
 * the table's name and required functions, and that the symbols, the
 * table, its strings and option rows lie inside the loaded object and its
 * function pointers inside the object's code. Errors (LBS_EINPUT) say what is
 * wrong with the file; the caller adds where it was named. */
lbs_status lbs_plugin_open(lbs_plugin *p, const char *path, bool predictor, lbs_error *err);

/* The same for a table of another kind (a hybrid policy's, hybrid/policy.h):
 * the checks of lbs_plugin_open but the built-in names', which the caller
 * makes; *ops the table. */
lbs_status lbs_plugin_open_kind(lbs_plugin *p, const char *path, const lbs_plugin_kind *kind, const void **ops,
				lbs_error *err);

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
