/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "util/datapath.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef LBS_PKGDATADIR
#error "LBS_PKGDATADIR (the installed data folder) must be defined by the build"
#endif

const char *lbs_datapath_installed(void)
{
	return LBS_PKGDATADIR;
}

void lbs_datapath_each(void (*fn)(void *ctx, const char *dir), void *ctx)
{
	const char *p = getenv("LBSIM_PATH");
	char dir[LBS_DATAPATH_MAX];
	while (p && *p) {
		size_t n = strcspn(p, ":");
		if (n > 0 && n < sizeof dir) {
			memcpy(dir, p, n);
			dir[n] = '\0';
			fn(ctx, dir);
		}
		p += n + (p[n] == ':');
	}
	fn(ctx, LBS_PKGDATADIR);
}

typedef struct search {
	lbs_datapath *out;
	const char *tail[2]; /* what is tried under each folder */
	const char *suffix[2];
	size_t looked_used;
} search;

/* Records `candidate` as looked at; takes it if it exists and nothing was
 * found before. */
static void try_path(search *s, const char *candidate)
{
	lbs_datapath *o = s->out;
	if (o->found)
		return;
	bool first = s->looked_used == 0;
	if (first)
		snprintf(o->path, sizeof o->path, "%s", candidate);
	if (access(candidate, F_OK) == 0) {
		snprintf(o->path, sizeof o->path, "%s", candidate);
		o->found = true;
		return;
	}
	if (s->looked_used + 1 < sizeof o->looked) {
		int w = snprintf(o->looked + s->looked_used, sizeof o->looked - s->looked_used, "%s%s",
				 first ? "" : ", ", candidate);
		s->looked_used += w > 0 ? (size_t)w : 0;
		if (s->looked_used >= sizeof o->looked)
			s->looked_used = sizeof o->looked - 1;
	}
}

static void try_dir(void *ctx, const char *dir)
{
	search *s = ctx;
	char candidate[LBS_DATAPATH_MAX];
	for (size_t t = 0; t < 2; t++)
		for (size_t x = 0; x < 2; x++)
			if (s->tail[t] && s->suffix[x]) {
				int n = snprintf(candidate, sizeof candidate, "%s/%s%s", dir, s->tail[t],
						 s->suffix[x]);
				if (n > 0 && (size_t)n < sizeof candidate)
					try_path(s, candidate);
			}
}

/* `rel` without its leading "./" and "../". */
static const char *strip_up(const char *rel)
{
	for (;;) {
		if (!strncmp(rel, "./", 2))
			rel += 2;
		else if (!strncmp(rel, "../", 3))
			rel += 3;
		else
			return rel;
	}
}

void lbs_datapath_find(const char *rel, const char *base_dir, const char *kind, lbs_datapath *out)
{
	*out = (lbs_datapath){ .found = false };
	search s = { .out = out, .suffix = { "", NULL } };
	char first[LBS_DATAPATH_MAX];
	if (rel[0] == '/' || !base_dir || !*base_dir)
		snprintf(first, sizeof first, "%s", rel);
	else
		snprintf(first, sizeof first, "%s%s%s", base_dir,
			 base_dir[strlen(base_dir) - 1] == '/' ? "" : "/", rel);
	try_path(&s, first);
	if (rel[0] == '/' || out->found)
		return;
	const char *q = strip_up(rel);
	char under_kind[LBS_DATAPATH_MAX];
	s.tail[0] = q;
	if (kind && *kind && strncmp(q, kind, strlen(kind)) != 0) {
		snprintf(under_kind, sizeof under_kind, "%s/%s", kind, q);
		s.tail[1] = under_kind;
	}
	lbs_datapath_each(try_dir, &s);
}

void lbs_datapath_scenario(const char *name, lbs_datapath *out)
{
	*out = (lbs_datapath){ .found = false };
	search s = { .out = out, .suffix = { "", NULL } };
	try_path(&s, name);
	if (name[0] == '/' || out->found)
		return;
	char under[LBS_DATAPATH_MAX];
	snprintf(under, sizeof under, "scenarios/%s", strip_up(name));
	s.tail[0] = under;
	size_t n = strlen(name);
	s.suffix[1] = n >= 4 && !strcmp(name + n - 4, ".ini") ? NULL : ".ini";
	lbs_datapath_each(try_dir, &s);
	if (!out->found)
		snprintf(out->path, sizeof out->path, "%s", name);
}

void lbs_datapath_explain(lbs_error *err, const lbs_datapath *dp)
{
	if (!err || dp->found)
		return;
	size_t n = strlen(err->msg);
	snprintf(err->msg + n, sizeof err->msg - n, " (looked for it in: %s)", dp->looked);
}
