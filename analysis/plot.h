/* SPDX-License-Identifier: GPL-3.0-or-later */
/* `lbsim plot`: the plots of a results database, drawn by gnuplot with the
 * scripts of analysis/ (compiled in), each beside the CSV of its data. */
#ifndef LBS_PLOT_H
#define LBS_PLOT_H

#include <sqlite3.h>
#include <stdbool.h>
#include <stddef.h>

#include "util/buf.h"
#include "util/error.h"

#define LBS_PLOT_MAX_FILTERS 32

typedef struct lbs_plot_options {
	const char *dir;     /* where the files go (created if needed) */
	const char *formats; /* "png", or several: "png,svg,pdf" */
	const char *x;       /* the speedup plot's x axis: a key that varies (NULL: n_workers) */
	const char *by;      /* its lines: keys, comma-separated (NULL: the policy and every
			      * other key that varies but the seed) */
	/* Which runs to draw: "KEY=VALUE" (policy, seed, scenario, n_workers or
	 * a SECTION.KEY of the scenario), all of them; "N" picks the setting of
	 * the per-setting plots (a setting_id) without filtering the others. */
	const char *filters[LBS_PLOT_MAX_FILTERS];
	size_t n_filters;
	long long gantt_first, gantt_count; /* the iterations of the timeline */
	long long whatif;                   /* the lbsim whatif analysis to draw (0: the last, if any) */
	bool quiet;                         /* print nothing but errors */
	/* Which plots: all (0), the speedup alone, or the per-setting plots
	 * alone (what lbsim report draws per key and per point). */
	enum { LBS_PLOT_ALL, LBS_PLOT_SPEEDUP, LBS_PLOT_SETTING } which;
	/* The pictures' size (0: each script's own, 960 x 600 pixels or
	 * 10 x 6.25 in), in pixels or in inches (size_inches); their font
	 * ("NAME,SIZE", NULL: the scripts'); no titles (a paper's caption says
	 * what a figure is). lbs_plot_size and lbs_plot_paper fill them. */
	double width, height;
	bool size_inches;
	const char *font;
	bool no_title;
} lbs_plot_options;

/* Parses --size: "WxH" in pixels, or "WxHin", "WxHcm" (converted to
 * inches); false when it is not one (or absurd: over 20000 pixels or
 * 100 in, under 16 pixels or 0.5 in). */
bool lbs_plot_size(const char *s, lbs_plot_options *o);

/* Parses --font "NAME,SIZE": a name of letters, digits, spaces and
 * hyphens (at most 63) and a size from 4 to 72 points. */
bool lbs_plot_font(const char *s);

/* --paper single|double: the width of one column (3.5 in) or of the page
 * (7 in) of a two-column paper, a serif font of 8 points, no titles;
 * false for another name. */
bool lbs_plot_paper(const char *name, lbs_plot_options *o);

/* Draws every plot the database has data for into o->dir, and appends the
 * path of each picture written to *made, one a line. gnuplot is its path.
 * Errors: LBS_EUSAGE (an option that does not fit the database), LBS_EINPUT
 * (nothing to plot), LBS_EIO. */
lbs_status lbs_plot_draw(sqlite3 *db, const char *gnuplot, const lbs_plot_options *o, lbs_buf *made,
			 lbs_error *err);

/* The `lbsim plot` command; returns the exit status. */
int lbs_plot_command(int argc, char **argv);

#endif
