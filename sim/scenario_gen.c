/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A scenario's [generator.NAME] sections against the rest of the scenario:
 * binding each to the worker groups it names, refusing what cannot be
 * simulated, and building its sources for every worker and for the network.
 * The sections' keys and their checks on their own are the generators' part
 * (traces/gen.c). */
#include "sim/scenario.h"

#include <stdlib.h>
#include <string.h>

#include "util/rng.h"

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
			return lbs_gen_error(err, g, &g->workers_at, "workers", msg);
		}
		for (size_t j = 0; j < g->n_groups; j++)
			if (g->groups[j] == k) {
				lbs_fmt(msg, sizeof msg, "group '%s' is named twice", tok);
				return lbs_gen_error(err, g, &g->workers_at, "workers", msg);
			}
		g->groups[g->n_groups++] = (uint32_t)k;
	}
	if (g->n_groups == 0)
		return lbs_gen_error(err, g, &g->workers_at, "workers", "names no group (expected GROUP[,GROUP...])");
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
			return lbs_gen_error(err, g, &g->at, NULL,
					 "a dbs_disturbance acts per epoch: give the run length as [run] epochs "
					 "and dataset_samples");
		if (g->kind == LBS_GEN_NETWORK_BUCKET && sc->network.ops == &lbs_network_none)
			return lbs_gen_error(err, g, &g->at, NULL,
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
				return lbs_gen_error(err, g, &g->workers_at, "workers", msg);
			}
			if (sets_availability(g->kind) && gs->availability != 1.0) {
				char section[LBS_NAME_MAX + 16];
				snprintf(section, sizeof section, "workers.%s", gs->name);
				lbs_origin at = lbs_scenario_origin(sc, section, "availability");
				lbs_fmt(msg, sizeof msg,
					"group '%s' also sets a constant `availability` (%s:%d); the generator replaces "
					"it: remove one", gs->name, at.file ? at.file : "?", at.line);
				return lbs_gen_error(err, g, &g->workers_at, "workers", msg);
			}
			if (sets_availability(g->kind) && (gs->timeshare_refill_s > 0 || gs->cpu_quota_period_s > 0)) {
				lbs_fmt(msg, sizeof msg,
					"group '%s' sets `%s`, which applies to a constant or traced availability; this "
					"generator's is not modelled with it: remove one", gs->name,
					gs->timeshare_refill_s > 0 ? "timeshare_refill" : "cpu_quota_period");
				return lbs_gen_error(err, g, &g->workers_at, "workers", msg);
			}
			double horizon = lbs_monitor_horizon_s(&gs->readings);
			if (g->kind == LBS_GEN_BACKGROUND &&
			    horizon / (g->on_mean_s < g->off_mean_s ? g->on_mean_s : g->off_mean_s) > 1e5) {
				/* The job's phases within the horizon are kept for the
				 * lagged readings: bound how many. */
				char section[LBS_NAME_MAX + 16];
				const char *k = gs->readings.lag_s > 0 ? "readings_lag" : "readings_period";
				snprintf(section, sizeof section, "workers.%s", gs->name);
				lbs_origin at = lbs_scenario_origin(sc, section, k);
				char label[LBS_ERROR_MAX / 2];
				lbs_origin_format(&at, section, k, label, sizeof label);
				return lbs_error_set(err, LBS_EINPUT,
						     "%s: reads %g s into the past (readings_lag + readings_period), more "
						     "than 100000 of the shortest mean phase (%g s) of [generator.%s]",
						     label, horizon,
						     g->on_mean_s < g->off_mean_s ? g->on_mean_s : g->off_mean_s, g->name);
			}
			if (sets_availability(g->kind) && gs->trace.format) {
				lbs_fmt(msg, sizeof msg,
					"group '%s' replays a trace, and this generator would replace it: remove "
					"one", gs->name);
				return lbs_gen_error(err, g, &g->workers_at, "workers", msg);
			}
		}
		if (g->kind == LBS_GEN_NETWORK_BUCKET && sc->network_trace.format) {
			lbs_fmt(msg, sizeof msg, "[network] replays a bandwidth trace; a network bucket "
						 "cannot drive the bandwidth too: remove one");
			return lbs_gen_error(err, g, &g->at, NULL, msg);
		}
	}
	return LBS_OK;
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
				lbs_background_params p = { g->on_mean_s, g->off_mean_s, g->load, g->memory,
							    lbs_monitor_horizon_s(&gs->readings) };
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
	/* The bucket caps a worker's NIC, and the reference is the pace at
	 * which that NIC sends at nominal bandwidth: for a ring, the link every
	 * transfer step uses; for a parameter server, the worker's NIC or its
	 * fair share of the servers' NICs, whichever is lower (the model's
	 * 2 * max(N*M/(S*BW), M/BW_worker) is 2M at that pace). Only the
	 * worker's side follows its bucket: a worker slowed below its share of
	 * the servers slows the transfer, one above it does not. */
	double ref = sc->network.bandwidth_Bps;
	if (sc->network.ops == &lbs_network_ps) {
		double share = (double)sc->network.servers * sc->network.bandwidth_Bps / (double)sc->n_workers;
		ref = sc->network.worker_bandwidth_Bps < share ? sc->network.worker_bandwidth_Bps : share;
	}
	lbs_status st = lbs_netbucket_create(nics, n, ref, avail, err);
	free(nics);
	return st;
}
