/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "util/datapath.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/suggest.h"

#ifndef LBS_PKGDATADIR
#error "LBS_PKGDATADIR (the installed data folder) must be defined by the build"
#endif

const char *lbs_datapath_installed(void)
{
	return LBS_PKGDATADIR;
}

const char *lbs_datapath_source_tree(void)
{
#if defined(LBS_SOURCE_DIR) && defined(LBS_BUILD_DIR)
	/* The program running is the build tree's own when /proc/self/exe
	 * lies below the build folder (`./lbsim` in a checkout, `make
	 * check`), not an installed copy. */
	static int known = -1;
	if (known < 0) {
		char exe[LBS_DATAPATH_MAX];
		ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
		size_t b = strlen(LBS_BUILD_DIR);
		known = n > 0 && (size_t)n > b && !strncmp(exe, LBS_BUILD_DIR, b) && exe[b] == '/' &&
			*LBS_SOURCE_DIR;
	}
	return known ? LBS_SOURCE_DIR : NULL;
#else
	return NULL;
#endif
}

/* Whether dir is (the same folder as) one of LBSIM_PATH's. */
static bool in_path(const char *dir)
{
	char *want = realpath(dir, NULL);
	bool found = false;
	const char *p = getenv("LBSIM_PATH");
	char d[LBS_DATAPATH_MAX];
	while (want && p && *p && !found) {
		size_t n = strcspn(p, ":");
		if (n > 0 && n < sizeof d) {
			memcpy(d, p, n);
			d[n] = '\0';
			char *got = realpath(d, NULL);
			found = got && !strcmp(got, want);
			free(got);
		}
		p += n + (p[n] == ':');
	}
	free(want);
	return found;
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
	const char *tree = lbs_datapath_source_tree();
	if (tree && !in_path(tree))
		fn(ctx, tree);
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

/* Every *.ini below root/rel, depth first. */
static void walk(const char *root, const char *rel, int depth, void (*fn)(void *ctx, const char *rel), void *ctx)
{
	char dir[LBS_DATAPATH_MAX];
	lbs_fmt(dir, sizeof dir, "%s%s%s", root, *rel ? "/" : "", rel);
	DIR *d = depth < 8 ? opendir(dir) : NULL;
	if (!d)
		return;
	struct dirent *e;
	while ((e = readdir(d))) {
		if (e->d_name[0] == '.')
			continue;
		char sub[LBS_DATAPATH_MAX], full[LBS_DATAPATH_MAX];
		lbs_fmt(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
		lbs_fmt(full, sizeof full, "%s/%s", root, sub);
		struct stat sb;
		if (stat(full, &sb) != 0)
			continue;
		size_t n = strlen(e->d_name);
		if (S_ISDIR(sb.st_mode))
			walk(root, sub, depth + 1, fn, ctx);
		else if (S_ISREG(sb.st_mode) && n > 4 && !strcmp(e->d_name + n - 4, ".ini"))
			fn(ctx, sub);
	}
	closedir(d);
}

void lbs_datapath_walk(const char *dir, const char *kind, void (*fn)(void *ctx, const char *rel), void *ctx)
{
	char root[LBS_DATAPATH_MAX];
	lbs_fmt(root, sizeof root, "%s/%s", dir, kind);
	walk(root, "", 0, fn, ctx);
}

void lbs_datapath_walk_scenarios(const char *dir, void (*fn)(void *ctx, const char *rel), void *ctx)
{
	lbs_datapath_walk(dir, "scenarios", fn, ctx);
}

typedef struct nearest {
	char want[LBS_DATAPATH_MAX];
	char best[LBS_DATAPATH_MAX];
	size_t best_d;
} nearest;

static void near_cb(void *ctx, const char *rel)
{
	nearest *n = ctx;
	char name[LBS_DATAPATH_MAX];
	lbs_fmt(name, sizeof name, "%s", rel);
	name[strlen(name) - 4] = '\0'; /* without .ini */
	const char *one[] = { name };
	if (lbs_suggest(n->want, one, 1)) {
		size_t d = lbs_edit_distance(n->want, name);
		if (d < n->best_d) {
			n->best_d = d;
			memcpy(n->best, name, sizeof name);
		}
	}
}

static void near_dir(void *ctx, const char *dir)
{
	lbs_datapath_walk_scenarios(dir, near_cb, ctx);
}

const char *lbs_datapath_suggest_scenario(const char *name, char *out, size_t len)
{
	nearest n = { .best_d = (size_t)-1 };
	const char *base = !strncmp(name, "scenarios/", 10) ? name + 10 : name;
	lbs_fmt(n.want, sizeof n.want, "%s", base);
	size_t k = strlen(n.want);
	if (k > 4 && !strcmp(n.want + k - 4, ".ini"))
		n.want[k - 4] = '\0';
	lbs_datapath_each(near_dir, &n);
	return n.best_d != (size_t)-1 ? lbs_fmt(out, len, "%s", n.best) : NULL;
}

lbs_status lbs_datapath_check_named(const char *name, const lbs_datapath *file, lbs_error *err)
{
	if (!file->found) {
		char near[LBS_DATAPATH_MAX];
		const char *best = name[0] == '/' ? NULL : lbs_datapath_suggest_scenario(name, near, sizeof near);
		lbs_error_set(err, LBS_EINPUT, "%s: no such file%s%s%s", name,
			      name[0] == '/' ? "" : ", nor a scenario of that name (looked in: ",
			      name[0] == '/' ? "" : file->looked, name[0] == '/' ? "" : ")");
		size_t n = strlen(err->msg);
		if (best)
			snprintf(err->msg + n, sizeof err->msg - n, "; did you mean %s? (lbsim scenarios lists them)",
				 best);
		else if (name[0] != '/')
			snprintf(err->msg + n, sizeof err->msg - n, " (lbsim scenarios lists the names)");
		return LBS_EINPUT;
	}
	FILE *f = fopen(file->path, "rb");
	char head[16] = "";
	size_t got = f ? fread(head, 1, sizeof head, f) : 0;
	if (f)
		fclose(f);
	if (got == 16 && !memcmp(head, "SQLite format 3", 16))
		return lbs_error_set(err, LBS_EUSAGE, "%s is a results database, not a scenario: read it with "
				     "lbsim report, plot or export", name);
	return LBS_OK;
}

void lbs_path_folder(const char *path, char *buf, size_t len)
{
	snprintf(buf, len, "%s", path);
	char *slash = strrchr(buf, '/');
	if (slash)
		*(slash == buf ? slash + 1 : slash) = '\0';
	else
		snprintf(buf, len, ".");
}
