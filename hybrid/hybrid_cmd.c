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
	size_t n_timeline, timeline_step;
	lbs_hy_account *acc; /* steps x G */
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
		  sqlite3_exec(db, lbs_hybrid_schema_sql, NULL, NULL, NULL) == SQLITE_OK;
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

/* Appends step `step`'s ops (times from its start) to rr->timeline. */
static void keep_timeline(run_result *rr, const lbs_hy_graph *gr, size_t step, const double *start, const double *end)
{
	int p = gr->plan->p;
	for (size_t g = 0; g < gr->n_groups; g++)
		for (size_t l = 0; l < gr->per_group; l++) {
			uint32_t o = lbs_hy_op(gr, g, l);
			if (gr->kind[o] == LBS_HY_PARTIAL)
				continue; /* a bucket's marker, no operation */
			rr->timeline[rr->n_timeline++] = (timeline_row){ .step = (int32_t)step,
									  .dp_rank = (int32_t)(g / (size_t)p),
									  .stage = (int32_t)(g % (size_t)p),
									  .seq = gr->seq[o], .mc = gr->mc[o], .mb = gr->mb[o],
									  .type = gr->type[o], .start_s = start[o],
									  .end_s = end[o] };
		}
}

static lbs_status simulate(const lbs_hy_scenario *sc, const lbs_hy_built *b, const char *ops_path, run_result *rr,
			   const volatile sig_atomic_t *interrupt, lbs_error *err)
{
	const lbs_hy_plan *pl = &b->plan;
	size_t G = (size_t)pl->d * (size_t)pl->p, steps = (size_t)sc->run.steps;
	lbs_hy_graph gr;
	lbs_hy_sim sim;
	lbs_status st = lbs_hy_graph_build(&gr, pl, err);
	if (st != LBS_OK) {
		lbs_error_prefix(err, "%s: [hybrid]", sc->path); /* the degrees and micro-batches size the graph */
		return st;
	}
	if ((st = lbs_hy_sim_create(&sim, &gr, err)) != LBS_OK) {
		lbs_hy_graph_free(&gr);
		return st;
	}
	sim.eng->interrupt = interrupt; /* looked at before every event */
	rr->step_s = calloc(steps, sizeof *rr->step_s);
	rr->start_s = calloc(steps, sizeof *rr->start_s);
	rr->acc = calloc(steps * G, sizeof *rr->acc);
	FILE *ops = NULL;
	if (!rr->step_s || !rr->start_s || !rr->acc)
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
	size_t n_mb = (size_t)pl->d * (size_t)pl->m;
	double *ratio = NULL, tokens_drawn = 0, sq_drawn = 0; /* sums of L / S and (L / S)^2 */
	gsl_rng *rng = NULL;
	if (st == LBS_OK && varied) {
		if (!(ratio = malloc(n_mb * sizeof *ratio)))
			st = lbs_error_set(err, LBS_EINTERNAL, "out of memory for %zu micro-batches' lengths", n_mb);
		else
			rng = lbs_rng_stream((uint64_t)sc->run.seed, "hybrid-lengths", sc->run.name, 0, err);
		if (st == LBS_OK && !rng)
			st = LBS_EINTERNAL;
		sim.length_ratio = ratio;
	}
	/* hybrid_timeline: every step's ops if they fit, else the longest's */
	double *keep_start = NULL, *keep_end = NULL;
	bool every = gr.n_ops * steps <= TIMELINE_MAX_OPS;
	if (st == LBS_OK && gr.n_ops <= TIMELINE_MAX_OPS) {
		keep_start = malloc(gr.n_ops * sizeof *keep_start);
		keep_end = malloc(gr.n_ops * sizeof *keep_end);
		rr->timeline = malloc(gr.n_ops * (every ? steps : 1) * sizeof *rr->timeline);
		if (!keep_start || !keep_end || !rr->timeline)
			st = lbs_error_set(err, LBS_EINTERNAL, "out of memory for the timeline of %zu ops", gr.n_ops);
	}
	double t0 = lbs_cpu_time_s(), sum = 0;
	for (size_t i = 0; st == LBS_OK && i < steps; i++) {
		rr->start_s[i] = sim.now_s;
		if (ratio) {
			tokens_drawn += (double)lbs_hy_lengths_draw(ls, rng, ratio, n_mb);
			for (size_t k = 0; k < n_mb; k++)
				sq_drawn += ratio[k] * ratio[k];
		}
		if ((st = lbs_hy_sim_step(&sim, &rr->step_s[i], err)) != LBS_OK)
			break;
		if (keep_start && (every || i == 0 || rr->step_s[i] > rr->step_s[rr->timeline_step])) {
			/* this step's ops' times, from its start: every step's, or the longest so far */
			rr->timeline_step = i;
			for (size_t o = 0; o < gr.n_ops; o++) {
				keep_start[o] = sim.start[o] - rr->start_s[i];
				keep_end[o] = sim.end[o] - rr->start_s[i];
			}
			if (every)
				keep_timeline(rr, &gr, i, keep_start, keep_end);
		}
		sum += rr->step_s[i];
		for (size_t g = 0; g < G; g++)
			lbs_hy_account_group(&sim, g, rr->start_s[i], rr->step_s[i], &rr->acc[i * G + g]);
		if (ops)
			st = lbs_hy_trace_write(&sim, ops, (int64_t)i, rr->start_s[i], i == 0, b->rank_of, err);
	}
	rr->wall_s = lbs_cpu_time_s() - t0;
	if (st == LBS_OK && keep_start && !every)
		keep_timeline(rr, &gr, rr->timeline_step, keep_start, keep_end);
	free(keep_start);
	free(keep_end);
	if (ops && fclose(ops) != 0 && st == LBS_OK)
		st = lbs_error_set(err, LBS_EIO, "%s: cannot write", ops_path);
	rr->events = sim.events;
	rr->mean_step_s = sum / (double)steps;
	double tokens = (double)pl->d * pl->m * (double)sc->job.micro_batch;
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
		lbs_net_opts oh = { .seq_len = ls->seq_len / 2, .tp = pl->t, .recompute = sc->model.recompute };
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
	lbs_hy_sim_destroy(&sim);
	lbs_hy_graph_free(&gr);
	return st;
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
	printf("%s: %s on %lld GPUs (dp %d x pp %d x tp %d, %s, v %d, %d micro-batches of %lld)\n", sc->run.name,
	       sc->model.name, (long long)sc->n_gpus, pl->d, pl->p, pl->t, schedule_name(pl->schedule), pl->v, pl->m,
	       (long long)sc->job.micro_batch);
	printf("%-12s %10s %12s %6s %8s %8s %8s %8s %8s\n", "steps", "step_s", "tokens/s", "MFU", "compute", "bubble",
	       "comm", "wait", "optim");
	printf("%-12zu %10.4f %12.0f %5.1f%% %7.1f%% %7.1f%% %7.1f%% %7.1f%% %7.1f%%\n", steps, rr->mean_step_s,
	       rr->tokens_per_s, 100 * rr->mfu, 100 * sh[0] / n, 100 * sh[1] / n, 100 * sh[2] / n, 100 * sh[3] / n,
	       100 * sh[4] / n);
	size_t worst = 0;
	for (size_t g = 1; g < G; g++)
		if (b->mem_bytes[g] / b->mem_cap[g] > b->mem_bytes[worst] / b->mem_cap[worst])
			worst = g;
	printf("memory: at most %.1f GB of %.0f GB a GPU (stage %zu)\n", b->mem_bytes[worst] / 1e9,
	       b->mem_cap[worst] / 1e9, worst % (size_t)pl->p);
	printf("simulated %llu events in %.3f s of CPU (%.3g events/s)\n", (unsigned long long)rr->events, rr->wall_s,
	       rr->wall_s > 0 ? (double)rr->events / rr->wall_s : 0.0);
}

int lbs_hybrid_run(const char *path, const char *const *overrides, size_t n_overrides, const char *output,
		   const char *ops_path, bool quiet, const volatile sig_atomic_t *interrupt)
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
	free(rr.timeline);
	lbs_hy_built_free(&b);
	lbs_hy_scenario_destroy(&sc);
	return st;
}
