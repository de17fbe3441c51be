/* SPDX-License-Identifier: GPL-3.0-or-later */
/* EC2's network token bucket, as the bandwidth source of the aggregation.
 *
 * Instances with "up to" N Gbit/s of network bandwidth use a network I/O
 * credit mechanism (Amazon EC2 User Guide, "Amazon EC2 instance network
 * bandwidth"): they may send at a burst rate while they hold tokens and at
 * a baseline rate once they have none. AWS publishes neither the bucket
 * size nor the rates; Uta et al. measured them ("Is Big Data Performance
 * Reproducible in Modern Cloud Networks?", NSDI 2020), and the per-type
 * parameters are fitted from their runs (traces/netfit.c; the table is
 * generated into traces/netbucket_fit.c; doc/generators.md).
 *
 * The model: a bucket of size S refilled at the baseline rate r, starting
 * with initial tokens (a fresh instance: full). While the link sends at rate
 * x the tokens change at r - x; with tokens the NIC may send at the burst
 * rate R, without them at r. During an aggregation every worker of a
 * synchronous collective sends the same volume at the same pace (a ring
 * all-reduce proceeds at its slowest link), so the pace is
 *   p(t) = min(reference bandwidth, each NIC kind's current cap)
 * and the transfer's bandwidth factor is p / reference: a transfer of
 * nominal duration W ends where the integral of the factor reaches W, as
 * compute integrates availability. Identical NICs stay identical (same
 * refills, same pace), so one bucket per kind of NIC is exact. Between
 * aggregations the NICs are idle and refill.
 *
 * The pace is piecewise constant: it changes only when a draining bucket
 * empties (tokens / (p - r) from now), which happens at most once per
 * bucket per transfer, since p never rises during a transfer. So the
 * completion is found in closed form, segment by segment. */
#include <assert.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "traces/gen.h"

const lbs_netbucket_type *lbs_netbucket_type_find(const char *name)
{
	for (const lbs_netbucket_type *t = lbs_netbucket_types; t->name; t++)
		if (strcmp(t->name, name) == 0)
			return t;
	return NULL;
}

typedef struct nb_state {
	double reference_Bps;
	double at_s;     /* the tokens are as of this time */
	size_t n;
	lbs_netbucket_nic *nic;
	double *tokens;  /* bytes */
} nb_state;

static void refill(nb_state *s, double dt)
{
	for (size_t i = 0; i < s->n; i++) {
		double v = s->tokens[i] + s->nic[i].baseline_Bps * dt;
		s->tokens[i] = v < s->nic[i].bucket_bytes ? v : s->nic[i].bucket_bytes;
	}
}

/* The common pace (bytes/s) for the tokens as they are. */
static double pace(const nb_state *s, const double *tokens)
{
	double p = s->reference_Bps;
	for (size_t i = 0; i < s->n; i++) {
		double cap = tokens[i] > 0 ? s->nic[i].burst_Bps : s->nic[i].baseline_Bps;
		p = cap < p ? cap : p;
	}
	return p;
}

static double nb_finish(void *state, double t0, double work_s, int64_t iteration)
{
	(void)iteration;
	nb_state *s = state;
	assert(t0 >= s->at_s);
	refill(s, t0 - s->at_s);
	s->at_s = t0;
	double t = t0, w = work_s;
	while (w > 0) {
		double p = pace(s, s->tokens), f = p / s->reference_Bps;
		double next = INFINITY; /* until the next bucket empties */
		size_t j = 0;
		for (size_t i = 0; i < s->n; i++) {
			double drain = p - s->nic[i].baseline_Bps;
			if (s->tokens[i] > 0 && drain > 0 && s->tokens[i] / drain < next) {
				next = s->tokens[i] / drain;
				j = i;
			}
		}
		double dt = w / f;
		bool done = dt <= next;
		if (!done)
			dt = next;
		for (size_t i = 0; i < s->n; i++) {
			double v = s->tokens[i] + (s->nic[i].baseline_Bps - p) * dt;
			s->tokens[i] = v < 0 ? 0 : v < s->nic[i].bucket_bytes ? v : s->nic[i].bucket_bytes;
		}
		t += dt;
		if (done)
			break;
		s->tokens[j] = 0; /* exactly: the cap drops to the baseline */
		w -= f * dt;
	}
	s->at_s = t;
	return t;
}

/* The factor a transfer starting at t (at or after the last one's end)
 * would begin with. */
static double nb_level(const void *state, double t, int64_t iteration)
{
	(void)iteration;
	const nb_state *s = state;
	double dt = t > s->at_s ? t - s->at_s : 0, p = s->reference_Bps;
	for (size_t i = 0; i < s->n; i++) {
		double tok = s->tokens[i] + s->nic[i].baseline_Bps * dt;
		double cap = tok > 0 ? s->nic[i].burst_Bps : s->nic[i].baseline_Bps;
		p = cap < p ? cap : p;
	}
	return p / s->reference_Bps;
}

static void nb_destroy(void *state)
{
	nb_state *s = state;
	free(s->nic);
	free(s->tokens);
	free(s);
}

static const lbs_avail_ops nb_ops = {
	.name = "network_bucket",
	.finish = nb_finish,
	.level = nb_level,
	.destroy = nb_destroy,
};

lbs_status lbs_netbucket_create(const lbs_netbucket_nic *nics, size_t n, double reference_Bps,
				lbs_avail *out, lbs_error *err)
{
	if (!(reference_Bps > 0) || n == 0)
		return lbs_error_set(err, LBS_EINPUT, "network bucket: needs a bandwidth and a NIC");
	for (size_t i = 0; i < n; i++) {
		const lbs_netbucket_nic *c = &nics[i];
		if (!(c->baseline_Bps > 0) || !(c->burst_Bps >= c->baseline_Bps) || !(c->bucket_bytes > 0) ||
		    !(c->initial_bytes >= 0 && c->initial_bytes <= c->bucket_bytes))
			return lbs_error_set(err, LBS_EINPUT,
					     "network bucket: needs 0 < baseline <= burst, a bucket > 0 and "
					     "0 <= initial tokens <= bucket");
	}
	nb_state *s = lbs_calloc(1, sizeof *s, err);
	if (!s || !(s->nic = lbs_calloc(n, sizeof *s->nic, err)) ||
	    !(s->tokens = lbs_calloc(n, sizeof *s->tokens, err))) {
		if (s)
			nb_destroy(s);
		return LBS_EINTERNAL;
	}
	s->reference_Bps = reference_Bps;
	s->n = n;
	memcpy(s->nic, nics, n * sizeof *nics);
	for (size_t i = 0; i < n; i++)
		s->tokens[i] = nics[i].initial_bytes;
	*out = (lbs_avail){ &nb_ops, s, 1.0 };
	return LBS_OK;
}
