/* SPDX-License-Identifier: GPL-3.0-or-later */
/* `lbsim scenarios`: what `lbsim run NAME` can find. Each folder searched
 * (util/datapath.h: LBSIM_PATH, then the installed one) is listed with its
 * scenarios/ tree: NAME (the path below scenarios/ without .ini), whether
 * it is a scenario or a sweep, and its [run] description (a sweep: its
 * first comment). A name found twice runs the first, as listed. */
#include "cli/scenarios_cmd.h"

#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "util/datapath.h"
#include "util/error.h"

typedef struct listing {
	char **names; /* relative to scenarios/, with .ini */
	size_t n, cap;
	bool oom;
} listing;

static void add_name(listing *l, const char *name)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 32;
		char **p = realloc(l->names, cap * sizeof *p);
		if (!p) {
			l->oom = true;
			return;
		}
		l->names = p;
		l->cap = cap;
	}
	if (!(l->names[l->n] = strdup(name)))
		l->oom = true;
	else
		l->n++;
}

static void add_cb(void *ctx, const char *rel)
{
	add_name(ctx, rel);
}

static int by_name(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Whether the file is a sweep, and its description, from its text. */
static bool describe(const char *path, char *desc, size_t len)
{
	FILE *f = fopen(path, "r");
	bool sweep = false;
	char line[1024], comment[1024] = "";
	bool in_comment = false, comment_done = false;
	desc[0] = '\0';
	while (f && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\r\n")] = '\0';
		const char *s = line + strspn(line, " \t");
		bool c = *s == ';' && !strstr(s, "SPDX-License-Identifier");
		if (in_comment && !c)
			comment_done = true; /* the first comment paragraph ended */
		in_comment = c && !comment_done;
		if (!strncmp(s, "[sweep]", 7))
			sweep = true;
		else if (in_comment) {
			/* the first comment paragraph, joined */
			const char *t = s + 1 + strspn(s + 1, " ");
			size_t n = strlen(comment);
			if (*t)
				snprintf(comment + n, sizeof comment - n, "%s%s", n ? " " : "", t);
			else if (n)
				comment_done = true;
		} else if (!*desc && !strncmp(s, "description", 11) && strchr(s, '=')) {
			const char *v = strchr(s, '=') + 1;
			lbs_fmt(desc, len, "%s", v + strspn(v, " \t"));
		}
	}
	if (f)
		fclose(f);
	if (sweep || !*desc) {
		/* Its first sentence: up to the first ". " (or ": " after 30
		 * characters), whole. */
		char *end = strstr(comment, ". ");
		if (end)
			end[1] = '\0';
		if (strlen(comment) > 110 && (end = strstr(comment + 30, ": ")))
			end[0] = '\0';
		lbs_fmt(desc, len, "%s", comment);
	}
	return sweep;
}

typedef struct shown {
	size_t folders; /* with at least one file */
	bool oom;
	bool profiles;  /* --profiles: list profiles/, not scenarios/ */
} shown;

/* A profile's device, model and how it was made, from its text. */
static void describe_profile(const char *path, char *desc, size_t len)
{
	FILE *f = fopen(path, "r");
	char line[1024], device[256] = "?", model[256] = "?", kind[64] = "?", cost[64] = "?";
	while (f && fgets(line, sizeof line, f)) {
		line[strcspn(line, "\r\n")] = '\0';
		const char *v = strchr(line, '=');
		if (!v)
			continue;
		v++;
		v += strspn(v, " \t");
		if (!strncmp(line, "device ", 7) || !strncmp(line, "device=", 7))
			lbs_fmt(device, sizeof device, "%s", v);
		else if (!strncmp(line, "model ", 6) || !strncmp(line, "model=", 6))
			lbs_fmt(model, sizeof model, "%s", v);
		else if (!strncmp(line, "kind ", 5) || !strncmp(line, "kind=", 5))
			lbs_fmt(kind, sizeof kind, "%s", v);
		else if (!strncmp(line, "cost ", 5) || !strncmp(line, "cost=", 5))
			lbs_fmt(cost, sizeof cost, "%s", v);
	}
	if (f)
		fclose(f);
	lbs_fmt(desc, len, "%s; %s; %s cost, %s", device, model, cost, kind);
}

static void list_folder(void *ctx, const char *dir)
{
	shown *s = ctx;
	char root[LBS_DATAPATH_MAX];
	const char *kind = s->profiles ? "profiles" : "scenarios";
	lbs_fmt(root, sizeof root, "%s/%s", dir, kind);
	listing l = { 0 };
	lbs_datapath_walk(dir, kind, add_cb, &l);
	s->oom |= l.oom;
	if (l.n) {
		qsort(l.names, l.n, sizeof *l.names, by_name);
		printf("%s%s:\n", s->folders++ ? "\n" : "", root);
	}
	for (size_t i = 0; i < l.n; i++) {
		char path[LBS_DATAPATH_MAX], desc[1024];
		lbs_fmt(path, sizeof path, "%s/%s", root, l.names[i]);
		if (s->profiles) {
			describe_profile(path, desc, sizeof desc);
			printf("  %-36s %s\n", l.names[i], desc);
			free(l.names[i]);
			continue;
		}
		bool sweep = describe(path, desc, sizeof desc);
		l.names[i][strlen(l.names[i]) - 4] = '\0';
		printf("  %-36s %-8s %s\n", l.names[i], sweep ? "sweep" : "scenario", desc);
		free(l.names[i]);
	}
	free(l.names);
}

int lbs_scenarios_command(int argc, char **argv)
{
	shown s = { 0 };
	if (argc == 2 && !strcmp(argv[1], "--profiles"))
		s.profiles = true;
	else if (argc > 1) {
		bool help = !strcmp(argv[1], "--help") || !strcmp(argv[1], "-h");
		fprintf(help ? stdout : stderr,
			"Usage: lbsim scenarios [--profiles]\n\n"
			"Lists the scenarios and sweeps under scenarios/ of each folder of LBSIM_PATH\n"
			"(colon-separated), of the source tree when run from a build tree, and of\n"
			"%s, by the name that `lbsim run NAME` and `lbsim sweep NAME`\n"
			"take. --profiles lists the cost profiles under profiles/ of the same folders\n"
			"(what a scenario's `profile = NAME` finds), with their device, model, cost\n"
			"model and how each was made (measured here, fitted to a published table).\n",
			lbs_datapath_installed());
		return help ? 0 : 2;
	}
	lbs_datapath_each(list_folder, &s);
	if (s.oom) {
		fprintf(stderr, "lbsim scenarios: out of memory\n");
		return 5;
	}
	if (!s.folders)
		fprintf(stderr, "lbsim scenarios: none found: no scenarios/ folder in LBSIM_PATH or %s "
			"(is lbsim installed? `make install`)\n", lbs_datapath_installed());
	return 0;
}
