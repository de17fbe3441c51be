/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "sim/plugin.h"

#include <dlfcn.h>
#include <stdio.h>
#include <string.h>

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

lbs_status lbs_plugin_open(lbs_plugin *p, const char *path, bool predictor, lbs_error *err)
{
	*p = (lbs_plugin){ 0 };
	snprintf(p->path, sizeof p->path, "%s", path);
	const char *kind = predictor ? "predictor" : "policy";
	const char *table = predictor ? LBS_PREDICTOR_PLUGIN_SYMBOL : LBS_POLICY_PLUGIN_SYMBOL;
	dlerror();
	/* RTLD_LOCAL: two plugins' own symbols never meet; RTLD_NOW: a symbol
	 * of lbsim's that this lbsim lacks fails here, not mid-run. */
	if (!(p->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
		const char *why = dlerror();
		return lbs_error_set(err, LBS_EINPUT, "cannot load %s plugin %s: %s", kind, path,
				     why ? why : "unknown error");
	}
	const unsigned *abi = dlsym(p->handle, LBS_PLUGIN_ABI_SYMBOL);
	lbs_status st = LBS_OK;
	if (!abi)
		st = lbs_error_set(err, LBS_EINPUT, "%s exports no %s: not an lbsim plugin (see "
				   "doc/extending.md)", path, LBS_PLUGIN_ABI_SYMBOL);
	else if (*abi != LBS_PLUGIN_ABI)
		st = lbs_error_set(err, LBS_EINPUT, "%s was built for plugin ABI %u, this lbsim has %u: "
				   "rebuild it against this lbsim's headers", path, *abi, LBS_PLUGIN_ABI);
	const void *ops = st == LBS_OK ? dlsym(p->handle, table) : NULL;
	if (st == LBS_OK && !ops)
		st = lbs_error_set(err, LBS_EINPUT, "%s exports no %s (a %s plugin's lbs_%s_ops table)", path,
				   table, kind, kind);
	if (st == LBS_OK && predictor) {
		const lbs_predictor_ops *o = ops;
		if (!o->name || !valid_name(o->name) || !o->create || !o->observe || !o->predict || !o->destroy ||
		    (o->n_options && !o->options))
			st = lbs_error_set(err, LBS_EINPUT, "%s: %s needs a name (letters, digits, '-', '_') "
					   "and create, observe, predict and destroy (and options when "
					   "n_options > 0)", path, table);
		else if (lbs_predictor_find(o->name))
			st = lbs_error_set(err, LBS_EINPUT, "%s: predictor '%s' is the name of a built-in "
					   "predictor: give the plugin its own", path, o->name);
		p->predictor = o;
	} else if (st == LBS_OK) {
		const lbs_policy_ops *o = ops;
		if (!o->name || !valid_name(o->name) || !o->create || !o->plan || !o->destroy ||
		    (o->n_options && !o->options))
			st = lbs_error_set(err, LBS_EINPUT, "%s: %s needs a name (letters, digits, '-', '_') "
					   "and create, plan and destroy (and options when n_options > 0)",
					   path, table);
		else if (lbs_policy_find(o->name))
			st = lbs_error_set(err, LBS_EINPUT, "%s: policy '%s' is the name of a built-in "
					   "policy: give the plugin its own", path, o->name);
		p->policy = o;
	}
	if (st != LBS_OK)
		lbs_plugin_close(p);
	return st;
}

void lbs_plugin_close(lbs_plugin *p)
{
	if (p->handle)
		dlclose(p->handle);
	p->handle = NULL;
	p->policy = NULL;
	p->predictor = NULL;
}
