/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "sim/plugin.h"

#include <dlfcn.h>
#include <link.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- permission (doc/extending.md, "What a plugin is trusted with") -- */

static int permission; /* 0: LBSIM_PLUGINS decides; 1: allowed; -1: never (listing) */

void lbs_plugins_permit(int mode)
{
	permission = mode;
}

bool lbs_plugins_allowed(void)
{
	if (permission)
		return permission > 0;
	const char *e = getenv("LBSIM_PLUGINS");
	return e && !strcmp(e, "1");
}

bool lbs_plugins_listing(void)
{
	return permission < 0;
}

/* ---- what the loaded object occupies ---------------------------------- */

#define MAX_SEGMENTS 16

typedef struct segment {
	uintptr_t lo, hi; /* [lo, hi) */
	bool exec, read;
} segment;

typedef struct extent {
	uintptr_t base;
	const char *name;
	segment seg[MAX_SEGMENTS];
	size_t n;
	bool found;
} extent;

static int on_object(struct dl_phdr_info *info, size_t size, void *ctx)
{
	(void)size;
	extent *x = ctx;
	if (info->dlpi_addr != x->base || !info->dlpi_name || strcmp(info->dlpi_name, x->name))
		return 0;
	x->found = true;
	for (size_t i = 0; i < info->dlpi_phnum && x->n < MAX_SEGMENTS; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];
		if (ph->p_type != PT_LOAD || !(ph->p_flags & (PF_R | PF_X)))
			continue;
		uintptr_t lo = x->base + ph->p_vaddr;
		x->seg[x->n++] = (segment){ lo, lo + ph->p_memsz, (ph->p_flags & PF_X) != 0,
					    (ph->p_flags & PF_R) != 0 };
	}
	return 1;
}

/* The segment of x holding [p, p + len), or NULL; readable ones only
 * unless `code`. */
static const segment *in_segment(const extent *x, const void *p, size_t len, bool code)
{
	uintptr_t a = (uintptr_t)p;
	for (size_t i = 0; i < x->n; i++)
		if ((code ? x->seg[i].exec : x->seg[i].read) && a >= x->seg[i].lo && a <= x->seg[i].hi && len <= x->seg[i].hi - a)
			return &x->seg[i];
	return NULL;
}

static const segment *holding(const extent *x, const void *p, size_t len)
{
	return in_segment(x, p, len, false);
}

static bool is_code(const extent *x, const void *fn)
{
	return in_segment(x, fn, 1, true) != NULL;
}

/* A string within the object, NUL-terminated within its segment and at
 * most max - 1 characters long. */
static bool is_string(const extent *x, const char *s, size_t max)
{
	const segment *g = holding(x, s, 1);
	if (!g)
		return false;
	size_t room = g->hi - (uintptr_t)s;
	return memchr(s, '\0', room < max ? room : max) != NULL;
}

/* A name a scenario can give: what [policy.NAME] and `name =` accept. */
static bool valid_name(const char *s)
{
	size_t n = 0;
	for (; s[n]; n++)
		if (!((s[n] >= 'a' && s[n] <= 'z') || (s[n] >= 'A' && s[n] <= 'Z') ||
		      (s[n] >= '0' && s[n] <= '9') || s[n] == '-' || s[n] == '_'))
			return false;
	return n > 0 && n < 64;
}

/* The largest options struct a plugin may declare. */
#define MAX_OPTIONS_SIZE (1u << 20)
#define MAX_OPTIONS 256

static size_t type_size(lbs_type t)
{
	switch (t) {
	case LBS_T_INT: return sizeof(int64_t);
	case LBS_T_REAL: case LBS_T_TIME: case LBS_T_BYTES: case LBS_T_BANDWIDTH: return sizeof(double);
	case LBS_T_ENUM: return sizeof(int);
	case LBS_T_STRING: return LBS_VALUE_MAX;
	}
	return 0;
}

/* The option table: inside the object, each row's strings terminated and
 * its value within the options struct. NULL, or what is wrong. */
static const char *check_options(const extent *x, const lbs_key_spec *o, size_t n, size_t size,
				 char *buf, size_t len)
{
	if (!n)
		return NULL;
	if (n > MAX_OPTIONS)
		return lbs_fmt(buf, len, "n_options is %zu (at most %d)", n, MAX_OPTIONS);
	if (size > MAX_OPTIONS_SIZE)
		return lbs_fmt(buf, len, "options_size is %zu (at most %u)", size, MAX_OPTIONS_SIZE);
	if (!holding(x, o, n * sizeof *o))
		return "options does not point to n_options rows inside the plugin";
	for (size_t i = 0; i < n; i++) {
		const lbs_key_spec *k = &o[i];
		size_t ts = type_size(k->type);
		if (!k->name || !is_string(x, k->name, LBS_NAME_MAX) || !valid_name(k->name))
			return lbs_fmt(buf, len, "options[%zu]: its name is not a string of letters, digits, "
				       "'-', '_' inside the plugin", i);
		if (!ts || k->offset > size || ts > size - k->offset)
			return lbs_fmt(buf, len, "options[%zu] (%s): its type or offset puts the value outside "
				       "the options struct (options_size %zu)", i, k->name, size);
		const char *const strs[] = { k->def, k->choices, k->when, k->doc };
		for (size_t j = 0; j < sizeof strs / sizeof *strs; j++)
			if (strs[j] && !is_string(x, strs[j], 65536))
				return lbs_fmt(buf, len, "options[%zu] (%s): a string of its row is not "
					       "inside the plugin", i, k->name);
		if (k->type == LBS_T_ENUM && !k->choices)
			return lbs_fmt(buf, len, "options[%zu] (%s): an enum without choices", i, k->name);
	}
	return NULL;
}

/* The built-in kinds' tables described for lbs_plugin_open_kind. */
static void describe_policy(const void *ops, lbs_plugin_desc *d)
{
	const lbs_policy_ops *o = ops;
	*d = (lbs_plugin_desc){ .name = o->name, .summary = o->summary, .options = o->options,
				.n_options = o->n_options, .options_size = o->options_size,
				.required = o->create && o->plan && o->destroy,
				.fns = { (const void *)o->create, (const void *)o->plan, (const void *)o->vars,
					 (const void *)o->predictions, (const void *)o->steal,
					 (const void *)o->destroy },
				.n_fns = 6 };
}

static void describe_predictor(const void *ops, lbs_plugin_desc *d)
{
	const lbs_predictor_ops *o = ops;
	*d = (lbs_plugin_desc){ .name = o->name, .summary = o->summary, .options = o->options,
				.n_options = o->n_options, .options_size = o->options_size,
				.required = o->create && o->observe && o->predict && o->destroy,
				.fns = { (const void *)o->create, (const void *)o->observe,
					 (const void *)o->predict, (const void *)o->vars, (const void *)o->destroy },
				.n_fns = 5 };
}

lbs_status lbs_plugin_open(lbs_plugin *p, const char *path, bool predictor, lbs_error *err)
{
	const void *ops = NULL;
	lbs_plugin_kind kind = predictor
		? (lbs_plugin_kind){ "predictor", LBS_PREDICTOR_PLUGIN_SYMBOL, sizeof(lbs_predictor_ops),
				     describe_predictor, "create, observe, predict and destroy" }
		: (lbs_plugin_kind){ "policy", LBS_POLICY_PLUGIN_SYMBOL, sizeof(lbs_policy_ops), describe_policy,
				     "create, plan and destroy" };
	lbs_status st = lbs_plugin_open_kind(p, path, &kind, &ops, err);
	if (st != LBS_OK)
		return st;
	lbs_plugin_desc d;
	kind.describe(ops, &d);
	if (predictor) {
		if (lbs_predictor_find(d.name))
			st = lbs_error_set(err, LBS_EINPUT, "%s: predictor '%s' is the name of a built-in "
					   "predictor: give the plugin its own", path, d.name);
		p->predictor = ops;
	} else {
		if (lbs_policy_find(d.name))
			st = lbs_error_set(err, LBS_EINPUT, "%s: policy '%s' is the name of a built-in "
					   "policy: give the plugin its own", path, d.name);
		p->policy = ops;
	}
	if (st != LBS_OK)
		lbs_plugin_close(p);
	return st;
}

lbs_status lbs_plugin_open_kind(lbs_plugin *p, const char *path, const lbs_plugin_kind *k, const void **out,
				lbs_error *err)
{
	*p = (lbs_plugin){ 0 };
	*out = NULL;
	snprintf(p->path, sizeof p->path, "%s", path);
	const char *kind = k->kind;
	const char *table = k->symbol;
	if (!lbs_plugins_allowed())
		return lbs_error_set(err, LBS_EINPUT, "%s", lbs_plugins_listing()
				     ? "a scenario that names a plugin is not read while listing: plugins never "
				       "load there (run the sweep itself with --plugins)"
				     : "plugins are not loaded unless the command line allows them: a plugin "
				       "runs as your own code; give --plugins (or set LBSIM_PLUGINS=1) to load it");
	dlerror();
	/* RTLD_LOCAL: two plugins' own symbols never meet; RTLD_NOW: a symbol
	 * of lbsim's that this lbsim lacks fails here, not mid-run. */
	if (!(p->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
		const char *why = dlerror();
		return lbs_error_set(err, LBS_EINPUT, "cannot load %s plugin %s: %s", kind, path,
				     why ? why : "unknown error");
	}
	/* What the object occupies: its symbols, table and functions must lie
	 * there (a table of garbage pointers is refused, not called). */
	extent x = { 0 };
	struct link_map *lm = NULL;
	if (dlinfo(p->handle, RTLD_DI_LINKMAP, &lm) == 0 && lm) {
		x.base = lm->l_addr;
		x.name = lm->l_name;
		dl_iterate_phdr(on_object, &x);
	}
	lbs_status st = LBS_OK;
	if (!x.found || !x.n) {
		st = lbs_error_set(err, LBS_EINPUT, "%s: cannot find the loaded object's segments", path);
		lbs_plugin_close(p);
		return st;
	}
	const unsigned *abi = dlsym(p->handle, LBS_PLUGIN_ABI_SYMBOL);
	if (!abi)
		st = lbs_error_set(err, LBS_EINPUT, "%s exports no %s: not an lbsim plugin (see "
				   "doc/extending.md)", path, LBS_PLUGIN_ABI_SYMBOL);
	else if (!holding(&x, abi, sizeof *abi))
		st = lbs_error_set(err, LBS_EINPUT, "%s: %s is not defined in the plugin itself", path,
				   LBS_PLUGIN_ABI_SYMBOL);
	else if (*abi != LBS_PLUGIN_ABI)
		st = lbs_error_set(err, LBS_EINPUT, "%s was built for plugin ABI %u, this lbsim has %u: "
				   "rebuild it against this lbsim's headers", path, *abi, LBS_PLUGIN_ABI);
	const void *ops = st == LBS_OK ? dlsym(p->handle, table) : NULL;
	if (st == LBS_OK && !ops)
		st = lbs_error_set(err, LBS_EINPUT, "%s exports no %s (a %s plugin's lbs_%s_ops table)", path,
				   table, kind, kind);
	if (st == LBS_OK && !holding(&x, ops, k->size))
		st = lbs_error_set(err, LBS_EINPUT, "%s: %s is not a whole table inside the plugin", path, table);
	const char *why = NULL;
	char buf[LBS_ERROR_MAX / 2];
	if (st == LBS_OK) {
		lbs_plugin_desc d;
		k->describe(ops, &d);
		if (!d.name || !is_string(&x, d.name, 64) || !valid_name(d.name) || !d.required ||
		    (d.n_options && !d.options))
			st = lbs_error_set(err, LBS_EINPUT, "%s: %s needs a name (letters, digits, '-', '_') and %s "
					   "(and options when n_options > 0)", path, table, k->needs);
		for (size_t i = 0; st == LBS_OK && i < d.n_fns; i++)
			if (d.fns[i] && !is_code(&x, d.fns[i]))
				st = lbs_error_set(err, LBS_EINPUT, "%s: %s: a function pointer (%p) does not "
						   "point into the plugin's code", path, table, d.fns[i]);
		if (st == LBS_OK && d.summary && !is_string(&x, d.summary, 65536))
			st = lbs_error_set(err, LBS_EINPUT, "%s: %s: its summary is not a string inside the plugin",
					   path, table);
		if (st == LBS_OK &&
		    (why = check_options(&x, d.options, d.n_options, d.options_size, buf, sizeof buf)))
			st = lbs_error_set(err, LBS_EINPUT, "%s: %s: %s", path, table, why);
	}
	if (st != LBS_OK) {
		lbs_plugin_close(p);
		return st;
	}
	*out = ops;
	return LBS_OK;
}

void lbs_plugin_close(lbs_plugin *p)
{
	if (p->handle)
		dlclose(p->handle);
	p->handle = NULL;
	p->policy = NULL;
	p->predictor = NULL;
	p->other = NULL;
}
