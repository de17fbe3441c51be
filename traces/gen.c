/* SPDX-License-Identifier: GPL-3.0-or-later */
/* [generator.NAME] sections: their keys and the checks of one section on its
 * own. Binding a section to the scenario's groups and building its sources
 * for the workers is the scenario's part (sim/scenario_gen.c). */
#include "traces/gen.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>


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

lbs_status lbs_gen_error(lbs_error *err, const lbs_gen_spec *g, const lbs_origin *at, const char *name,
			 const char *msg)
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
			return lbs_gen_error(err, g, type_at, "instance_type", msg);
		}
		if (!(present >> key("launch_credits") & 1))
			g->launch_credits = t->launch;
		if (g->initial_credits > t->max_earned) {
			lbs_fmt(msg, sizeof msg, "%g credits exceed the %s's limit of %g earned credits",
				g->initial_credits, t->name, t->max_earned);
			return lbs_gen_error(err, g, &o[key("initial_credits")], "initial_credits", msg);
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
			return lbs_gen_error(err, g, type_at, "instance_type", msg);
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
			return lbs_gen_error(err, g, &o[key(k)], k, msg);
		}
		break;
	}
	case LBS_GEN_DBS:
		if (floor(g->delay_max_s) < ceil(g->delay_min_s))
			return lbs_gen_error(err, g, &o[key("delay_max")], "delay_max",
					 "must be >= delay_min, with a whole second between them");
		if (g->epochs_max < g->epochs_min)
			return lbs_gen_error(err, g, &o[key("epochs_max")], "epochs_max", "must be >= epochs_min");
		break;
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
