/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The what-if analysis of a hybrid-parallel trace (doc/whatif.md): the
 * no-delay and ideal replays, the slowdown S, its attribution to op types,
 * dp_ranks, stages and workers, the removal/addition tests M_S and M_W,
 * and the counterfactual balancing policies. */
#ifndef LBS_WHATIF_H
#define LBS_WHATIF_H

#include <stdbool.h>
#include <stddef.h>

#include "whatif/model.h"

/* Attribution is computed when S is at least this. */
#define LBS_WI_ATTRIBUTE_MIN 1.03

typedef enum lbs_wi_kind { LBS_WI_OPTYPE, LBS_WI_DP, LBS_WI_STAGE, LBS_WI_WORKER } lbs_wi_kind;

/* One attributed slowdown: S_t, S_dp, S_stage or S_w. */
typedef struct lbs_wi_slowdown {
	lbs_wi_kind kind;
	char name[48];      /* op type ("forward-pp-comm", ...) or the index */
	int dp_rank, stage, rank; /* -1 where they do not apply */
	double value;
	double *per_step;   /* n_steps (NULL for S_w) */
} lbs_wi_slowdown;

/* A removal/addition test. */
typedef struct lbs_wi_test {
	double t_rem, t_add, t_ori, t_ideal, rem, add;
	char workers[256]; /* the set, e.g. "stage 3" or "rank 7" */
} lbs_wi_test;

/* A counterfactual: the trace replayed as a balancing policy would have
 * redistributed its work. */
typedef struct lbs_wi_policy {
	char name[48];
	char what[160];
	double mean_t;     /* mean step time of the replay */
	double recovered;  /* (mean T_nd - mean_t) / (mean T_nd - mean T_id) */
} lbs_wi_policy;

typedef struct lbs_wi_result {
	size_t n_steps;
	const int64_t *steps;
	double *t_meas, *t_base, *t_nd, *t_id; /* per step */
	double mean_meas, mean_base, mean_nd, mean_id;
	double S, L;
	double base_max_rel; /* largest |T_base - T_meas| / T_meas over the steps */
	/* ideal value of each op type: local duration, transfer time (NAN: no op of that role) */
	double ideal_d[LBS_OP_N], ideal_x[LBS_OP_N];
	bool attributed;   /* S >= LBS_WI_ATTRIBUTE_MIN */
	size_t n_slow;
	lbs_wi_slowdown *slow; /* S_t, S_dp, S_stage, S_w, each sorted by decreasing value */
	lbs_wi_test ms, mw;
	size_t n_policies;
	lbs_wi_policy policy[8];
	/* The timeline of the step with the largest S (index timeline_step):
	 * each op instance's start and end, traced and in the ideal replay,
	 * index dp_rank * n_ops + op. */
	size_t timeline_step;
	double *tl_start[2], *tl_end[2];
} lbs_wi_result;

lbs_status lbs_wi_analyse(const lbs_wi_model *m, lbs_wi_result *res, lbs_error *err);

/* The counterfactual policies (whatif/policies.c): replays of the
 * no-delay inputs vo with the compute work redistributed, into
 * res->policy; needs res->mean_nd and res->mean_id. */
lbs_status lbs_wi_policies(const lbs_wi_model *m, lbs_wi_result *res, const double *vo, lbs_error *err);
void lbs_wi_result_free(lbs_wi_result *res);

#endif
