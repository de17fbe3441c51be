/* SPDX-License-Identifier: GPL-3.0-or-later */
/* `lbsim SCENARIO` for a hybrid scenario (doc/hybrid.md): load, cost,
 * simulate, print a summary, record the steps and each group's accounting,
 * and optionally write every op in the per-operation trace format. */
#include "hybrid/hybrid_cmd.h"

#include <math.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "hybrid/balance.h"
#include "hybrid/hybrid.h"
#include "hybrid/scenario.h"
#include "models/gpu.h"
#include "sim/recorder.h"
#include "sim/resultsdb.h"
#include "util/clock.h"
#include "util/rng.h"

static bool bind_exec(sqlite3_stmt *q, const char *fmt, ...)
{
	sqlite3_reset(q);
	va_list ap;
	va_start(ap, fmt);
	for (int k = 0; fmt[k]; k++) {
		if (fmt[k] == 'i')
			sqlite3_bind_int64(q, k + 1, va_arg(ap, long long));
		else if (fmt[k] == 'd') {
			double v = va_arg(ap, double);
			if (isnan(v))
				sqlite3_bind_null(q, k + 1);
			else
				sqlite3_bind_double(q, k + 1, v);
		} else
			sqlite3_bind_text(q, k + 1, va_arg(ap, const char *), -1, SQLITE_TRANSIENT);
	}
	va_end(ap);
	return sqlite3_step(q) == SQLITE_DONE;
}

/* One op of the recorded step (hybrid_timeline). */
typedef struct timeline_row {
	int32_t step, dp_rank, stage, seq, mc, mb;
	uint8_t type;
	double start_s, end_s;
} timeline_row;

/* Rows at most in hybrid_timeline (about 70 bytes each in the database):
 * every step's ops when they fit, else the longest step's, else none. */
#define TIMELINE_MAX_OPS 300000

typedef struct run_result {
	double *step_s, *start_s;
	timeline_row *timeline; /* every step's ops, or the longest step's; n_timeline of them */
	size_t n_timeline, timeline_step, cap_timeline;
	lbs_hy_account *acc; /* steps x G */
	int *m_of;           /* steps x d: each replica's micro-batches */
	double *decision_s;  /* steps: the policy's wall time deciding it */
	bool *changed;       /* steps: the split changed before it */
	double *action_s;    /* steps: the pause before it (moving blocks) */
	int *blocks;         /* steps x p: each stage's blocks (NULL: no re-split possible) */
	int64_t rebuilds, resplits, replacements, stale;
	double mean_step_s, tokens_per_s, mfu, wall_s;
	uint64_t events;
	bool ops_created; /* the --ops-trace files were opened */
} run_result;

static const char *schedule_name(int s)
{
	return s == LBS_HY_GPIPE ? "gpipe" : s == LBS_HY_1F1B ? "1f1b" : "interleaved";
}

static lbs_status record(const char *path, const lbs_hy_scenario *sc, const lbs_hy_built *b, const run_result *rr,
			 const volatile sig_atomic_t *interrupt, lbs_error *err)
{
	lbs_recorder rec;
	lbs_status st = lbs_recorder_open(&rec, path, LBS_DETAIL_RUNS, err);
	if (st != LBS_OK)
		return st;
	lbs_recorder_close(&rec);
	sqlite3 *db = NULL;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		st = lbs_error_set(err, LBS_EIO, "%s: %s", path, db ? sqlite3_errmsg(db) : "cannot open");
		sqlite3_close(db);
		return st;
	}
	lbs_recorder_busy(db);
	char now[32];
	time_t tt = time(NULL);
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
	const lbs_hy_plan *pl = &b->plan;
	size_t G = (size_t)pl->d * (size_t)pl->p, steps = (size_t)sc->run.steps;
	bool ok = sqlite3_exec(db, "PRAGMA foreign_keys = ON; BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK &&
		  sqlite3_exec(db, lbs_hybrid_schema_sql, NULL, NULL, NULL) == SQLITE_OK &&
		  sqlite3_exec(db, lbs_hybrid_policy_schema_sql, NULL, NULL, NULL) == SQLITE_OK;
	sqlite3_stmt *q = NULL;
	ok = ok && sqlite3_prepare_v2(db, "INSERT INTO hybrid_runs (name, scenario_path, seed, model, "
				      "sequence_length, dp, pp, tp, virtual_stages, micro_batch, micro_batches, "
				      "schedule, zero_stage, gpus, steps, mean_step_s, tokens_per_s, "
				      "model_flops_per_step, mfu, events, wall_s, lbsim_version, created_at) VALUES (?1, "
				      "?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16, ?17, ?18, ?19, "
				      "?20, ?21, ?22, ?23)", -1, &q, NULL) == SQLITE_OK;
	ok = ok && bind_exec(q, "ssisiiiiiiisiiiddddidss", sc->run.name, sc->path, (long long)sc->run.seed,
			     sc->model.name, (long long)sc->model.sequence_length, (long long)pl->d, (long long)pl->p,
			     (long long)pl->t, (long long)pl->v, (long long)sc->job.micro_batch, (long long)pl->m,
			     schedule_name(pl->schedule), (long long)pl->zero_stage, (long long)sc->n_gpus,
			     (long long)steps, rr->mean_step_s, rr->tokens_per_s, b->flops_per_step, rr->mfu,
			     (long long)rr->events, rr->wall_s, PACKAGE_VERSION, now);
	sqlite3_finalize(q);
	q = NULL;
	long long id = (long long)sqlite3_last_insert_rowid(db);
	ok = ok && sqlite3_prepare_v2(db, "INSERT INTO hybrid_config VALUES (?1, ?2, ?3, ?4)", -1, &q, NULL) == SQLITE_OK;
	for (size_t i = 0; ok && i < sc->n_config; i++)
		ok = bind_exec(q, "isss", id, sc->config[i].section, sc->config[i].key, sc->config[i].value);
	sqlite3_finalize(q);
	q = NULL;
	ok = ok && sqlite3_prepare_v2(db, "INSERT INTO hybrid_steps VALUES (?1, ?2, ?3, ?4)", -1, &q, NULL) == SQLITE_OK;
	for (size_t i = 0; ok && i < steps; i++)
		ok = bind_exec(q, "iidd", id, (long long)i, rr->start_s[i], rr->step_s[i]);
	sqlite3_finalize(q);
	q = NULL;
	ok = ok && sqlite3_prepare_v2(db, "INSERT INTO hybrid_groups VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
				      -1, &q, NULL) == SQLITE_OK;
	for (size_t i = 0; ok && i < steps; i++)
		for (size_t g = 0; ok && g < G; g++) {
			const lbs_hy_account *a = &rr->acc[i * G + g];
			ok = bind_exec(q, "iiiiiddddd", id, (long long)i, (long long)(g / (size_t)pl->p),
				       (long long)(g % (size_t)pl->p), (long long)b->rank_of[g], a->compute_s, a->bubble_s,
				       a->comm_s, a->wait_s, a->optimizer_s);
		}
	sqlite3_finalize(q);
	q = NULL;
	ok = ok && sqlite3_prepare_v2(db, "INSERT INTO hybrid_decisions VALUES (?1, ?2, ?3, ?4, ?5, ?6)", -1, &q,
				      NULL) == SQLITE_OK;
	for (size_t i = 0; ok && i < steps; i++)
		ok = bind_exec(q, "iisidd", id, (long long)i, sc->policy.name, (long long)rr->changed[i], rr->decision_s[i],
			       rr->action_s[i]);
	sqlite3_finalize(q);
	q = NULL;
	ok = ok && sqlite3_prepare_v2(db, "INSERT INTO hybrid_partitions VALUES (?1, ?2, ?3, ?4)", -1, &q, NULL) ==
			   SQLITE_OK;
	for (size_t i = 0; ok && rr->blocks && i < steps; i++)
		for (int s = 0; ok && s < pl->p; s++)
			ok = bind_exec(q, "iiii", id, (long long)i, (long long)s,
				       (long long)rr->blocks[i * (size_t)pl->p + (size_t)s]);
	sqlite3_finalize(q);
	q = NULL;
	ok = ok && sqlite3_prepare_v2(db, "INSERT INTO hybrid_replicas VALUES (?1, ?2, ?3, ?4)", -1, &q, NULL) == SQLITE_OK;
	for (size_t i = 0; ok && i < steps; i++)
		for (int r = 0; ok && r < pl->d; r++)
			ok = bind_exec(q, "iiii", id, (long long)i, (long long)r,
				       (long long)rr->m_of[i * (size_t)pl->d + (size_t)r]);
	sqlite3_finalize(q);
	q = NULL;
	ok = ok && sqlite3_prepare_v2(db, "INSERT INTO hybrid_timeline VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
				      -1, &q, NULL) == SQLITE_OK;
	for (size_t i = 0; ok && i < rr->n_timeline; i++) {
		const timeline_row *t = &rr->timeline[i];
		ok = bind_exec(q, "iiiisiiidd", id, (long long)t->step, (long long)t->dp_rank,
			       (long long)t->stage, lbs_optype_name((lbs_optype)t->type), (long long)t->seq,
			       (long long)t->mc, (long long)t->mb, t->start_s, t->end_s);
	}
	sqlite3_finalize(q);
	if (ok && interrupt && *interrupt) {
		st = lbs_error_set(err, LBS_EINTR, "%s: interrupted: the run was rolled back", path);
		ok = false;
	}
	ok = ok && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK;
	if (!ok) {
		if (st == LBS_OK)
			st = lbs_error_set(err, LBS_EIO, "%s: writing the hybrid results: %s", path, sqlite3_errmsg(db));
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	}
	sqlite3_close(db);
	return st;
}

/* Every op of every step into ops_path, the metadata beside it. */
static FILE *open_trace(const char *ops_path, const lbs_hy_scenario *sc, const lbs_hy_plan *pl, lbs_error *err)
{
	char meta[1100];
	snprintf(meta, sizeof meta, "%s.meta.yaml", ops_path);
	FILE *m = fopen(meta, "w");
	if (!m) {
		lbs_error_set(err, LBS_EIO, "%s: cannot write", meta);
		return NULL;
	}
	lbs_status st = lbs_hy_meta_write(pl, m, sc->run.name, err);
	if (fclose(m) != 0 || st != LBS_OK) {
		lbs_error_set(err, LBS_EIO, "%s: cannot write", meta);
		return NULL;
	}
	FILE *f = fopen(ops_path, "w");
	if (!f)
		lbs_error_set(err, LBS_EIO, "%s: cannot write", ops_path);
	return f;
}

/* Step `step`'s ops into rr->timeline, times from its start, in the graph
 * in force then (a policy may rebuild it, padding slots left out):
 * appended when `every` step is kept, else in place of the longest so far;
 * not kept past TIMELINE_MAX_OPS ops a step. */
static lbs_status keep_timeline(run_result *rr, const lbs_hy_graph *gr, const lbs_hy_sim *sim, size_t step, bool every,
				lbs_error *err)
{
	if (!every)
		rr->n_timeline = 0;
	rr->timeline_step = step;
	if (gr->n_ops > TIMELINE_MAX_OPS)
		return LBS_OK;
	if (rr->n_timeline + gr->n_ops > rr->cap_timeline) {
		size_t cap = 2 * rr->cap_timeline > rr->n_timeline + gr->n_ops ? 2 * rr->cap_timeline
										: rr->n_timeline + gr->n_ops;
		timeline_row *t = realloc(rr->timeline, cap * sizeof *t);
		if (!t)
			return lbs_error_set(err, LBS_EINTERNAL, "out of memory for the timeline of %zu ops", gr->n_ops);
		rr->timeline = t;
		rr->cap_timeline = cap;
	}
	size_t p = (size_t)gr->plan->p;
	double s0 = rr->start_s[step];
	for (size_t g = 0; g < gr->n_groups; g++)
		for (size_t l = 0; l < gr->per_group; l++) {
			uint32_t o = lbs_hy_op(gr, g, l);
			if (!lbs_hy_op_recorded(gr, o))
				continue;
			rr->timeline[rr->n_timeline++] = (timeline_row){ .step = (int32_t)step,
									  .dp_rank = (int32_t)(g / p),
									  .stage = (int32_t)(g % p),
									  .seq = gr->seq[o], .mc = gr->mc[o], .mb = gr->mb[o],
									  .type = gr->type[o], .start_s = sim->start[o] - s0,
									  .end_s = sim->end[lbs_hy_compute_end_op(gr, o)] - s0 };
		}
	return LBS_OK;
}

static lbs_status simulate(const lbs_hy_scenario *sc, const lbs_hy_built *b, const char *ops_path, run_result *rr,
			   const volatile sig_atomic_t *interrupt, lbs_error *err)
{
	const lbs_hy_plan *pl = &b->plan;
	size_t G = (size_t)pl->d * (size_t)pl->p, steps = (size_t)sc->run.steps;
	lbs_hy_balance bal;
	lbs_status st = lbs_hy_balance_create(&bal, sc, b, err);
	if (st != LBS_OK) {
		if (st == LBS_EINPUT && !strstr(err->msg, sc->path))
			lbs_error_prefix(err, "%s: [hybrid]", sc->path); /* the degrees and micro-batches size the graph */
		return st;
	}
	lbs_hy_balance_interrupt(&bal, interrupt); /* looked at before every event */
	rr->step_s = calloc(steps, sizeof *rr->step_s);
	rr->start_s = calloc(steps, sizeof *rr->start_s);
	rr->acc = calloc(steps * G, sizeof *rr->acc);
	rr->m_of = calloc(steps * (size_t)pl->d, sizeof *rr->m_of);
	rr->decision_s = calloc(steps, sizeof *rr->decision_s);
	rr->changed = calloc(steps, sizeof *rr->changed);
	rr->action_s = calloc(steps, sizeof *rr->action_s);
	if (bal.blocks)
		rr->blocks = calloc(steps * (size_t)pl->p, sizeof *rr->blocks);
	FILE *ops = NULL;
	if (!rr->step_s || !rr->start_s || !rr->acc || !rr->m_of || !rr->decision_s || !rr->changed || !rr->action_s ||
	    (bal.blocks && !rr->blocks))
		st = lbs_error_set(err, LBS_EINTERNAL, "out of memory for %zu steps of %zu groups", steps, G);
	if (st == LBS_OK && ops_path) {
		rr->ops_created = true;
		if (!(ops = open_trace(ops_path, sc, pl, err)))
			st = LBS_EIO;
	}
	/* data-dependent costs: each step's lengths from a stream of their
	 * own, none when every micro-batch has the model's length */
	const lbs_hy_lengths_spec *ls = &sc->lengths;
	bool varied = ls->distribution != LBS_HY_LEN_FIXED || (ls->length && ls->length != ls->seq_len);
	size_t n_mb = (size_t)pl->d * (size_t)pl->m; /* the global batch, whatever the split */
	double *ratio = NULL, tokens_drawn = 0, sq_drawn = 0; /* sums of L / S and (L / S)^2 */
	gsl_rng *rng = NULL;
	if (st == LBS_OK && varied) {
		if (!(ratio = malloc(n_mb * sizeof *ratio)))
			st = lbs_error_set(err, LBS_EINTERNAL, "out of memory for %zu micro-batches' lengths", n_mb);
		else
			rng = lbs_rng_stream((uint64_t)sc->run.seed, "hybrid-lengths", sc->run.name, 0, err);
		if (st == LBS_OK && !rng)
			st = LBS_EINTERNAL;
		lbs_hy_balance_lengths(&bal, ratio);
	}
	/* hybrid_timeline: every step's ops if they fit, else the longest's */
	bool every = bal.gr->n_ops * steps <= TIMELINE_MAX_OPS;
	double t0 = lbs_cpu_time_s(), sum = 0, micro = 0;
	for (size_t i = 0; st == LBS_OK && i < steps; i++) {
		/* the step's lengths come with its data, whatever the policy
		 * decides: drawn first (only the oracle looks at them) */
		if (ratio) {
			tokens_drawn += (double)lbs_hy_lengths_draw(ls, rng, ratio, n_mb);
			for (size_t k = 0; k < n_mb; k++)
				sq_drawn += ratio[k] * ratio[k];
		}
		if ((st = lbs_hy_balance_decide(&bal, (int64_t)i, err)) != LBS_OK)
			break;
		rr->decision_s[i] = bal.decision_s;
		rr->changed[i] = bal.changed;
		rr->action_s[i] = bal.action_s;
		if (bal.blocks)
			memcpy(rr->blocks + i * (size_t)pl->p, bal.blocks, (size_t)pl->p * sizeof *bal.blocks);
		memcpy(rr->m_of + i * (size_t)pl->d, bal.m_of, (size_t)pl->d * sizeof *bal.m_of);
		for (int r = 0; r < pl->d; r++)
			micro += bal.m_of[r];
		rr->start_s[i] = bal.sim->now_s;
		if ((st = lbs_hy_balance_step(&bal, &rr->step_s[i], &rr->acc[i * G], err)) != LBS_OK)
			break;
		if (every || i == 0 || rr->step_s[i] > rr->step_s[rr->timeline_step])
			st = keep_timeline(rr, bal.gr, bal.sim, i, every, err); /* every step, or the longest so far */
		sum += rr->step_s[i];
		if (ops)
			st = lbs_hy_trace_write(bal.sim, ops, (int64_t)i, rr->start_s[i], i == 0, b->rank_of, err);
	}
	rr->rebuilds = bal.rebuilds;
	rr->resplits = bal.resplits;
	rr->stale = bal.stale;
	rr->replacements = bal.replacements;
	rr->wall_s = lbs_cpu_time_s() - t0;
	if (ops && fclose(ops) != 0 && st == LBS_OK)
		st = lbs_error_set(err, LBS_EIO, "%s: cannot write", ops_path);
	rr->events = bal.sim ? bal.sim->events : 0;
	rr->mean_step_s = sum / (double)steps;
	/* the global batch is kept whatever the split: M micro-batches a step */
	double tokens = micro / (double)steps * (double)sc->job.micro_batch;
	lbs_net_opts o = { .seq_len = sc->model.sequence_length };
	lbs_net net;
	lbs_error e2 = { 0 };
	if (st == LBS_OK && lbs_net_create_opts(&net, sc->model.name, &o, &e2) == LBS_OK) {
		tokens *= (double)net.opts.seq_len;
		lbs_net_destroy(&net);
	}
	/* drawn lengths: the tokens drawn over the steps run, and the model
	 * FLOPs at them: a micro-batch's are a L + c L^2 (the GEMMs grow with
	 * the tokens, attention's with their square), a and c from the FLOPs
	 * at S and at H = S / 2 (rounded down) tokens */
	double flops = b->flops_per_step;
	if (ratio) {
		tokens = tokens_drawn * (double)sc->job.micro_batch / (double)steps;
		double per_mb = b->flops_per_step / (double)n_mb, half = NAN, x = NAN;
		lbs_net_opts oh = { .seq_len = ls->seq_len / 2, .tp = pl->t, .recompute = sc->model.recompute,
				    .seq_par = sc->job.sequence_parallel };
		if (ls->seq_len >= 2 && lbs_net_create_opts(&net, sc->model.name, &oh, &e2) == LBS_OK) {
			half = lbs_net_flops(&net, sc->job.micro_batch) * pl->t;
			x = (double)net.opts.seq_len / (double)ls->seq_len;
			lbs_net_destroy(&net);
		}
		/* in units of S: F(1) = A + C, F(x) = A x + C x^2 */
		double C = (half - x * per_mb) / (x * x - x), A = per_mb - C;
		flops = (A * tokens_drawn / (double)ls->seq_len + C * sq_drawn) / (double)steps;
	}
	rr->tokens_per_s = tokens / rr->mean_step_s;
	free(ratio);
	if (rng)
		gsl_rng_free(rng);
	double peak = 0;
	for (size_t k = 0; k < sc->n_nodes; k++)
		peak += (double)(sc->nodes[k].count * sc->nodes[k].gpus_per_node) *
			lbs_gpu_find(sc->nodes[k].gpu)->tensor_flops;
	rr->mfu = flops / (rr->mean_step_s * peak);
	lbs_hy_balance_destroy(&bal);
	return st;
}

/* The GPU-seconds of the n drawn episodes from *e on (advancing *e). */
static double gpu_seconds(const lbs_hy_scenario *sc, size_t *e, size_t n)
{
	double gpu_s = 0;
	for (size_t i = 0; i < n; i++, (*e)++) {
		long long a, z; /* "a-z" (a node) or "a" (a GPU) */
		int got = sscanf(sc->episodes[*e].gpus, "%lld-%lld", &a, &z);
		gpu_s += sc->episodes[*e].duration_s * (double)(got == 2 ? z - a + 1 : 1);
	}
	return gpu_s;
}

static void summary(const lbs_hy_scenario *sc, const lbs_hy_built *b, const run_result *rr)
{
	const lbs_hy_plan *pl = &b->plan;
	size_t G = (size_t)pl->d * (size_t)pl->p, steps = (size_t)sc->run.steps;
	double sh[5] = { 0 };
	for (size_t i = 0; i < steps; i++)
		for (size_t g = 0; g < G; g++) {
			const lbs_hy_account *a = &rr->acc[i * G + g];
			sh[0] += a->compute_s / rr->step_s[i];
			sh[1] += a->bubble_s / rr->step_s[i];
			sh[2] += a->comm_s / rr->step_s[i];
			sh[3] += a->wait_s / rr->step_s[i];
			sh[4] += a->optimizer_s / rr->step_s[i];
		}
	double n = (double)(steps * G);
	char cpx[64] = "";
	if (pl->cp > 1)
		snprintf(cpx, sizeof cpx, " x cp %d%s", pl->cp, sc->job.cp_comm == 1 ? " a2a" : "");
	if (pl->ep > 1) /* not a factor of the GPUs: its groups are replicas */
		snprintf(cpx + strlen(cpx), sizeof cpx - strlen(cpx), ", ep %d", pl->ep);
	printf("%s: %s on %lld GPUs (dp %d x pp %d x tp %d%s, %s, v %d, %d micro-batches of %lld)\n", sc->run.name,
	       sc->model.name, (long long)sc->n_gpus, pl->d, pl->p, pl->t, cpx, schedule_name(pl->schedule), pl->v,
	       pl->m, (long long)sc->job.micro_batch);
	printf("%-12s %10s %12s %6s %8s %8s %8s %8s %8s\n", "steps", "step_s", "tokens/s", "MFU", "compute", "bubble",
	       "comm", "wait", "optim");
	printf("%-12zu %10.4f %12.0f %5.1f%% %7.1f%% %7.1f%% %7.1f%% %7.1f%% %7.1f%%\n", steps, rr->mean_step_s,
	       rr->tokens_per_s, 100 * rr->mfu, 100 * sh[0] / n, 100 * sh[1] / n, 100 * sh[2] / n, 100 * sh[3] / n,
	       100 * sh[4] / n);
	size_t worst = 0;
	for (size_t g = 1; g < G; g++)
		if (b->mem_bytes[g] / b->mem_cap[g] > b->mem_bytes[worst] / b->mem_cap[worst])
			worst = g;
	if (b->expert_dropped > 0 || sc->model.expert_pad)
		printf("experts: %.2f%% of the routed tokens dropped at capacity %g%s\n", 100 * b->expert_dropped,
		       sc->model.expert_capacity, sc->model.expert_pad ? ", each expert's input padded to it" : "");
	printf("memory: at most %.1f GB of %.0f GB a GPU (stage %zu)\n", b->mem_bytes[worst] / 1e9,
	       b->mem_cap[worst] / 1e9, worst % (size_t)pl->p);
	size_t e = sc->n_episodes - sc->n_drawn;
	for (size_t k = 0; k < sc->n_gens; k++) {
		const lbs_hy_failslows_spec *f = &sc->gens[k];
		double gpu_s = gpu_seconds(sc, &e, f->n_drawn);
		printf("fail-slow episodes drawn ([failslows.%s], %s): %zu over the first %g s, %.3g GPU-hours "
		       "slowed (hybrid_config, failslow.%s-K)\n", f->name, f->kind == LBS_HY_FS_NETWORK ? "network" : "compute",
		       f->n_drawn, f->horizon_s, gpu_s / 3600, f->name);
	}
	for (size_t k = 0; k < sc->n_avail_gens; k++) {
		const lbs_hy_generator_spec *g = &sc->avail_gens[k];
		double gpu_s = gpu_seconds(sc, &e, g->n_drawn);
		printf("background phases drawn ([generator.%s]): %zu on phases over the first %g s, %.3g GPU-hours "
		       "at %g (hybrid_config, failslow.%s-K)\n", g->name, g->n_drawn, g->horizon_s, gpu_s / 3600,
		       1 - g->load, g->name);
	}
	if (strcmp(sc->policy.name, "static")) {
		double dsum = 0;
		for (size_t i = 0; i < steps; i++)
			dsum += rr->decision_s[i];
		double pause = 0;
		for (size_t i = 0; i < steps; i++)
			pause += rr->action_s[i];
		printf("policy %s: %lld changes (%lld re-splits, %lld nodes replaced, %.3f s of pauses), %.3g s a "
		       "decision; last split", sc->policy.name, (long long)rr->rebuilds, (long long)rr->resplits,
		       (long long)rr->replacements, pause, dsum / (double)steps);
		for (int r = 0; r < pl->d; r++)
			printf(" %d", rr->m_of[(steps - 1) * (size_t)pl->d + (size_t)r]);
		if (rr->blocks) {
			printf("; blocks");
			for (int s = 0; s < pl->p; s++)
				printf(" %d", rr->blocks[(steps - 1) * (size_t)pl->p + (size_t)s]);
		}
		if (sc->policy.delay)
			printf("; decisions applied %lld steps late, %lld dropped as out of memory by then",
			       (long long)sc->policy.delay, (long long)rr->stale);
		printf("\n");
	}
	printf("simulated %llu events in %.3f s of CPU (%.3g events/s)\n", (unsigned long long)rr->events, rr->wall_s,
	       rr->wall_s > 0 ? (double)rr->events / rr->wall_s : 0.0);
}

/* One run; *mean_step_s and *total_s (the end of its last step, pauses
 * included) when it succeeds. */
static int run_once(const char *path, const char *const *overrides, size_t n_overrides, const char *output,
		    const char *ops_path, bool quiet, const volatile sig_atomic_t *interrupt, double *mean_step_s,
		    double *total_s);

int lbs_hybrid_run(const char *path, const char *const *overrides, size_t n_overrides, const char *output,
		   const char *ops_path, bool quiet, const volatile sig_atomic_t *interrupt)
{
	double mean, total;
	return run_once(path, overrides, n_overrides, output, ops_path, quiet, interrupt, &mean, &total);
}

int lbs_hybrid_run_seeds(const char *path, const char *const *overrides, size_t n_overrides, const char *output,
			 size_t n_seeds, const volatile sig_atomic_t *interrupt, lbs_hy_seeds *out)
{
	lbs_error err = { 0 };
	lbs_hy_scenario sc;
	memset(out, 0, sizeof *out);
	lbs_status st = lbs_hy_scenario_load(&sc, path, overrides, n_overrides, &err);
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim: %s\n", err.msg);
		return st;
	}
	out->seed0 = sc.run.seed;
	out->steps = sc.run.steps;
	snprintf(out->policy, sizeof out->policy, "%s", sc.policy.name);
	snprintf(out->name, sizeof out->name, "%s", sc.run.name);
	lbs_hy_scenario_destroy(&sc);
	const char **ov = malloc((n_overrides + 1) * sizeof *ov);
	out->mean_step_s = malloc(n_seeds * sizeof *out->mean_step_s);
	out->total_s = malloc(n_seeds * sizeof *out->total_s);
	if (!ov || !out->mean_step_s || !out->total_s) {
		free(ov);
		fprintf(stderr, "lbsim: out of memory\n");
		return LBS_EINTERNAL;
	}
	for (size_t i = 0; i < n_overrides; i++)
		ov[i] = overrides[i];
	char seed_set[64];
	ov[n_overrides] = seed_set;
	int rc = 0;
	for (size_t k = 0; rc == 0 && k < n_seeds; k++) {
		/* the seed last, after every --set */
		snprintf(seed_set, sizeof seed_set, "run.seed=%lld", (long long)(out->seed0 + (int64_t)k));
		rc = run_once(path, ov, n_overrides + 1, output, NULL, true, interrupt, &out->mean_step_s[k],
			      &out->total_s[k]);
		out->n = rc == 0 ? k + 1 : k;
	}
	free(ov);
	return rc;
}

void lbs_hy_seeds_free(lbs_hy_seeds *s)
{
	free(s->mean_step_s);
	free(s->total_s);
	memset(s, 0, sizeof *s);
}

static int run_once(const char *path, const char *const *overrides, size_t n_overrides, const char *output,
		    const char *ops_path, bool quiet, const volatile sig_atomic_t *interrupt, double *mean_step_s,
		    double *total_s)
{
	lbs_error err = { 0 };
	lbs_hy_scenario sc;
	lbs_hy_built b;
	run_result rr = { 0 };
	lbs_status st = lbs_hy_scenario_load(&sc, path, overrides, n_overrides, &err);
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim: %s\n", err.msg);
		return st;
	}
	/* the per-group accounting is kept for every step: bound it (4 GB) */
	if ((double)sc.run.steps * (double)sc.job.dp * (double)sc.job.pp > 1e8) {
		fprintf(stderr, "lbsim: %s: [run] steps: %lld steps of %lld groups are more than the 1e8 group-steps "
			"a run records\n", sc.path, (long long)sc.run.steps, (long long)(sc.job.dp * sc.job.pp));
		lbs_hy_scenario_destroy(&sc);
		return LBS_EINPUT;
	}
	if ((st = lbs_hy_plan_build(&sc, &b, &err)) != LBS_OK) {
		fprintf(stderr, "lbsim: %s\n", err.msg);
		lbs_hy_scenario_destroy(&sc);
		return st;
	}
	/* what this run creates, it removes when it fails or is stopped */
	bool new_output = output && access(output, F_OK) != 0;
	if (interrupt && *interrupt)
		st = lbs_error_set(&err, LBS_EINTR, "%s: interrupted before the simulation", sc.path);
	else
		st = simulate(&sc, &b, ops_path, &rr, interrupt, &err);
	if (st == LBS_OK && !quiet)
		summary(&sc, &b, &rr);
	if (st == LBS_OK) {
		*mean_step_s = rr.mean_step_s;
		*total_s = rr.start_s[sc.run.steps - 1] + rr.step_s[sc.run.steps - 1];
	}
	if (st == LBS_OK && output)
		st = record(output, &sc, &b, &rr, interrupt, &err);
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim: %s\n", err.msg);
		if (new_output)
			unlink(output);
		if (rr.ops_created) {
			char meta[1100];
			snprintf(meta, sizeof meta, "%s.meta.yaml", ops_path);
			unlink(ops_path);
			unlink(meta);
		}
	}
	free(rr.step_s);
	free(rr.start_s);
	free(rr.acc);
	free(rr.m_of);
	free(rr.decision_s);
	free(rr.changed);
	free(rr.action_s);
	free(rr.blocks);
	free(rr.timeline);
	lbs_hy_built_free(&b);
	lbs_hy_scenario_destroy(&sc);
	return st;
}
