/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Where lbsim finds the files a scenario names (doc/scenario.md, "Where
 * files are found"). A relative path P given in a scenario file is looked
 * for, first to last:
 *   1. in the folder of the file that names it (as lbsim always did);
 *   2. in each folder D of LBSIM_PATH (colon-separated), then in lbsim's
 *      installed data folder ($(pkgdatadir)): as D/Q and D/KIND/Q, where Q
 *      is P without its leading "./" and "../" and KIND the folder of its
 *      kind (profiles, traces/data), so that `../profiles/x.ini` and
 *      `x.ini` both find D/profiles/x.ini.
 *      A build tree's own program (./lbsim in a checkout) looks in its
 *      source tree after LBSIM_PATH and before the installed folder, so
 *      that it runs the tree's scenarios, not an installed copy's.
 * An absolute path is only itself. The environment is read, never
 * written. */
#ifndef LBS_DATAPATH_H
#define LBS_DATAPATH_H

#include <stdbool.h>
#include <stddef.h>

#include "util/error.h"

#define LBS_DATAPATH_MAX 4096

typedef struct lbs_datapath {
	char path[LBS_DATAPATH_MAX]; /* the file found, else the first place looked */
	bool found;                   /* path exists */
	char looked[LBS_ERROR_MAX / 2]; /* the places looked, for messages */
} lbs_datapath;

/* The installed data folder (compiled in). */
const char *lbs_datapath_installed(void);

/* The folder of a file's path, into buf: "a/b.ini" gives "a", "/b.ini"
 * "/", and a bare "b.ini" "." (where a scenario's relative paths start). */
void lbs_path_folder(const char *path, char *buf, size_t len);

/* Looks for `rel` from `base_dir` (NULL or "": the working directory), then
 * in LBSIM_PATH and the installed folder under `kind` (NULL: none). Never
 * fails: when nothing exists, out->path is the first place looked and the
 * loader's own error says why it cannot be read. */
void lbs_datapath_find(const char *rel, const char *base_dir, const char *kind, lbs_datapath *out);

/* When dp found nothing, appends "(looked in ...)" to err's message. */
void lbs_datapath_explain(lbs_error *err, const lbs_datapath *dp);

/* A scenario or sweep named on the command line: `name` itself when it
 * exists, or else, when it is relative, D/scenarios/NAME or
 * D/scenarios/NAME.ini for D in LBSIM_PATH, then the installed folder
 * (`lbsim run default`). */
void lbs_datapath_scenario(const char *name, lbs_datapath *out);

/* The source tree when the program running is the build tree's (not an
 * installed copy), else NULL. */
const char *lbs_datapath_source_tree(void);

/* Calls fn for each folder searched after the scenario's own: those of
 * LBSIM_PATH in order, the source tree for a build tree's program, then
 * the installed one. */
void lbs_datapath_each(void (*fn)(void *ctx, const char *dir), void *ctx);

/* Calls fn(ctx, REL) for every *.ini below DIR/scenarios, REL its path
 * below that folder (with .ini), depth first, 8 levels at most. */
void lbs_datapath_walk_scenarios(const char *dir, void (*fn)(void *ctx, const char *rel), void *ctx);

/* The same below DIR/KIND ("profiles", say). */
void lbs_datapath_walk(const char *dir, const char *kind, void (*fn)(void *ctx, const char *rel), void *ctx);

/* The name of a scenario or sweep `lbsim run NAME` could find (without
 * .ini) nearest a mistyped `name`, in out; NULL when none is near enough
 * to be a slip (util/suggest.h). */
const char *lbs_datapath_suggest_scenario(const char *name, char *out, size_t len);

/* Before a scenario or sweep named on the command line (name, looked up
 * into file by lbs_datapath_scenario) is read: LBS_EINPUT where it was
 * not found (the places looked, and the nearest name), LBS_EUSAGE where
 * it is a results database, not a scenario; else LBS_OK. */
lbs_status lbs_datapath_check_named(const char *name, const lbs_datapath *file, lbs_error *err);

#endif
