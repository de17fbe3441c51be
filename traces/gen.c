/* SPDX-License-Identifier: GPL-3.0-or-later */
/* [generator.NAME] sections: their keys, their checks, and building the
 * sources they describe for each worker and for the network. */
#include "traces/gen.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "sim/rng.h"
#include "sim/scenario.h"

#define REQUIRED NULL
#define UNSET ""
#define BIG 1e14 /* bytes/s or bytes: 100 TB(/s) */

#define G(f) offsetof(lbs_gen_spec, f)
const lbs_key_spec lbs_gen_keys[] = {
	{ "kind", LBS_T_ENUM, G(kind), REQUIRED, 0, 0, 0, LBS_GEN_CHOICES, NULL,
	  "`cpu_credits`: EC2 burstable CPU credits (t2, t3); `background`: a co-located job "
	  "switching on and off; `network_bucket`: EC2's network token bucket (c5), on the "
	  "aggregation's bandwidth; `dbs_disturbance`: the DBS authors' injected delays "
	  "(doc/generators.md)" },
	{ "workers", LBS_T_STRING, G(workers), REQUIRED, 0, 0, 0, NULL, NULL,
	  "the worker groups it applies to, `GROUP[,GROUP...]` (names of [workers.NAME] sections); "
	  "for `network_bucket`, the groups whose NICs have the bucket" },
	{ "instance_type", LBS_T_STRING, G(instance_type), REQUIRED, 0, 0, 0, NULL,
	  "kind=cpu_credits|network_bucket",
	  "EC2 instance type: t2.nano, t2.micro, t2.small, t2.medium, t2.large, t2.xlarge, "
	  "t2.2xlarge, t3.nano, t3.micro, t3.small, t3.medium, t3.large, t3.xlarge, t3.2xlarge "
	  "(cpu_credits); c5.large, c5.xlarge, c5.2xlarge, c5.4xlarge (network_bucket)" },
	{ "initial_credits", LBS_T_REAL, G(initial_credits), "0", 0, 1e5, 0, NULL, "kind=cpu_credits",
	  "earned CPU credits at time 0 (a freshly launched instance has none), at most the "
	  "type's limit (24 hours of earnings)" },
	{ "launch_credits", LBS_T_REAL, G(launch_credits), UNSET, 0, 1e5, 0, NULL, "kind=cpu_credits",
	  "launch credits at time 0, spent before earned ones; unset: the type's (t2: 30 per "
	  "vCPU; t3: none)" },
	{ "on_mean", LBS_T_TIME, G(on_mean_s), REQUIRED, 0, 1e9, LBS_K_MIN_OPEN, NULL,
	  "kind=background", "mean length of the job's on periods (exponentially distributed)" },
	{ "off_mean", LBS_T_TIME, G(off_mean_s), REQUIRED, 0, 1e9, LBS_K_MIN_OPEN, NULL,
	  "kind=background", "mean length of its off periods (exponentially distributed)" },
	{ "load", LBS_T_REAL, G(load), REQUIRED, 0, 0.99, 0, NULL, "kind=background",
	  "share of the worker's CPU the job takes while on: the worker runs at 1 - load" },
	{ "memory", LBS_T_REAL, G(memory), UNSET, 0, 1, 0, NULL, "kind=background",
	  "share of the machine's memory the job holds while on (its memory reading); unset: "
	  "`load`" },
	{ "burst_rate", LBS_T_BANDWIDTH, G(burst_Bps), UNSET, 0, BIG, LBS_K_MIN_OPEN, NULL,
	  "kind=network_bucket",
	  "rate while the bucket holds tokens; unset: the type's fitted burst (about 9.69 Gbit/s; "
	  "some runs burst at about 5.02 Gbit/s)" },
	{ "baseline_rate", LBS_T_BANDWIDTH, G(baseline_Bps), UNSET, 0, BIG, LBS_K_MIN_OPEN, NULL,
	  "kind=network_bucket", "rate once the bucket is empty; unset: the type's fitted baseline" },
	{ "bucket_size", LBS_T_BYTES, G(bucket_bytes), UNSET, 0, BIG, LBS_K_MIN_OPEN, NULL,
	  "kind=network_bucket", "tokens of a full bucket; unset: the type's fitted size" },
	{ "initial_fill", LBS_T_REAL, G(initial_fill), "100%", 0, 1, 0, NULL, "kind=network_bucket",
	  "share of the bucket full at time 0 (fresh instances: 100%)" },
	{ "probability", LBS_T_REAL, G(probability), "0.1", 0, 1, 0, NULL, "kind=dbs_disturbance",
	  "chance, per worker and epoch, that a worker not slowed starts a slow phase" },
	{ "delay_min", LBS_T_TIME, G(delay_min_s), "5 s", 0, 1e6, 0, NULL, "kind=dbs_disturbance",
	  "least delay per epoch of a slow phase; the delay is a whole number of seconds, as "
	  "randint(5, 10)" },
	{ "delay_max", LBS_T_TIME, G(delay_max_s), "10 s", 0, 1e6, 0, NULL, "kind=dbs_disturbance",
	  "largest delay per epoch of a slow phase" },
	{ "epochs_min", LBS_T_INT, G(epochs_min), "4", 0, 1e6, 0, NULL, "kind=dbs_disturbance",
	  "least number of epochs a slow phase lasts after the one it starts in (randint(4, 20))" },
	{ "epochs_max", LBS_T_INT, G(epochs_max), "20", 0, 1e6, 0, NULL, "kind=dbs_disturbance",
	  "largest number of epochs a slow phase lasts after the one it starts in" },
};
#undef G
_Static_assert(sizeof lbs_gen_keys / sizeof lbs_gen_keys[0] == LBS_GEN_NKEYS,
	       "LBS_GEN_NKEYS is the number of generator keys");

/* Conversions of the fitted table (Gbit/s, Gbit) to base units. */
#define GBIT_BYTES 1.25e8

static int key(const char *name) { return lbs_keys_find(lbs_gen_keys, LBS_GEN_NKEYS, name); }

static lbs_status key_error(lbs_error *err, const lbs_gen_spec *g, const lbs_origin *at,
			    const char *name, const char *msg)
{
	char section[LBS_NAME_MAX + 16], label[LBS_ERROR_MAX / 2];
	snprintf(section, sizeof section, "generator.%s", g->name);
	lbs_origin_format(at && at->file ? at : &g->at, section, name, label, sizeof label);
	return lbs_error_set(err, LBS_EINPUT, "%s: %s", label, msg);
}

/* "a, b, c": the names of a type table, for messages. */
static void credit_names(char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (const lbs_credit_type *t = lbs_credit_types; t->name && used < len; t++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", t->name);
}

static void netbucket_names(char *buf, size_t len)
{
	size_t used = 0;
	buf[0] = '\0';
	for (const lbs_netbucket_type *t = lbs_netbucket_types; t->name && used < len; t++)
		used += (size_t)snprintf(buf + used, len - used, "%s%s", used ? ", " : "", t->name);
}

lbs_status lbs_gen_check(lbs_gen_spec *g, uint64_t present, const lbs_origin *o, lbs_error *err)
{
	char msg[LBS_ERROR_MAX / 2], names[256];
	g->workers_at = o[key("workers")];
	const lbs_origin *type_at = &o[key("instance_type")];
	switch (g->kind) {
	case LBS_GEN_CPU_CREDITS: {
		const lbs_credit_type *t = lbs_credit_type_find(g->instance_type);
		if (!t) {
			credit_names(names, sizeof names);
			lbs_fmt(msg, sizeof msg, "'%s' is not a burstable type with CPU credits (expected one of %s)",
				g->instance_type, names);
			return key_error(err, g, type_at, "instance_type", msg);
		}
		if (!(present >> key("launch_credits") & 1))
			g->launch_credits = t->launch;
		if (g->initial_credits > t->max_earned) {
			lbs_fmt(msg, sizeof msg, "%g credits exceed the %s's limit of %g earned credits",
				g->initial_credits, t->name, t->max_earned);
			return key_error(err, g, &o[key("initial_credits")], "initial_credits", msg);
		}
		break;
	}
	case LBS_GEN_BACKGROUND:
		if (!(present >> key("memory") & 1))
			g->memory = g->load;
		break;
	case LBS_GEN_NETWORK_BUCKET: {
		const lbs_netbucket_type *t = lbs_netbucket_type_find(g->instance_type);
		if (!t) {
			netbucket_names(names, sizeof names);
			lbs_fmt(msg, sizeof msg, "'%s' has no fitted network bucket (expected one of %s)",
				g->instance_type, names);
			return key_error(err, g, type_at, "instance_type", msg);
		}
		if (!(present >> key("burst_rate") & 1))
			g->burst_Bps = t->burst_Gbps * GBIT_BYTES;
		if (!(present >> key("baseline_rate") & 1))
			g->baseline_Bps = t->baseline_Gbps * GBIT_BYTES;
		if (!(present >> key("bucket_size") & 1))
			g->bucket_bytes = t->bucket_Gbit * GBIT_BYTES;
		if (g->burst_Bps < g->baseline_Bps) {
			bool burst_given = present >> key("burst_rate") & 1 && o[key("burst_rate")].file;
			const char *k = burst_given ? "burst_rate" : "baseline_rate";
			lbs_fmt(msg, sizeof msg, "the burst rate (%g Gbit/s) is below the baseline rate (%g Gbit/s)",
				g->burst_Bps / GBIT_BYTES, g->baseline_Bps / GBIT_BYTES);
			return key_error(err, g, &o[key(k)], k, msg);
		}
		break;
	}
	case LBS_GEN_DBS:
		if (floor(g->delay_max_s) < ceil(g->delay_min_s))
			return key_error(err, g, &o[key("delay_max")], "delay_max",
					 "must be >= delay_min, with a whole second between them");
		if (g->epochs_max < g->epochs_min)
			return key_error(err, g, &o[key("epochs_max")], "epochs_max", "must be >= epochs_min");
		break;
	}
	return LBS_OK;
}

/* Whether generator kind k sets a worker's availability (at most one may). */
static bool sets_availability(int k) { return k == LBS_GEN_CPU_CREDITS || k == LBS_GEN_BACKGROUND; }

/* Two generators of these kinds may not share a group. */
static bool clash(int a, int b)
{
	return (sets_availability(a) && sets_availability(b)) || a == b;
}

static lbs_status bind_groups(lbs_scenario *sc, lbs_gen_spec *g, lbs_error *err)
{
	char list[LBS_VALUE_MAX], msg[LBS_ERROR_MAX / 2];
	snprintf(list, sizeof list, "%s", g->workers);
	if (!(g->groups = lbs_calloc(sc->n_groups ? sc->n_groups : 1, sizeof *g->groups, err)))
		return LBS_EINTERNAL;
	for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		while (*tok == ' ' || *tok == '\t')
			tok++;
		size_t len = strlen(tok);
		while (len && (tok[len - 1] == ' ' || tok[len - 1] == '\t'))
			tok[--len] = '\0';
		size_t k = 0;
		while (k < sc->n_groups && strcmp(sc->groups[k].name, tok) != 0)
			k++;
		if (k == sc->n_groups) {
			lbs_fmt(msg, sizeof msg, "no worker group '%s' (there is a [workers.NAME] section per group)",
				tok);
			return key_error(err, g, &g->workers_at, "workers", msg);
		}
		for (size_t j = 0; j < g->n_groups; j++)
			if (g->groups[j] == k) {
				lbs_fmt(msg, sizeof msg, "group '%s' is named twice", tok);
				return key_error(err, g, &g->workers_at, "workers", msg);
			}
		g->groups[g->n_groups++] = (uint32_t)k;
	}
	if (g->n_groups == 0)
		return key_error(err, g, &g->workers_at, "workers", "names no group (expected GROUP[,GROUP...])");
	return LBS_OK;
}

static bool names_group(const lbs_gen_spec *g, size_t group)
{
	for (size_t j = 0; j < g->n_groups; j++)
		if (g->groups[j] == group)
			return true;
	return false;
}

lbs_status lbs_gen_resolve(lbs_scenario *sc, lbs_error *err)
{
	char msg[LBS_ERROR_MAX / 2];
	static const char *const kinds[] = { "cpu_credits", "background", "network_bucket",
					     "dbs_disturbance" };
	for (size_t i = 0; i < sc->n_generators; i++) {
		lbs_gen_spec *g = &sc->generators[i];
		lbs_status st = bind_groups(sc, g, err);
		if (st != LBS_OK)
			return st;
		if (g->kind == LBS_GEN_DBS && sc->iterations_per_epoch == 0)
			return key_error(err, g, &g->at, NULL,
					 "a dbs_disturbance acts per epoch: give the run length as [run] epochs "
					 "and dataset_samples");
		if (g->kind == LBS_GEN_NETWORK_BUCKET && sc->network.ops == &lbs_network_none)
			return key_error(err, g, &g->at, NULL,
					 "a network_bucket drives the aggregation's bandwidth: [network] topology "
					 "must be ring or ps");
		for (size_t j = 0; j < g->n_groups; j++) {
			const lbs_group_spec *gs = &sc->groups[g->groups[j]];
			for (size_t e = 0; e < i; e++) {
				const lbs_gen_spec *h = &sc->generators[e];
				if (!clash(g->kind, h->kind) || !names_group(h, g->groups[j]))
					continue;
				lbs_fmt(msg, sizeof msg,
					"group '%s' is already given to [generator.%s] (%s); a group takes at most one "
					"of cpu_credits and background, and one generator of each other kind",
					gs->name, h->name, kinds[h->kind]);
				return key_error(err, g, &g->workers_at, "workers", msg);
			}
			if (sets_availability(g->kind) && gs->availability != 1.0) {
				char section[LBS_NAME_MAX + 16];
				snprintf(section, sizeof section, "workers.%s", gs->name);
				lbs_origin at = lbs_scenario_origin(sc, section, "availability");
				lbs_fmt(msg, sizeof msg,
					"group '%s' also sets a constant `availability` (%s:%d); the generator replaces "
					"it: remove one", gs->name, at.file ? at.file : "?", at.line);
				return key_error(err, g, &g->workers_at, "workers", msg);
			}
			if (sets_availability(g->kind) && gs->trace.format) {
				lbs_fmt(msg, sizeof msg,
					"group '%s' replays a trace, and this generator would replace it: remove "
					"one", gs->name);
				return key_error(err, g, &g->workers_at, "workers", msg);
			}
		}
		if (g->kind == LBS_GEN_NETWORK_BUCKET && sc->network_trace.format) {
			lbs_fmt(msg, sizeof msg, "[network] replays a bandwidth trace; a network bucket "
						 "cannot drive the bandwidth too: remove one");
			return key_error(err, g, &g->at, NULL, msg);
		}
	}
	return LBS_OK;
}

void lbs_gen_specs_free(lbs_gen_spec *gens, size_t n)
{
	for (size_t i = 0; gens && i < n; i++) {
		free(gens[i].groups);
		gens[i].groups = NULL;
		gens[i].n_groups = 0;
	}
}

lbs_status lbs_gen_attach_worker(const lbs_scenario *sc, size_t group, int64_t index,
				 lbs_avail *avail, lbs_error *err)
{
	const lbs_group_spec *gs = &sc->groups[group];
	uint64_t seed = (uint64_t)sc->run.seed;
	lbs_status st = LBS_OK;
	/* The source that sets the availability first, then the disturbance
	 * that wraps whatever the worker has. */
	for (int pass = 0; pass < 2 && st == LBS_OK; pass++)
		for (size_t i = 0; i < sc->n_generators && st == LBS_OK; i++) {
			const lbs_gen_spec *g = &sc->generators[i];
			if (!names_group(g, group) || sets_availability(g->kind) != (pass == 0) ||
			    g->kind == LBS_GEN_NETWORK_BUCKET)
				continue;
			char stream[LBS_NAME_MAX + 16];
			snprintf(stream, sizeof stream, "generator.%s", g->name);
			gsl_rng *rng = NULL;
			if (g->kind != LBS_GEN_CPU_CREDITS &&
			    !(rng = lbs_rng_stream(seed, stream, gs->name, (uint64_t)index, err)))
				return LBS_EINTERNAL;
			switch (g->kind) {
			case LBS_GEN_CPU_CREDITS:
				st = lbs_credit_create(lbs_credit_type_find(g->instance_type), g->launch_credits,
						       g->initial_credits, avail, err);
				break;
			case LBS_GEN_BACKGROUND: {
				lbs_background_params p = { g->on_mean_s, g->off_mean_s, g->load, g->memory };
				st = lbs_background_create(&p, rng, avail, err);
				break;
			}
			default: {
				lbs_dbs_params p = { g->probability, g->delay_min_s, g->delay_max_s, g->epochs_min,
						     g->epochs_max, sc->iterations_per_epoch };
				lbs_avail inner = *avail;
				*avail = (lbs_avail){ NULL, NULL, 1.0 };
				st = lbs_dbs_create(&p, inner, rng, avail, err);
				break;
			}
			}
		}
	return st;
}

lbs_status lbs_gen_attach_network(const lbs_scenario *sc, lbs_avail *avail, lbs_error *err)
{
	size_t n = 0;
	for (size_t i = 0; i < sc->n_generators; i++)
		n += sc->generators[i].kind == LBS_GEN_NETWORK_BUCKET;
	if (n == 0)
		return LBS_OK;
	lbs_netbucket_nic *nics = lbs_calloc(n, sizeof *nics, err);
	if (!nics)
		return LBS_EINTERNAL;
	n = 0;
	for (size_t i = 0; i < sc->n_generators; i++) {
		const lbs_gen_spec *g = &sc->generators[i];
		if (g->kind == LBS_GEN_NETWORK_BUCKET)
			nics[n++] = (lbs_netbucket_nic){ g->burst_Bps, g->baseline_Bps, g->bucket_bytes,
							 g->initial_fill * g->bucket_bytes };
	}
	/* The bucket caps a worker's NIC: for a ring that is the link every
	 * transfer step uses; for a parameter server, the worker's NIC. */
	double ref = sc->network.ops == &lbs_network_ps ? sc->network.worker_bandwidth_Bps
							 : sc->network.bandwidth_Bps;
	lbs_status st = lbs_netbucket_create(nics, n, ref, avail, err);
	free(nics);
	return st;
}
