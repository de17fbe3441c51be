/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lbsim whatif: the what-if analysis of a per-operation trace of
 * hybrid-parallel training; a summary on stdout, the figures in tables of
 * a results database (doc/results.md). */
#include "whatif/whatif_cmd.h"

#include <errno.h>
#include <getopt.h>
#include <stdarg.h>
#include <math.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "config.h"
#include "whatif/forward.h"
#include "sim/recorder.h"
#include "traces/series.h"
#include "util/datapath.h"
#include "util/outfile.h"
#include "whatif/whatif.h"

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: lbsim whatif TRACE.csv[.gz] --meta META.yaml [-o FILE] [options]\n"
		"       lbsim whatif TRACE.json[.gz] --meta META.yaml [-o FILE] [options]\n"
		"       lbsim whatif RESULTS.db [--hybrid N] [-o FILE] [options]\n"
		"\n"
		"Replays a per-operation trace of hybrid-parallel (data x pipeline) training\n"
		"as a dependency graph, then replays it again with every op at its type's\n"
		"typical duration: the ratio of the mean step times is the slowdown S. Restoring\n"
		"the traced durations of one op type, dp_rank, stage or set of workers at a time\n"
		"attributes S (S_t, S_dp, S_stage, S_w, M_S, M_W); counterfactual replays say how\n"
		"much of it balancing policies would recover. Prints a summary and appends the\n"
		"figures to the whatif_* tables of a results database (doc/whatif.md). A trace\n"
		"named *.json or *.json.gz is read as Chrome trace events (ph X events named by\n"
		"the op type, with dp_rank, stage and step in their args). A results database\n"
		"of a hybrid scenario's run is read as that run's --ops-trace file (its\n"
		"hybrid_timeline and hybrid_runs: no --meta).\n"
		"\n"
		"Options:\n"
		"      --meta FILE         the job's metadata (dp_size, dsp_size, pp_size, ...)\n"
		"      --hybrid N          with a results database: its hybrid run N (see\n"
		"                          hybrid_runs; default: the last)\n"
		"  -o, --output FILE       results database (default: results.db)\n"
		"      --forward           also simulate the traced job forward under the hybrid\n"
		"                          policies (static, lbbsp, dbs, oracle, resplit, pack),\n"
		"                          each beside the counterfactual of its fix\n"
		"      --delay K           with --forward: each decision applied K traced steps\n"
		"                          late ([hybrid_policy] delay; default 0)\n"
		"      --blocks K          with --forward: equal blocks a chunk (a stage's)\n"
		"                          that resplit moves (default 8)\n"
		"      --max-trace-rows N  refuse a trace of more than N rows (default 100000000;\n"
		"                          0: no limit)\n"
		"  -q, --quiet             print nothing but errors\n"
		"  -h, --help              this help\n");
}

/* The largest S_dp, S_stage and S_w values printed (all are recorded). */
#define SUMMARY_MAX 8

/* --forward: the traced job simulated forward under the hybrid policies
 * (whatif/forward.h), each beside the counterfactual of the matching fix. */
typedef struct fw_row {
	const char *policy, *counterfactual; /* counterfactual: NULL, none */
	double mean_s, recovered, bound;     /* bound: the counterfactual's recovered share */
	int64_t changes;
} fw_row;
typedef struct fw_result {
	size_t n;                            /* 0: no --forward */
	fw_row row[8];                       /* static and ideal first */
	int blocks;
	int64_t delay;                       /* --delay: steps between a decision and its effect */
} fw_result;

static void print_summary(const lbs_wi_model *m, const lbs_ops_meta *meta, const lbs_wi_result *r,
			  const fw_result *fw)
{
	printf("whatif: %s (%s): %d dp_rank(s) x %d stage(s) x %d chunk(s), %zu steps, %zu workers; "
	       "template %zu ops, %zu dependencies, %zu groups (%zu ops synchronised across dp_ranks)\n",
	       m->trace->path, meta->trial_name, m->D, m->P, m->V, m->n_steps, m->n_workers, m->n_ops,
	       m->n_edges, m->n_comm_groups, m->n_sync_ops);
	printf("replay of the trace: step times within %.2g (relative) of the measured ones\n", r->base_max_rel);
	printf("mean step time: measured %.6f s, no-delay %.6f s, ideal %.6f s\n", r->mean_meas, r->mean_nd,
	       r->mean_id);
	printf("S = %.6f\n", r->S);
	printf("L = %.6f\n", r->L);
	size_t imax = 0, imin = 0;
	for (size_t i = 1; i < r->n_steps; i++) {
		if (r->t_nd[i] / r->t_id[i] > r->t_nd[imax] / r->t_id[imax])
			imax = i;
		if (r->t_nd[i] / r->t_id[i] < r->t_nd[imin] / r->t_id[imin])
			imin = i;
	}
	printf("per step: S max %.4f (step %lld), min %.4f (step %lld)\n", r->t_nd[imax] / r->t_id[imax],
	       (long long)r->steps[imax], r->t_nd[imin] / r->t_id[imin], (long long)r->steps[imin]);
	if (!r->attributed) {
		printf("S < %.2f: no attribution (S_t, S_dp, S_stage, S_w, M_S, M_W are null)\n",
		       LBS_WI_ATTRIBUTE_MIN);
	} else {
		static const char *const label[] = { "S_t", "S_dp", "S_stage", "S_w" };
		for (int k = LBS_WI_OPTYPE; k <= LBS_WI_WORKER; k++) {
			printf("%s:", label[k]);
			size_t shown = 0, more = 0;
			for (size_t i = 0; i < r->n_slow; i++) {
				const lbs_wi_slowdown *s = &r->slow[i];
				if ((int)s->kind != k)
					continue;
				if (shown == SUMMARY_MAX && k != LBS_WI_OPTYPE) {
					more++;
					continue;
				}
				shown++;
				if (k == LBS_WI_WORKER)
					printf(" rank %d (dp %d, stage %d) %.4f;", s->rank, s->dp_rank, s->stage, s->value);
				else
					printf(" %s %.4f;", s->name, s->value);
			}
			if (more)
				printf(" and %zu more (table whatif_slowdowns)", more);
			printf("\n");
		}
		const lbs_wi_test *t[] = { &r->ms, &r->mw };
		const char *name[] = { "M_S", "M_W" };
		for (int k = 0; k < 2; k++)
			printf("%s = %.4f (W = %s; T_rem %.4f s, T_add %.4f s, add %.4f)\n", name[k], t[k]->rem,
			       t[k]->workers, t[k]->t_rem, t[k]->t_add, t[k]->add);
	}
	for (size_t i = 0; i < r->n_policies; i++)
		printf("policy %s: mean step %.6f s, recovers %.1f%% of the slowdown (%s)\n", r->policy[i].name,
		       r->policy[i].mean_t, 100 * r->policy[i].recovered, r->policy[i].what);
	if (!fw->n)
		return;
	const fw_row *st = &fw->row[0], *id = &fw->row[1];
	printf("forward: the traced job simulated forward (%d block(s) a chunk, decisions %lld step(s) late): static "
	       "%.6f s (%+.1f%% of no-delay), ideal %.6f s (%+.1f%% of ideal), S = %.4f\n",
	       fw->blocks, (long long)fw->delay, st->mean_s, 100 * (st->mean_s / r->mean_nd - 1), id->mean_s,
	       100 * (id->mean_s / r->mean_id - 1), st->mean_s / id->mean_s);
	for (size_t k = 2; k < fw->n; k++) {
		const fw_row *w = &fw->row[k];
		printf("forward %s: mean step %.6f s, recovers %.1f%% forward, changed %lld of %zu steps; "
		       "counterfactual %s %.1f%%\n",
		       w->policy, w->mean_s, 100 * w->recovered, (long long)w->changes, m->n_steps,
		       w->counterfactual ? w->counterfactual : "none", 100 * w->bound);
	}
}

/* The counterfactual called name in r (NAN: none). */
static double counterfactual(const lbs_wi_result *r, const char *name)
{
	for (size_t i = 0; name && i < r->n_policies; i++)
		if (!strcmp(r->policy[i].name, name))
			return r->policy[i].recovered;
	return NAN;
}

/* --forward: the job of the trace built twice (as traced, and ideal) and
 * run under static, then under every hybrid policy that applies. */
static lbs_status forward(const lbs_wi_model *m, const lbs_ops_meta *meta, const lbs_wi_result *r, int blocks,
			  int64_t delay, fw_result *fw, lbs_error *err)
{
	lbs_wi_fwd_job job, ideal;
	lbs_status st = lbs_wi_fwd_build(&job, m, r, (int)meta->tp_size, blocks, false, err);
	if (st != LBS_OK)
		return st;
	if ((st = lbs_wi_fwd_build(&ideal, m, r, (int)meta->tp_size, 0, true, err)) != LBS_OK) {
		lbs_wi_fwd_free(&job);
		return st;
	}
	const char *mb = m->D > 1 ? "microbatch-balance-global" : "microbatch-balance";
	struct {
		const char *name, *cf;
		int64_t every;
		bool applies;
	} list[] = {
		{ "static", NULL, 0, true },
		{ "static", NULL, 0, true }, /* on the ideal job */
		{ "lbbsp", "lbbsp", 0, m->D > 1 },
		{ "dbs", "dbs", 1, m->D > 1 },
		{ "oracle", "oracle", 0, m->D > 1 },
		{ "resplit", "repartition", 0, job.b.n_blocks > 0 },
		{ "pack", mb, 0, m->D > 1 },
	};
	fw->n = 0;
	fw->blocks = job.b.n_blocks ? blocks : 0;
	fw->delay = delay;
	for (size_t k = 0; st == LBS_OK && k < sizeof list / sizeof list[0]; k++) {
		if (!list[k].applies)
			continue;
		fw_row *w = &fw->row[fw->n++];
		*w = (fw_row){ .policy = k == 1 ? "ideal" : list[k].name, .counterfactual = list[k].cf };
		st = lbs_wi_fwd_run(k == 1 ? &ideal : &job, list[k].name, list[k].every, delay, &w->mean_s, &w->changes,
					NULL, err);
		w->bound = counterfactual(r, list[k].cf);
	}
	for (size_t k = 0; st == LBS_OK && k < fw->n; k++) {
		double gap = fw->row[0].mean_s - fw->row[1].mean_s;
		fw->row[k].recovered = gap != 0 ? (fw->row[0].mean_s - fw->row[k].mean_s) / gap : NAN;
	}
	lbs_wi_fwd_free(&job);
	lbs_wi_fwd_free(&ideal);
	return st;
}

static lbs_status db_error(sqlite3 *db, const char *path, lbs_error *err)
{
	return lbs_error_set(err, LBS_EIO, "%s: database error: %s", path, db ? sqlite3_errmsg(db) : "cannot open");
}

/* Runs one INSERT with parameters given as fmt letters: i long long, n
 * long long (< 0: NULL), d double (NaN: NULL), s text (NULL: NULL). */
static bool bind_exec(sqlite3 *db, const char *sql, const char *fmt, ...)
{
	sqlite3_stmt *q = NULL;
	if (sqlite3_prepare_v2(db, sql, -1, &q, NULL) != SQLITE_OK)
		return false;
	va_list ap;
	va_start(ap, fmt);
	for (int k = 0; fmt[k]; k++) {
		if (fmt[k] == 'i' || fmt[k] == 'n') {
			long long v = va_arg(ap, long long);
			if (fmt[k] == 'n' && v < 0)
				sqlite3_bind_null(q, k + 1);
			else
				sqlite3_bind_int64(q, k + 1, v);
		} else if (fmt[k] == 'd') {
			double v = va_arg(ap, double);
			if (isnan(v))
				sqlite3_bind_null(q, k + 1);
			else
				sqlite3_bind_double(q, k + 1, v);
		} else {
			const char *s = va_arg(ap, const char *);
			if (s)
				sqlite3_bind_text(q, k + 1, s, -1, SQLITE_TRANSIENT);
			else
				sqlite3_bind_null(q, k + 1);
		}
	}
	va_end(ap);
	bool ok = sqlite3_step(q) == SQLITE_DONE;
	sqlite3_finalize(q);
	return ok;
}

/* Writes the analysis into the results database at path in one
 * transaction; scratch: path is a new file of this process's own (no
 * journal on disk). It is not committed if SIGINT or SIGTERM came while
 * it was written (they are held back meanwhile). */
static lbs_status record_into(const char *path, bool scratch, const char *trace_path, const lbs_ops_meta *meta,
			      const lbs_wi_model *m, const lbs_wi_result *r, const fw_result *fw, lbs_error *err)
{
	lbs_recorder rec;
	lbs_status st = scratch ? lbs_recorder_open_scratch(&rec, path, LBS_DETAIL_RUNS, err)
				: lbs_recorder_open(&rec, path, LBS_DETAIL_RUNS, err);
	if (st != LBS_OK)
		return st;
	lbs_recorder_close(&rec);
	sqlite3 *db = NULL;
	if (sqlite3_open_v2(path, &db, SQLITE_OPEN_READWRITE, NULL) != SQLITE_OK) {
		st = db_error(db, path, err);
		sqlite3_close(db);
		return st;
	}
	lbs_recorder_busy(db);
	if (scratch)
		sqlite3_exec(db, "PRAGMA journal_mode = MEMORY", NULL, NULL, NULL);
	char now[32];
	time_t tt = time(NULL);
	struct tm tm;
	gmtime_r(&tt, &tm);
	strftime(now, sizeof now, "%Y-%m-%dT%H:%M:%SZ", &tm);
	bool ok = sqlite3_exec(db, "PRAGMA foreign_keys = ON; BEGIN IMMEDIATE", NULL, NULL, NULL) == SQLITE_OK &&
		  sqlite3_exec(db, lbs_whatif_schema_sql, NULL, NULL, NULL) == SQLITE_OK;
	ok = ok && bind_exec(db, "INSERT INTO whatif_runs (trace, meta, trial_name, dp_size, dsp_size, pp_size, "
			     "tp_size, vpp_size, world_size, rows, steps, workers, ops, edges, groups, sync_ops, "
			     "lbsim_version, created_at) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, "
			     "?12, ?13, ?14, ?15, ?16, ?17, ?18)", "sssiiiiiiiiiiiiiss", trace_path, meta->path,
			     meta->trial_name, (long long)meta->dp_size, (long long)meta->dsp_size,
			     (long long)meta->pp_size, (long long)meta->tp_size, (long long)meta->vpp_size,
			     (long long)meta->world_size, (long long)m->trace->n, (long long)m->n_steps,
			     (long long)m->n_workers, (long long)m->n_ops, (long long)m->n_edges,
			     (long long)m->n_comm_groups, (long long)m->n_sync_ops, PACKAGE_VERSION, now);
	long long id = (long long)sqlite3_last_insert_rowid(db);
	const char *mins = "INSERT INTO whatif_metrics VALUES (?1, ?2, ?3)";
	double nan = NAN;
	struct {
		const char *name;
		double v;
	} metric[] = {
		{ "S", r->S },
		{ "L", r->L },
		{ "mean_t_meas", r->mean_meas },
		{ "mean_t_base", r->mean_base },
		{ "mean_t_nodelay", r->mean_nd },
		{ "mean_t_ideal", r->mean_id },
		{ "base_max_rel_error", r->base_max_rel },
		{ "M_S", r->attributed ? r->ms.rem : nan },
		{ "M_W", r->attributed ? r->mw.rem : nan },
	};
	for (size_t k = 0; ok && k < sizeof metric / sizeof metric[0]; k++)
		ok = bind_exec(db, mins, "isd", id, metric[k].name, metric[k].v);
	for (size_t i = 0; ok && i < r->n_steps; i++)
		ok = bind_exec(db, "INSERT INTO whatif_steps VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)", "iidddddd", id,
			       (long long)r->steps[i], r->t_meas[i], r->t_base[i], r->t_nd[i], r->t_id[i],
			       r->t_nd[i] / r->t_id[i], r->t_meas[i] / r->t_nd[i]);
	static const char *const label[] = { "S_t", "S_dp", "S_stage", "S_w" };
	const char *sins = "INSERT INTO whatif_slowdowns VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)";
	for (size_t k = 0; ok && k < r->n_slow; k++) {
		const lbs_wi_slowdown *s = &r->slow[k];
		ok = bind_exec(db, sins, "issnnnnd", id, label[s->kind], s->name, (long long)s->dp_rank,
			       (long long)s->stage, (long long)s->rank, -1LL, s->value);
		for (size_t i = 0; ok && s->per_step && i < r->n_steps; i++)
			ok = bind_exec(db, sins, "issnnnnd", id, label[s->kind], s->name, (long long)s->dp_rank,
				       (long long)s->stage, (long long)s->rank, (long long)r->steps[i], s->per_step[i]);
	}
	for (int t = 0; ok && t < LBS_OP_N; t++) {
		bool mean_pool = t == LBS_OP_FORWARD_COMPUTE || t == LBS_OP_BACKWARD_COMPUTE || t == LBS_OP_GC ||
				 t == LBS_OP_OPTIMIZER;
		if (!isnan(r->ideal_d[t]))
			ok = bind_exec(db, "INSERT INTO whatif_ideal VALUES (?1, ?2, 'duration', ?3, ?4)", "issd", id,
				       lbs_optype_name((lbs_optype)t), mean_pool ? "mean" : "median", r->ideal_d[t]);
		if (ok && !isnan(r->ideal_x[t]))
			ok = bind_exec(db, "INSERT INTO whatif_ideal VALUES (?1, ?2, 'transfer', 'median', ?3)", "isd",
				       id, lbs_optype_name((lbs_optype)t), r->ideal_x[t]);
	}
	if (r->attributed) {
		const lbs_wi_test *t[] = { &r->ms, &r->mw };
		const char *name[] = { "M_S", "M_W" };
		for (int k = 0; ok && k < 2; k++)
			ok = bind_exec(db, "INSERT INTO whatif_tests VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
				       "issdddddd", id, name[k], t[k]->workers, t[k]->t_rem, t[k]->t_add, t[k]->t_ori,
				       t[k]->t_ideal, t[k]->rem, t[k]->add);
	}
	for (int w = 0; ok && w < 2; w++)
		for (size_t c = 0; ok && c < (size_t)m->D * m->n_ops; c++) {
			size_t v = c % m->n_ops;
			ok = bind_exec(db, "INSERT INTO whatif_timeline VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
				       "isiiisidd", id, w ? "ideal" : "traced", (long long)r->steps[r->timeline_step],
				       (long long)(c / m->n_ops), (long long)m->stage[v],
				       lbs_optype_name((lbs_optype)m->type[v]), (long long)m->seq[v], r->tl_start[w][c],
				       r->tl_end[w][c]);
		}
	for (size_t k = 0; ok && k < r->n_policies; k++)
		ok = bind_exec(db, "INSERT INTO whatif_policies VALUES (?1, ?2, ?3, ?4, ?5)", "issdd", id,
			       r->policy[k].name, r->policy[k].what, r->policy[k].mean_t, r->policy[k].recovered);
	for (size_t k = 0; ok && k < fw->n; k++)
		ok = bind_exec(db, "INSERT INTO whatif_forward VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)", "issddidii", id,
			       fw->row[k].policy, fw->row[k].counterfactual, fw->row[k].mean_s, fw->row[k].recovered,
			       (long long)fw->row[k].changes, fw->row[k].bound, (long long)fw->blocks,
			       (long long)fw->delay);
	if (ok && lbs_signals_pending()) {
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
		sqlite3_close(db);
		return lbs_error_set(err, LBS_EINTR, "interrupted");
	}
	ok = ok && sqlite3_exec(db, "COMMIT", NULL, NULL, NULL) == SQLITE_OK;
	if (!ok) {
		st = db_error(db, path, err);
		sqlite3_exec(db, "ROLLBACK", NULL, NULL, NULL);
	}
	sqlite3_close(db);
	return st;
}

/* Records the analysis in the results database out, whole or not at all:
 * appended in one transaction to a file that exists; a new file is made
 * as a temporary beside it (util/outfile.h) and linked into place once
 * whole, so that a refusal, a kill or a signal leaves no file. SIGINT and
 * SIGTERM wait until it is done (or not done). */
static lbs_status record(const char *out, const char *trace_path, const lbs_ops_meta *meta,
			 const lbs_wi_model *m, const lbs_wi_result *r, const fw_result *fw, lbs_error *err)
{
	lbs_status st = lbs_recorder_check_path("-o", out, err);
	if (st != LBS_OK)
		return st;
	sigset_t old;
	lbs_signals_hold(&old);
	struct stat sb;
	if (lstat(out, &sb) == 0 || errno != ENOENT) {
		st = record_into(out, false, trace_path, meta, m, r, fw, err);
	} else {
		lbs_tmp t;
		if ((st = lbs_tmp_create(&t, out, false, err)) == LBS_OK &&
		    (st = record_into(t.path, true, trace_path, meta, m, r, fw, err)) == LBS_OK &&
		    !lbs_signals_pending()) {
			/* link, not rename: a file made meanwhile is added to, not replaced */
			if (link(t.path, out) == 0)
				;
			else if (errno == EEXIST)
				st = record_into(out, false, trace_path, meta, m, r, fw, err);
			else if ((errno != EPERM && errno != ENOTSUP && errno != EOPNOTSUPP) || rename(t.path, out) != 0)
				st = lbs_error_set(err, LBS_EIO, "%s: cannot write: %s", out, strerror(errno));
		}
		lbs_tmp_remove(&t);
	}
	lbs_signals_release(&old); /* a signal held back exits here, 130 */
	return st;
}

int lbs_whatif_command(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "meta", required_argument, NULL, 'm' },
		{ "hybrid", required_argument, NULL, 'H' },
		{ "output", required_argument, NULL, 'o' },
		{ "max-trace-rows", required_argument, NULL, 'R' },
		{ "forward", no_argument, NULL, 'F' },
		{ "blocks", required_argument, NULL, 'B' },
		{ "delay", required_argument, NULL, 'D' },
		{ "quiet", no_argument, NULL, 'q' },
		{ "help", no_argument, NULL, 'h' },
		{ NULL, 0, NULL, 0 },
	};
	const char *meta_path = NULL, *out = "results.db";
	long long hybrid = 0;
	bool quiet = false, hybrid_given = false, fwd = false, blocks_given = false, delay_given = false;
	int blocks = 8;
	long long delay = 0;
	int64_t unused;
	int c;
	optind = 1;
	while ((c = getopt_long(argc, argv, "o:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'm': meta_path = optarg; break;
		case 'H': {
			char *end;
			hybrid = strtoll(optarg, &end, 10);
			if (end == optarg || *end || hybrid < 1) {
				fprintf(stderr, "lbsim whatif: --hybrid %s: expected a hybrid_id, 1 or more\n", optarg);
				return LBS_EUSAGE;
			}
			hybrid_given = true;
			break;
		}
		case 'o': out = optarg; break;
		case 'R':
			if (!lbs_row_limit_option("lbsim whatif", true, optarg, &unused))
				return LBS_EUSAGE;
			break;
		case 'F': fwd = true; break;
		case 'B': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (end == optarg || *end || v < 1 || v > 1000) {
				fprintf(stderr, "lbsim whatif: --blocks %s: expected blocks a chunk, 1 to 1000\n", optarg);
				return LBS_EUSAGE;
			}
			blocks = (int)v;
			blocks_given = true;
			break;
		}
		case 'D': {
			char *end;
			delay = strtoll(optarg, &end, 10);
			if (end == optarg || *end || delay < 0 || delay > 1000) {
				fprintf(stderr, "lbsim whatif: --delay %s: expected steps, 0 to 1000\n", optarg);
				return LBS_EUSAGE;
			}
			delay_given = true;
			break;
		}
		case 'q': quiet = true; break;
		case 'h': usage(stdout); return 0;
		default: usage(stderr); return LBS_EUSAGE;
		}
	}
	bool db_in = optind + 1 == argc && lbs_ops_is_sqlite(argv[optind]);
	if (optind + 1 != argc || (!meta_path && !db_in) || (db_in && meta_path) || (hybrid_given && !db_in) ||
	    ((blocks_given || delay_given) && !fwd)) {
		fprintf(stderr, "lbsim whatif: %s\n", optind + 1 != argc ? "expected one trace file"
						      : blocks_given && !fwd ? "--blocks: only with --forward"
						      : delay_given && !fwd ? "--delay: only with --forward"
						      : db_in ? "--meta: a results database holds its run's metadata"
						      : hybrid_given ? "--hybrid: only with a results database"
								     : "--meta META.yaml is required (the job's dp_size, "
								       "dsp_size, pp_size, ...)");
		usage(stderr);
		return LBS_EUSAGE;
	}
	/* A relative trace or metadata path not found from here is looked for
	 * in LBSIM_PATH, the source tree and the installed data, as a
	 * scenario's trace is (util/datapath.h), so that the shipped traces
	 * run from any directory. */
	lbs_datapath tfile, mfile;
	lbs_datapath_find(argv[optind], NULL, "traces/data", &tfile);
	if (meta_path)
		lbs_datapath_find(meta_path, NULL, "traces/data", &mfile);
	const char *trace_path = tfile.path;
	/* SIGINT, SIGTERM: exit 130 at once, nothing written (record holds
	 * them back while it writes). */
	lbs_signals_exit();
	lbs_error err = { 0 };
	lbs_ops_meta meta;
	lbs_ops_trace trace;
	lbs_wi_model model;
	lbs_wi_result res;
	lbs_status st;
	char db_label[1200];
	if (db_in) {
		/* a hybrid run's results: its ops and metadata, as its --ops-trace files */
		st = lbs_ops_read_hybrid(argv[optind], &hybrid, &trace, &meta, &err);
		snprintf(db_label, sizeof db_label, "%.1000s (hybrid run %lld)", argv[optind], hybrid);
		trace_path = db_label;
	} else {
		st = lbs_ops_meta_read(mfile.path, &meta, &err);
		if (st != LBS_OK)
			lbs_datapath_explain(&err, &mfile);
		if (st == LBS_OK && (st = lbs_ops_read_any(trace_path, &trace, &err)) != LBS_OK)
			lbs_datapath_explain(&err, &tfile);
	}
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim whatif: %s\n", err.msg);
		return st;
	}
	if ((st = lbs_ops_check_meta(&trace, &meta, &err)) == LBS_OK &&
	    (st = lbs_wi_model_build(&model, &trace, (int)meta.dsp_size, &err)) == LBS_OK) {
		if ((st = lbs_wi_analyse(&model, &res, &err)) == LBS_OK) {
			fw_result fw = { 0 };
			if (fwd)
				st = forward(&model, &meta, &res, blocks, delay, &fw, &err);
			if (st == LBS_OK)
				st = record(out, trace_path, &meta, &model, &res, &fw, &err);
			if (st == LBS_OK && !quiet)
				print_summary(&model, &meta, &res, &fw);
			lbs_wi_result_free(&res);
		}
		lbs_wi_model_free(&model);
	}
	lbs_ops_free(&trace);
	if (st != LBS_OK)
		fprintf(stderr, "lbsim whatif: %s\n", err.msg);
	return st;
}
