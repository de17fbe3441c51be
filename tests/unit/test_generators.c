/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Generators (traces/gen*.c) against hand-computed completions, a literal
 * transcription of the DBS authors' code, Uta et al.'s measured runs, and
 * whole runs; their scenario sections and the errors they give. */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/rng.h"
#include "models/policy.h"
#include "sim/run.h"
#include "sim/scenario.h"
#include "traces/gen.h"
#include "traces/monitor.h"
#include "traces/netfit.h"
#include "tests/unit/suites.h"

static bool rel_close(double a, double b, double tol) { return fabs(a - b) <= tol * fabs(b); }
#define EQ(a, b) rel_close((a), (b), 1e-12)

/* ---- CPU credits ------------------------------------------------------- */

/* t2.micro (6 credits/h, 1 vCPU, 30 launch credits, baseline 10%), busy
 * from 0 with 2100 s of work. By hand: the launch credits last
 * 30 / (1/60 per s) = 1800 s, while 1800 * 6/3600 = 3 credits are earned;
 * those fall at 1/60 - 1/600 = 0.015 per s for 3 / 0.015 = 200 s: the
 * bucket is empty at 2000 s, with 100 s of work left at 10%: done at 3000 s.
 * Idle for 600 s, it earns 1 credit; 100 s of work then runs
 * 1 / 0.015 = 66.67 s at full speed and 33.33 s at 10% (333.3 s): 400 s. */
static void test_credit_depletion(void)
{
	lbs_error err;
	lbs_avail a;
	const lbs_credit_type *t = lbs_credit_type_find("t2.micro");
	CU_ASSERT_FATAL(t != NULL);
	CU_ASSERT(EQ(lbs_credit_baseline(t), 0.1));
	CU_ASSERT_FATAL(lbs_credit_create(t, t->launch, 0, &a, &err) == LBS_OK);
	CU_ASSERT(EQ(lbs_avail_reading(&a, 0, 0, LBS_READING_CPU_CREDITS), 30));
	CU_ASSERT(EQ(lbs_avail_finish(&a, 0, 2100, 0), 3000));
	CU_ASSERT(fabs(lbs_avail_reading(&a, 3000, 0, LBS_READING_CPU_CREDITS)) < 1e-12);
	CU_ASSERT(EQ(lbs_avail_reading(&a, 3600, 0, LBS_READING_CPU_CREDITS), 1));
	CU_ASSERT(isnan(lbs_avail_reading(&a, 3600, 0, LBS_READING_CPU_UTIL)));
	CU_ASSERT(EQ(lbs_avail_finish(&a, 3600, 100, 1), 4000));
	lbs_avail_destroy(&a);
	CU_ASSERT_PTR_NULL(a.ops);

	/* Exactly the work that fits before depletion finishes at 2000 s. */
	CU_ASSERT_FATAL(lbs_credit_create(t, t->launch, 0, &a, &err) == LBS_OK);
	CU_ASSERT(EQ(lbs_avail_finish(&a, 0, 2000, 0), 2000));
	CU_ASSERT(EQ(a.ops->level(a.state, 2000, 1), 0.1));
	CU_ASSERT(EQ(a.ops->level(a.state, 2001, 1), 1)); /* idle a second: a little credit */
	lbs_avail_destroy(&a);
}

/* The balance limit, launch credits beyond it, and a T3 with no launch
 * credits. AWS's own example ("Standard mode concepts for burstable
 * instances"): a t2.micro idle for 24 hours holds 30 + 144 = 174 credits. */
static void test_credit_limits(void)
{
	lbs_error err;
	lbs_avail a;
	const lbs_credit_type *micro = lbs_credit_type_find("t2.micro");
	CU_ASSERT_FATAL(lbs_credit_create(micro, micro->launch, 0, &a, &err) == LBS_OK);
	CU_ASSERT(EQ(lbs_avail_reading(&a, 24 * 3600.0, 0, LBS_READING_CPU_CREDITS), 174));
	CU_ASSERT(EQ(lbs_avail_reading(&a, 48 * 3600.0, 0, LBS_READING_CPU_CREDITS), 174));
	lbs_avail_destroy(&a);

	/* t3.micro: 12 credits/h, 2 vCPUs, limit 288, baseline 10%, no launch
	 * credits. With none, 10 s of work take 100 s. After 48 h idle it holds
	 * 288, spent at 2/60 - 12/3600 = 0.03 per s: 9600 s at full speed. */
	const lbs_credit_type *t3 = lbs_credit_type_find("t3.micro");
	CU_ASSERT_FATAL(t3 && t3->launch == 0);
	CU_ASSERT(EQ(lbs_credit_baseline(t3), 0.1));
	CU_ASSERT_FATAL(lbs_credit_create(t3, 0, 0, &a, &err) == LBS_OK);
	CU_ASSERT(EQ(lbs_avail_finish(&a, 0, 10, 0), 100));
	double t0 = 100 + 48 * 3600.0;
	CU_ASSERT(EQ(lbs_avail_reading(&a, t0, 0, LBS_READING_CPU_CREDITS), 288));
	CU_ASSERT(EQ(lbs_avail_finish(&a, t0, 9600, 1), t0 + 9600));
	CU_ASSERT(EQ(lbs_avail_finish(&a, t0 + 9600, 1, 2), t0 + 9610)); /* empty: 10% */
	lbs_avail_destroy(&a);

	/* Every type's baseline is the published one. */
	static const struct { const char *name; double baseline; } pub[] = {
		{ "t2.nano", 0.05 }, { "t2.small", 0.2 }, { "t2.medium", 0.2 }, { "t2.large", 0.3 },
		{ "t2.xlarge", 0.225 }, { "t2.2xlarge", 0.17 }, { "t3.nano", 0.05 }, { "t3.small", 0.2 },
		{ "t3.medium", 0.2 }, { "t3.large", 0.3 }, { "t3.xlarge", 0.4 }, { "t3.2xlarge", 0.4 },
	};
	for (size_t i = 0; i < sizeof pub / sizeof pub[0]; i++)
		CU_ASSERT(rel_close(lbs_credit_baseline(lbs_credit_type_find(pub[i].name)), pub[i].baseline,
				 1e-9));
	CU_ASSERT_EQUAL(lbs_credit_create(t3, 0, 289, &a, &err), LBS_EINPUT);
}

/* The piecewise integration does not depend on how work is cut: 50 calls
 * back to back end where one call with all the work does. */
static void test_credit_split(void)
{
	lbs_error err;
	lbs_avail one, many;
	const lbs_credit_type *t = lbs_credit_type_find("t2.xlarge");
	CU_ASSERT_FATAL(lbs_credit_create(t, t->launch, 100, &one, &err) == LBS_OK);
	CU_ASSERT_FATAL(lbs_credit_create(t, t->launch, 100, &many, &err) == LBS_OK);
	double end = lbs_avail_finish(&one, 0, 5000, 0), t1 = 0;
	for (int k = 0; k < 50; k++)
		t1 = lbs_avail_finish(&many, t1, 100, k);
	CU_ASSERT(rel_close(t1, end, 1e-12));
	/* By hand: 120 launch credits at 4/60 per s = 1800 s, earning
	 * 1800 * 54/3600 = 27; then 127 at 4/60 - 54/3600 = 0.051666.. per s
	 * = 2458.06 s; the rest at 22.5%. */
	double full = 1800 + 127 / (4 / 60.0 - 54 / 3600.0);
	CU_ASSERT(rel_close(end, full + (5000 - full) / 0.225, 1e-12));
	lbs_avail_destroy(&one);
	lbs_avail_destroy(&many);
}

/* ---- background job ---------------------------------------------------- */

#define BG_PHASES 4096

typedef struct phases {
	double end[BG_PHASES]; /* phase i covers [end[i-1], end[i]), the first from 0 */
	bool on[BG_PHASES];
	size_t n;
} phases;

/* The process replayed from the same stream: the first state, then one
 * exponential per phase. */
static void replay_background(const lbs_background_params *p, gsl_rng *r, phases *ph, double until)
{
	bool on = gsl_rng_uniform(r) < p->on_mean_s / (p->on_mean_s + p->off_mean_s);
	double t = 0;
	for (ph->n = 0; ph->n < BG_PHASES && t <= until; ph->n++) {
		t += gsl_ran_exponential(r, on ? p->on_mean_s : p->off_mean_s);
		ph->end[ph->n] = t;
		ph->on[ph->n] = on;
		on = !on;
	}
}

/* The completion by brute force over the replayed phases. */
static double integrate(const phases *ph, double load, double t0, double w)
{
	double t = t0;
	for (size_t i = 0; i < ph->n; i++) {
		if (ph->end[i] <= t)
			continue;
		double a = ph->on[i] ? 1 - load : 1, room = a * (ph->end[i] - t);
		if (w <= room)
			return t + w / a;
		w -= room;
		t = ph->end[i];
	}
	return NAN;
}

static void test_background_exact(void)
{
	lbs_error err;
	lbs_background_params p = { .on_mean_s = 20, .off_mean_s = 40, .load = 0.75, .memory = 0.4 };
	gsl_rng *r = lbs_rng_stream(7, "test", "background", 0, &err);
	gsl_rng *copy = lbs_rng_stream(7, "test", "background", 0, &err);
	lbs_avail a;
	CU_ASSERT_FATAL(lbs_background_create(&p, r, &a, &err) == LBS_OK);
	static phases ph;
	replay_background(&p, copy, &ph, 20000);
	gsl_rng_free(copy);
	CU_ASSERT_FATAL(ph.n > 100);
	/* Iterations of 7 s of work with 3 s idle between them. */
	double t = 0;
	int bad = 0, switches = 0;
	for (int k = 0; k < 500; k++) {
		double want = integrate(&ph, p.load, t, 7);
		double got = lbs_avail_finish(&a, t, 7, k);
		bad += !rel_close(got, want, 1e-12);
		switches += got - t > 7 && got - t < 28; /* both levels within one iteration */
		t = got + 3;
		/* What a monitor reads at the barrier. */
		size_t i = 0;
		while (ph.end[i] <= t)
			i++;
		bad += lbs_avail_reading(&a, t, 0, LBS_READING_CPU_UTIL) != (ph.on[i] ? 0.75 : 0);
		bad += lbs_avail_reading(&a, t, 0, LBS_READING_MEM_UTIL) != (ph.on[i] ? 0.4 : 0);
		bad += a.ops->level(a.state, t, k) != (ph.on[i] ? 0.25 : 1);
		/* The level far ahead comes from a copy of the stream. */
		size_t j = i + 3;
		bad += a.ops->level(a.state, ph.end[j - 1] + 1e-9, k) != (ph.on[j] ? 0.25 : 1);
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT(switches > 10);
	lbs_avail_destroy(&a);
}

/* In the long run the job is on on/(on + off) of the time: the mean speed
 * is 1 - load * 1/3 here. Same seed, same process; another worker's
 * stream, another one. */
static void test_background_stationary(void)
{
	lbs_error err;
	lbs_background_params p = { .on_mean_s = 10, .off_mean_s = 20, .load = 0.6, .memory = 0.6 };
	lbs_avail a, b, c;
	CU_ASSERT_FATAL(lbs_background_create(&p, lbs_rng_stream(1, "test", "g", 0, &err), &a, &err) == LBS_OK);
	CU_ASSERT_FATAL(lbs_background_create(&p, lbs_rng_stream(1, "test", "g", 0, &err), &b, &err) == LBS_OK);
	CU_ASSERT_FATAL(lbs_background_create(&p, lbs_rng_stream(1, "test", "g", 1, &err), &c, &err) == LBS_OK);
	double w = 1e6, ta = lbs_avail_finish(&a, 0, w, 0);
	CU_ASSERT(rel_close(ta, w / (1 - 0.6 / 3), 0.01)); /* ~33,000 phases: within 1% */
	CU_ASSERT_EQUAL(lbs_avail_finish(&b, 0, w, 0), ta);
	CU_ASSERT(lbs_avail_finish(&c, 0, w, 0) != ta);
	lbs_avail_destroy(&a);
	lbs_avail_destroy(&b);
	lbs_avail_destroy(&c);
}

/* ---- network token bucket ---------------------------------------------- */

/* One NIC: burst 8, baseline 2, bucket 60 (bytes, bytes/s), reference 10.
 * The pace is 8 (factor 0.8) until the bucket empties at 60 / (8 - 2) = 10 s,
 * having done 8 s of nominal work; then 2 (factor 0.2). 10 s of work: the
 * last 2 s take 10 s: done at 20. Idle until 35, it refills 2 * 15 = 30:
 * 30 / 6 = 5 s at 0.8 (4 of work), then 6 at 0.2 = 30 s: done at 70. */
static void test_netbucket_closed_form(void)
{
	lbs_error err;
	lbs_avail a;
	lbs_netbucket_nic nic = { .burst_Bps = 8, .baseline_Bps = 2, .bucket_bytes = 60, .initial_bytes = 60 };
	CU_ASSERT_FATAL(lbs_netbucket_create(&nic, 1, 10, &a, &err) == LBS_OK);
	CU_ASSERT(EQ(a.ops->level(a.state, 0, 0), 0.8));
	CU_ASSERT(EQ(lbs_avail_finish(&a, 0, 10, 0), 20));
	CU_ASSERT(EQ(a.ops->level(a.state, 20, 1), 0.2));
	CU_ASSERT(EQ(lbs_avail_finish(&a, 35, 10, 1), 70));
	CU_ASSERT(EQ(lbs_avail_finish(&a, 70, 0, 2), 70)); /* nothing to send */
	lbs_avail_destroy(&a);

	/* A reference below the burst rate: the pace is the reference, 4, so
	 * the bucket drains at 2: full speed for 30 s, then factor 0.5. */
	CU_ASSERT_FATAL(lbs_netbucket_create(&nic, 1, 4, &a, &err) == LBS_OK);
	CU_ASSERT(EQ(lbs_avail_finish(&a, 0, 40, 0), 30 + 10 / 0.5));
	lbs_avail_destroy(&a);

	/* Two kinds of NIC, A = {8, 2, 60} and B = {6, 3, 6}, reference 10.
	 * Pace min(8, 6) = 6 (0.6): B drains at 3, empty at 2 s; A is then at
	 * 60 - 4 * 2 = 52. Pace min(8, 3) = 3 (0.3): A drains at 1, empty 52 s
	 * later (t = 54), B stays empty. Pace min(2, 3) = 2 (0.2), and B
	 * refills at 1. Work 0.6 * 2 + 0.3 * 52 + 0.2 * 10 = 18.8 ends at 64. */
	lbs_netbucket_nic two[2] = { nic, { .burst_Bps = 6, .baseline_Bps = 3, .bucket_bytes = 6,
					    .initial_bytes = 6 } };
	CU_ASSERT_FATAL(lbs_netbucket_create(two, 2, 10, &a, &err) == LBS_OK);
	CU_ASSERT(rel_close(lbs_avail_finish(&a, 0, 18.8, 0), 64, 1e-12));
	lbs_avail_destroy(&a);

	CU_ASSERT_EQUAL(lbs_netbucket_create(&nic, 0, 10, &a, &err), LBS_EINPUT);
	nic.burst_Bps = 1; /* below the baseline */
	CU_ASSERT_EQUAL(lbs_netbucket_create(&nic, 1, 10, &a, &err), LBS_EINPUT);
}

static const char *srcdir(void)
{
	const char *s = getenv("top_srcdir");
	return s ? s : ".";
}

/* The fitted table against every measured run of Uta et al.: the time to
 * empty it predicts for the run's own burst rate, and the source's drop to
 * the baseline at exactly that time. Errors: doc/generators.md. */
static void test_netbucket_uta_runs(void)
{
	char dir[1024];
	snprintf(dir, sizeof dir, "%s/traces/data/ec2-network-token-bucket-uta2020", srcdir());
	lbs_error err;
	lbs_netfit_run *runs;
	size_t n;
	CU_ASSERT_FATAL(lbs_netfit_read_dir(dir, &runs, &n, &err) == LBS_OK);
	CU_ASSERT_EQUAL(n, 40);
	size_t depleted = 0, bad = 0;
	double worst = 0;
	for (size_t i = 0; i < n; i++) {
		const lbs_netfit_run *r = &runs[i];
		const lbs_netbucket_type *t = lbs_netbucket_type_find(r->type);
		CU_ASSERT_FATAL(t != NULL);
		double pred = lbs_netfit_predict(t, r->burst_Gbps);
		if (!r->depleted) {
			bad += !(pred > (double)r->rows); /* it must not empty within the run */
			continue;
		}
		depleted++;
		double e = fabs(pred - r->t_empty_s) / r->t_empty_s;
		worst = e > worst ? e : worst;
		bad += e > 0.06;
		/* The source, sending at the run's burst rate from a full bucket:
		 * factor 1 until pred, then baseline / burst. */
		lbs_netbucket_nic nic = { r->burst_Gbps * 1.25e8, t->baseline_Gbps * 1.25e8,
					  t->bucket_Gbit * 1.25e8, t->bucket_Gbit * 1.25e8 };
		lbs_avail a;
		CU_ASSERT_FATAL(lbs_netbucket_create(&nic, 1, nic.burst_Bps, &a, &err) == LBS_OK);
		double w = 2 * pred;
		double want = pred + (w - pred) * r->burst_Gbps / t->baseline_Gbps;
		bad += !rel_close(lbs_avail_finish(&a, 0, w, 0), want, 1e-9);
		lbs_avail_destroy(&a);
	}
	CU_ASSERT_EQUAL(depleted, 37);
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT(worst > 0.01); /* the check above can fail: real runs scatter */

	/* The shipped table is what the fit gives (to the digits it prints). */
	for (const lbs_netbucket_type *t = lbs_netbucket_types; t->name; t++) {
		lbs_netbucket_type f;
		CU_ASSERT_FATAL(lbs_netfit_type(runs, n, t->name, &f, &err) == LBS_OK);
		CU_ASSERT(rel_close(f.bucket_Gbit, t->bucket_Gbit, 1e-4));
		CU_ASSERT(rel_close(f.baseline_Gbps, t->baseline_Gbps, 1e-4));
		CU_ASSERT(rel_close(f.burst_Gbps, t->burst_Gbps, 1e-3));
		CU_ASSERT_EQUAL(f.runs, t->runs);
		CU_ASSERT(t->max_rel_err < 0.06 && t->rms_rel_err < 0.03);
	}
	free(runs);
}

/* Bad data is refused with the file and line. */
static void test_netfit_bad_data(void)
{
	char *path = write_temp("crnt bw = 9.6\ncrnt bw = nine\n");
	char bw[1100];
	snprintf(bw, sizeof bw, "%s-x.bw", path);
	CU_ASSERT_FATAL(rename(path, bw) == 0);
	lbs_netfit_run r;
	lbs_error err;
	CU_ASSERT_EQUAL(lbs_netfit_read_run(bw, &r, &err), LBS_EINPUT);
	char where[1200];
	snprintf(where, sizeof where, "%s:2:", bw);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, where));
	unlink(bw);
	free(path);
}

/* ---- DBS disturbance --------------------------------------------------- */

/* fault_tolerance_wait() of dbs.py (commit d516435), transcribed line by
 * line with its globals, drawing from the same kind of stream: random() is
 * gsl_rng_uniform, randint(a, b) is a + gsl_rng_uniform_int(b - a + 1). */
typedef struct dbs_ref {
	gsl_rng *r;
	double ftc;
	bool fault_wait;
	long fault_round, fault_wait_time, saved_epoch;
} dbs_ref;

static double dbs_ref_wait(dbs_ref *g, long epoch, long batch_num)
{
	if (g->fault_wait) {
		if (epoch <= g->fault_round)
			return (double)g->fault_wait_time / (double)batch_num;
		g->fault_wait = false;
	}
	if (g->saved_epoch != epoch)
		g->saved_epoch = epoch;
	else
		return 0;
	double luck = gsl_rng_uniform(g->r);
	if (luck < g->ftc) {
		g->fault_wait_time = 5 + (long)gsl_rng_uniform_int(g->r, 6);
		g->fault_round = 4 + (long)gsl_rng_uniform_int(g->r, 17);
		g->fault_round += epoch;
		g->fault_wait = true;
	}
	return 0;
}

static void test_dbs_matches_code(void)
{
	lbs_error err;
	for (int trial = 0; trial < 3; trial++) {
		double prob = trial == 0 ? 0.1 : trial == 1 ? 0.5 : 1.0;
		lbs_dbs_params p = { prob, 5, 10, 4, 20, 7 };
		lbs_avail a;
		lbs_avail inner = { NULL, NULL, 0.5 }; /* half speed: 1 s of work takes 2 s */
		CU_ASSERT_FATAL(lbs_dbs_create(&p, inner, lbs_rng_stream(3, "test", "dbs", (uint64_t)trial, &err),
					       &a, &err) == LBS_OK);
		dbs_ref ref = { .r = lbs_rng_stream(3, "test", "dbs", (uint64_t)trial, &err), .ftc = prob,
				.saved_epoch = -1 };
		int bad = 0, slowed = 0;
		double t = 0;
		for (int64_t it = 0; it < 7 * 300; it++) {
			double want = dbs_ref_wait(&ref, (long)(it / 7), 7);
			double got = lbs_avail_finish(&a, t, 1, it) - t - 2;
			bad += !rel_close(got + 1, want + 1, 1e-12);
			bad += !rel_close(lbs_dbs_delay(&a, it) + 1, want + 1, 1e-12);
			slowed += want > 0;
			t += 2 + got + 0.5;
		}
		CU_ASSERT_EQUAL(bad, 0);
		CU_ASSERT(slowed > 0);
		gsl_rng_free(ref.r);
		lbs_avail_destroy(&a);
	}
}

/* With probability 1, by hand: epoch 0's first iteration draws D and n and
 * has no delay; its other iterations and those of epochs 1..n take D/ipe
 * each (D per whole epoch); epoch n+1 draws again at once. */
static void test_dbs_by_hand(void)
{
	lbs_error err;
	lbs_dbs_params p = { 1.0, 5, 10, 4, 20, 4 };
	lbs_avail a;
	CU_ASSERT_FATAL(lbs_dbs_create(&p, (lbs_avail){ NULL, NULL, 1 }, lbs_rng_stream(9, "t", "d", 0, &err),
				       &a, &err) == LBS_OK);
	gsl_rng *r = lbs_rng_stream(9, "t", "d", 0, &err);
	gsl_rng_uniform(r);
	double D = 5 + (double)gsl_rng_uniform_int(r, 6);
	int64_t until = 4 + (int64_t)gsl_rng_uniform_int(r, 17);
	gsl_rng_uniform(r);
	double D2 = 5 + (double)gsl_rng_uniform_int(r, 6);
	gsl_rng_free(r);
	double epoch_delay = 0;
	for (int64_t it = 0; it < 4 * (until + 2); it++) {
		double d = lbs_avail_finish(&a, (double)it, 0, it) - (double)it;
		double want = it == 0 || it == 4 * (until + 1) ? 0 : it < 4 * (until + 1) ? D / 4 : D2 / 4;
		CU_ASSERT(want == 0 ? d == 0 : EQ(d, want));
		if (it / 4 == 1)
			epoch_delay += d;
	}
	CU_ASSERT(EQ(epoch_delay, D));
	lbs_avail_destroy(&a);

	/* Probability 0: never slowed. */
	p.probability = 0;
	CU_ASSERT_FATAL(lbs_dbs_create(&p, (lbs_avail){ NULL, NULL, 1 }, lbs_rng_stream(9, "t", "d", 0, &err),
				       &a, &err) == LBS_OK);
	double t = 0;
	for (int64_t it = 0; it < 400; it++)
		t = lbs_avail_finish(&a, t, 1, it);
	CU_ASSERT_EQUAL(t, 400);
	lbs_avail_destroy(&a);
}

/* ---- scenarios and runs ------------------------------------------------ */

#define BASE "[run]\nglobal_batch = 100\niterations = 40\nseed = 3\n[model]\ngradient = 1 GB\n"

static lbs_status load_text(lbs_scenario *sc, const char *text, lbs_error *err, char **path)
{
	*path = write_temp(text);
	lbs_status st = lbs_scenario_load(sc, *path, NULL, 0, err);
	return st;
}

typedef struct rec {
	size_t n, n_workers;
	double compute[64][4];
	double agg[64];
} rec;

static lbs_status keep(void *ctx, const lbs_iteration_record *r, lbs_error *err)
{
	(void)err;
	rec *c = ctx;
	if (c->n < 64) {
		for (size_t i = 0; i < r->n_workers && i < 4; i++)
			c->compute[c->n][i] = r->compute_s[i];
		c->agg[c->n] = r->aggregation_s;
	}
	c->n++;
	c->n_workers = r->n_workers;
	return LBS_OK;
}

static lbs_status run_text(const char *text, rec *c, lbs_error *err)
{
	char *path;
	lbs_scenario sc;
	lbs_run run;
	memset(c, 0, sizeof *c);
	lbs_status st = load_text(&sc, text, err, &path);
	unlink(path);
	free(path);
	if (st != LBS_OK)
		return st;
	if ((st = lbs_run_create(&run, &sc, NULL, err)) == LBS_OK) {
		st = lbs_run_execute(&run, keep, c, NULL, err);
		lbs_run_destroy(&run);
	}
	lbs_scenario_destroy(&sc);
	return st;
}

/* One t2.micro worker doing 100 s of work per iteration, nothing to
 * aggregate: 18 iterations on launch credits (1800 s, earning 3), two more
 * on those 3 (200 s), then 1000 s each at 10%. */
static void test_run_credits(void)
{
	rec c;
	lbs_error err;
	CU_ASSERT_FATAL(run_text(BASE "[network]\ntopology = none\n"
				      "[workers.t2]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 1 s\n"
				      "[generator.credits]\nkind = cpu_credits\nworkers = t2\n"
				      "instance_type = t2.micro\n", &c, &err) == LBS_OK);
	CU_ASSERT_EQUAL_FATAL(c.n, 40);
	int bad = 0;
	for (size_t k = 0; k < 40; k++)
		bad += !rel_close(c.compute[k][0], k < 20 ? 100 : 1000, 1e-9);
	CU_ASSERT_EQUAL(bad, 0);
}

/* Two workers, ring, 1 GB gradient at 1 GB/s: 1 s of transfer at full
 * speed. A bucket of 1.5 GB, burst 1 GB/s, baseline 0.25 GB/s; compute 1 s.
 * By hand: transfers 1 and 2 drain 0.75 each (refilling 0.25 during each
 * compute): 0.75 left, then 0.25. Transfer 3 starts with 0.5: 2/3 s at
 * full speed, the last 1/3 of work at 1/4 speed: 2 s in all. From then on
 * each transfer starts with 0.25: 1/3 s, then 2/3 at 1/4: 3 s. */
static void test_run_network_bucket(void)
{
	rec c;
	lbs_error err;
	CU_ASSERT_FATAL(run_text(BASE "[network]\ntopology = ring\nbandwidth = 1 GB/s\n"
				      "[workers.c5]\ncount = 2\ndevice = cpu\ncost = linear\nper_sample = 20 ms\n"
				      "[generator.nic]\nkind = network_bucket\nworkers = c5\ninstance_type = c5.large\n"
				      "burst_rate = 1 GB/s\nbaseline_rate = 0.25 GB/s\nbucket_size = 1.5 GB\n",
				 &c, &err) == LBS_OK);
	CU_ASSERT_EQUAL_FATAL(c.n, 40);
	int bad = 0;
	for (size_t k = 0; k < 40; k++) {
		bad += !rel_close(c.compute[k][0], 1, 1e-12);
		bad += !rel_close(c.agg[k], k < 2 ? 1 : k == 2 ? 2 : 3, 1e-9);
	}
	CU_ASSERT_EQUAL(bad, 0);
}

/* A parameter server: 4 workers, 100 MB, one 10 Gbit/s server, workers'
 * NICs at 10 Gbit/s nominal, their bucket empty at time 0, so they send at
 * the 1.25 Gbit/s baseline. The server's share is 10/4 = 2.5 Gbit/s a
 * worker, the pace at nominal bandwidth (2 * 100 MB at 2.5 Gbit/s is the
 * model's 0.64 s), so the worker's NIC is the bottleneck: 2 * 100 MB /
 * 1.25 Gbit/s = 1.28 s. By hand, with the 1 ms of compute before it (the
 * bucket earns 156,250 B): 1 ms at the full 2.5 Gbit/s pace (draining
 * 156.25 MB/s net), then the remaining 0.639 s of nominal transfer at half
 * pace: 0.001 + 1.278 = 1.279 s. (Stretching the whole nominal transfer by
 * the worker's factor 1.25/10 gave 5.119 s.) With a 2.5 Gbit/s baseline the
 * workers keep up with the server: 0.64 s. */
#define PS_BUCKET \
	"[run]\nglobal_batch = 4\niterations = 1\nseed = 3\n[model]\ngradient = 100 MB\n" \
	"[network]\ntopology = ps\nbandwidth = 10 Gbit/s\nlatency = 0 s\n" \
	"[workers.c5]\ncount = 4\ndevice = cpu\ncost = linear\nper_sample = 1 ms\n" \
	"[generator.nic]\nkind = network_bucket\nworkers = c5\ninstance_type = c5.large\n" \
	"burst_rate = 10 Gbit/s\nbaseline_rate = %s Gbit/s\nbucket_size = 1 GB\n" \
	"initial_fill = 0\n"

static void test_run_network_bucket_ps(void)
{
	rec c;
	lbs_error err;
	char text[1024];
	snprintf(text, sizeof text, PS_BUCKET, "1.25");
	CU_ASSERT_FATAL(run_text(text, &c, &err) == LBS_OK);
	CU_ASSERT_EQUAL_FATAL(c.n, 1);
	CU_ASSERT(rel_close(c.agg[0], 1.279, 1e-12));
	snprintf(text, sizeof text, PS_BUCKET, "2.5");
	CU_ASSERT_FATAL(run_text(text, &c, &err) == LBS_OK);
	CU_ASSERT(rel_close(c.agg[0], 0.64, 1e-12));
}

/* A background job and a disturbance on one group: the same seed gives the
 * same run, another seed another one; the engine's two modes agree; the
 * other group is untouched. */
#define MIXED \
	"[run]\nglobal_batch = 100\nepochs = 6\ndataset_samples = 1000\nseed = %d\nworker_events = %s\n" \
	"[model]\ngradient = 1 MB\n[network]\ntopology = ring\nbandwidth = 1 GB/s\n" \
	"[workers.a]\ncount = 2\ndevice = cpu\ncost = linear\nper_sample = 10 ms\n" \
	"[workers.b]\ncount = 2\ndevice = cpu\ncost = linear\nper_sample = 10 ms\n" \
	"[generator.bg]\nkind = background\nworkers = a\non_mean = 2 s\noff_mean = 3 s\nload = 50%%\n" \
	"[generator.dbs]\nkind = dbs_disturbance\nworkers = a\nprobability = 0.5\n"

static void test_run_deterministic(void)
{
	char text[2048];
	static rec x, y, z, w;
	lbs_error err;
	snprintf(text, sizeof text, MIXED, 4, "auto");
	CU_ASSERT_FATAL(run_text(text, &x, &err) == LBS_OK);
	CU_ASSERT_FATAL(run_text(text, &y, &err) == LBS_OK);
	snprintf(text, sizeof text, MIXED, 4, "always");
	CU_ASSERT_FATAL(run_text(text, &w, &err) == LBS_OK);
	snprintf(text, sizeof text, MIXED, 5, "auto");
	CU_ASSERT_FATAL(run_text(text, &z, &err) == LBS_OK);
	CU_ASSERT_EQUAL(x.n, 60);
	CU_ASSERT(memcmp(x.compute, y.compute, sizeof x.compute) == 0);
	CU_ASSERT(memcmp(x.compute, w.compute, sizeof x.compute) == 0);
	CU_ASSERT(memcmp(x.compute, z.compute, sizeof x.compute) != 0);
	int bad = 0, varied = 0;
	for (size_t k = 0; k < 60; k++) {
		bad += x.compute[k][2] != 0.25 || x.compute[k][3] != 0.25; /* group b: 25 samples * 10 ms */
		bad += x.compute[k][0] < 0.25 - 1e-12;
		varied += x.compute[k][0] != x.compute[k][1];
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT(varied > 0); /* each worker has its own stream */
}

/* Per iteration: compute time of every worker (up to 4), the compute
 * phase, samples processed by worker 0 and the policy's first variable. */
typedef struct rec2 {
	size_t n;
	double compute[64][4], phase[64], var0[64];
	int64_t batch0[64], epoch[64];
} rec2;

static lbs_status keep2(void *ctx, const lbs_iteration_record *r, lbs_error *err)
{
	(void)err;
	rec2 *c = ctx;
	if (c->n < 64) {
		for (size_t i = 0; i < r->n_workers && i < 4; i++)
			c->compute[c->n][i] = r->compute_s[i];
		c->phase[c->n] = r->compute_end_s - r->start_s;
		c->var0[c->n] = r->n_vars ? r->vars[0].value : NAN;
		c->batch0[c->n] = r->batch[0];
		c->epoch[c->n] = r->epoch;
	}
	c->n++;
	return LBS_OK;
}

static lbs_status run_text2(const char *text, const char *policy, rec2 *c, lbs_error *err)
{
	char *path;
	lbs_scenario sc;
	lbs_run run;
	memset(c, 0, sizeof *c);
	lbs_status st = load_text(&sc, text, err, &path);
	unlink(path);
	free(path);
	if (st != LBS_OK)
		return st;
	if ((st = lbs_run_create(&run, &sc, policy, err)) == LBS_OK) {
		st = lbs_run_execute(&run, keep2, c, NULL, err);
		lbs_run_destroy(&run);
	}
	lbs_scenario_destroy(&sc);
	return st;
}

/* One worker, 100 samples at 10 ms (1 s of work), 10 iterations an epoch,
 * a disturbance of 5 s per epoch that starts at once and lasts the run:
 * 0.5 s of sleep per iteration, none in iteration 0 (the onset's first).
 * Under work stealing the share runs as 10 micro-batches of 10, but the
 * sleep is still the iteration's, once: 1.5 s an iteration, as with the
 * whole share at once (static). Charged per micro-batch it was
 * 1 + 10 * 0.5 = 6 s. */
#define DBS_ONE \
	"[run]\nglobal_batch = 100\nepochs = 2\ndataset_samples = 1000\nseed = 2\n" \
	"[model]\ngradient = 1 MB\n[network]\ntopology = none\n" \
	"[workers.a]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 10 ms\n" \
	"[generator.dbs]\nkind = dbs_disturbance\nworkers = a\nprobability = 1\n" \
	"delay_min = 5 s\ndelay_max = 5 s\nepochs_min = 5\nepochs_max = 5\n" \
	"[policy.work-stealing]\nchunk = 10\nsteal_latency = 0 s\n"

static void test_run_dbs_once_per_iteration(void)
{
	static rec2 ws, st;
	lbs_error err;
	CU_ASSERT_FATAL(run_text2(DBS_ONE, "work-stealing", &ws, &err) == LBS_OK);
	CU_ASSERT_FATAL(run_text2(DBS_ONE, "static", &st, &err) == LBS_OK);
	CU_ASSERT_EQUAL_FATAL(ws.n, 20);
	CU_ASSERT_EQUAL_FATAL(st.n, 20);
	int bad = 0;
	for (size_t k = 0; k < 20; k++) {
		double want = k == 0 ? 1.0 : 1.5;
		bad += !rel_close(ws.compute[k][0], want, 1e-12) || !rel_close(st.compute[k][0], want, 1e-12);
		bad += ws.batch0[k] != 100;
	}
	CU_ASSERT_EQUAL(bad, 0);
}

/* The disturbance counts the run's epochs, not a fixed number of
 * iterations. Three workers, B = 100, 990 samples: epoch 0 is 9 iterations
 * of the even split 34/33/33. Workers 1 and 2 take 10 ms a sample, worker 0
 * 10.7 ms; all sleep D = 9 s per epoch from iteration 1 (a phase longer
 * than the run), 1 s an iteration in epoch 0. DBS (authors' rounding)
 * measures over epoch 0 t = 9 * 34 * 0.0107 + 8 = 11.2742 s for worker 0
 * and 9 * 0.33 + 8 = 10.97 s for the others, so the shares
 * B * (p_i / t_i) / sum are 33.389, 33.305, 33.305: floors 33 each, and no
 * fractional part reaches 0.5, so the global batch is 99 and epoch 1 is
 * floor(990 / 99) = 10 iterations (9..18), each sleeping D / 10 = 0.9 s:
 * worker 1 computes 0.33 + 0.9 = 1.23 s. Counting 9 iterations an epoch
 * it slept 1 s in iterations 9..17 and took iteration 18 for the first of
 * epoch 2. */
static void test_run_dbs_epochs(void)
{
	static rec2 c;
	lbs_error err;
	CU_ASSERT_FATAL(run_text2("[run]\nglobal_batch = 100\nepochs = 2\ndataset_samples = 990\nseed = 2\n"
				  "[model]\ngradient = 1 MB\n[network]\ntopology = none\n"
				  "[workers.a]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 10.7 ms\n"
				  "[workers.b]\ncount = 2\ndevice = cpu\ncost = linear\nper_sample = 10 ms\n"
				  "[generator.dbs]\nkind = dbs_disturbance\nworkers = a,b\nprobability = 1\n"
				  "delay_min = 9 s\ndelay_max = 9 s\nepochs_min = 20\nepochs_max = 20\n"
				  "[policy.dbs]\nrounding = authors\n",
				  "dbs", &c, &err) == LBS_OK);
	CU_ASSERT_EQUAL_FATAL(c.n, 19);
	int bad = 0;
	for (size_t k = 0; k < 19; k++) {
		double want = k == 0 ? 0.33 : k < 9 ? 1.33 : 1.23;
		bad += !rel_close(c.compute[k][1], want, 1e-12) || c.epoch[k] != (k < 9 ? 0 : 1);
		bad += c.batch0[k] != (k < 9 ? 34 : 33);
	}
	CU_ASSERT_EQUAL(bad, 0);
}

/* The oracle's bound with a worker it leaves idle that still sleeps: a
 * (10 ms a sample) can do all 40 samples in 0.4 s, b (1 s a sample) none in
 * that time, so b gets nothing; but b sleeps 5 s / 10 = 0.5 s in every
 * iteration after the first, so the compute phase is 0.5 s, and so is the
 * bound (it was 0.4 s, below what was realised). */
static void test_run_oracle_sleeping_worker(void)
{
	static rec2 c;
	lbs_error err;
	CU_ASSERT_FATAL(run_text2("[run]\nglobal_batch = 40\nepochs = 2\ndataset_samples = 400\nseed = 2\n"
				  "[model]\ngradient = 1 MB\n[network]\ntopology = none\n"
				  "[workers.a]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 10 ms\n"
				  "[workers.b]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 1 s\n"
				  "[generator.dbs]\nkind = dbs_disturbance\nworkers = b\nprobability = 1\n"
				  "delay_min = 5 s\ndelay_max = 5 s\nepochs_min = 5\nepochs_max = 5\n",
				  "oracle", &c, &err) == LBS_OK);
	CU_ASSERT_EQUAL_FATAL(c.n, 20);
	int bad = 0;
	for (size_t k = 0; k < 20; k++) {
		double want = k == 0 ? 0.4 : 0.5;
		bad += c.batch0[k] != 40 || !rel_close(c.phase[k], want, 1e-12) ||
		       !rel_close(c.var0[k], want, 1e-12);
	}
	CU_ASSERT_EQUAL(bad, 0);
}

/* The oracle minimises each iteration; under CPU credits, which a busy
 * worker spends, that is no bound on the run. A: 0.1 s a sample in
 * iteration 1, 1 s in iteration 2; C: a t2.micro with 0.45 earned credits,
 * 1 s a sample at full speed (it drains 1/60 - 1/600 = 0.015 credits a
 * second: 30 s of full speed), 10% without credits. B = 110.
 * Oracle: iteration 1, T = 10 s is the least T with
 * floor(10 T) + floor(T) >= 110: 100/10. C is left 0.30 credits (20 s).
 * Iteration 2: A's b-th sample ends at b, C's 20 first at b, the later at
 * 20 + 10 (b - 20); the least T with floor(T) + 20 + floor((T - 20) / 10)
 * >= 110 is 84 (84 + 26). In all 94 s.
 * Saving C's credits: iteration 1 gives A all 110 (11 s) and C nothing, so C
 * earns 11/600 and has 0.468333 credits (31.22 s); C's b-th sample then
 * ends at b up to 31, later at 10 b - 281, and the least T with
 * floor(T) + floor((T + 281) / 10) >= 110 is 75 (75 + 35). In all 86 s. */
typedef struct greedy_ctx {
	double now, w;
	lbs_avail *c;
	int64_t iteration;
} greedy_ctx;

static double greedy_finish(const void *ctx, size_t i, int64_t b)
{
	const greedy_ctx *g = ctx;
	return i == 0 ? g->now + (double)b * g->w : lbs_avail_peek(g->c, g->now, (double)b, g->iteration);
}

/* Two iterations: the oracle plans iteration 2 and, unless `save`, iteration
 * 1. Returns the run's time. */
static double credit_two_iterations(bool save, int64_t *first)
{
	lbs_error err;
	lbs_avail c;
	CU_ASSERT_FATAL(lbs_credit_create(lbs_credit_type_find("t2.micro"), 0, 0.45, &c, &err) == LBS_OK);
	int64_t caps[2] = { 110, 110 }, batch[2];
	int device[2] = { 0, 0 };
	lbs_policy_env env = { .n_workers = 2, .global_batch = 110, .max_batch = caps, .device = device };
	void *state;
	lbs_policy_info info = { 0 };
	CU_ASSERT_FATAL(lbs_policy_oracle.create(&env, NULL, 0, &state, &info, &err) == LBS_OK);
	double now = 0;
	for (int64_t it = 0; it < 2; it++) {
		greedy_ctx g = { now, it == 0 ? 0.1 : 1.0, &c, it };
		lbs_future fu = { greedy_finish, &g };
		lbs_observation obs = { .iteration = it, .now_s = now, .future = &fu };
		bool changed;
		if (it == 0 && save) {
			batch[0] = 110, batch[1] = 0;
		} else {
			CU_ASSERT_FATAL(lbs_policy_oracle.plan(state, &obs, batch, &changed, &err) == LBS_OK);
		}
		if (it == 0)
			first[0] = batch[0], first[1] = batch[1];
		double a = now + (double)batch[0] * g.w, fc = lbs_avail_finish(&c, now, (double)batch[1], it);
		now = a > fc ? a : fc;
	}
	lbs_policy_oracle.destroy(state);
	lbs_avail_destroy(&c);
	return now;
}

static void test_oracle_credits_greedy(void)
{
	int64_t first[2];
	double greedy = credit_two_iterations(false, first);
	CU_ASSERT(first[0] == 100 && first[1] == 10);
	CU_ASSERT(rel_close(greedy, 94, 1e-9));
	double saving = credit_two_iterations(true, first);
	CU_ASSERT(rel_close(saving, 86, 1e-9));
}

static void expect_gen_error(const char *text, int line, const char *frag)
{
	char *path;
	lbs_scenario sc;
	lbs_error err = { 0 };
	CU_ASSERT_EQUAL(load_text(&sc, text, &err, &path), LBS_EINPUT);
	char where[1100];
	snprintf(where, sizeof where, "%s:%d:", path, line);
	if (!strstr(err.msg, where) || !strstr(err.msg, frag))
		fprintf(stderr, "\nunexpected message: %s\n", err.msg);
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, where));
	CU_ASSERT_PTR_NOT_NULL(strstr(err.msg, frag));
	unlink(path);
	free(path);
}

#define GROUPS \
	BASE "[network]\ntopology = ring\nbandwidth = 1 GB/s\n" \
	"[workers.a]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 1 ms\n" /* to line 14 */

static void test_gen_errors(void)
{
	expect_gen_error(GROUPS "[generator.x]\nkind = background\nworkers = a, nope\non_mean = 1 s\n"
				"off_mean = 1 s\nload = 0.5\n", 17, "no worker group 'nope'");
	expect_gen_error(GROUPS "[generator.x]\nkind = cpu_credits\nworkers = a\ninstance_type = c5.large\n", 18,
			 "not a burstable type");
	expect_gen_error(GROUPS "[generator.x]\nkind = network_bucket\nworkers = a\ninstance_type = t2.micro\n", 18,
			 "no fitted network bucket");
	expect_gen_error(GROUPS "[generator.x]\nkind = cpu_credits\nworkers = a\ninstance_type = t2.micro\n"
				"[generator.y]\nkind = background\nworkers = a\non_mean = 1 s\noff_mean = 1 s\n"
				"load = 0.5\n", 21, "already given to [generator.x]");
	expect_gen_error(GROUPS "[generator.x]\nkind = dbs_disturbance\nworkers = a\n", 15, "epochs");
	expect_gen_error(GROUPS "[generator.x]\nkind = cpu_credits\nworkers = a\ninstance_type = t2.micro\n"
				"initial_credits = 145\n", 19, "limit of 144");
	expect_gen_error(GROUPS "[generator.x]\nkind = background\nworkers = a\non_mean = 1 s\n", 15,
			 "missing required key 'off_mean'");
	expect_gen_error(GROUPS "[generator.x]\nkind = background\nworkers = a\non_mean = 1 s\n"
				"off_mean = 1 s\nload = 0.5\nprobability = 0.2\n", 21, "applies only when");
	expect_gen_error(GROUPS "availability = 0.5\n[generator.x]\nkind = cpu_credits\nworkers = a\n"
				"instance_type = t3.nano\n", 18, "constant `availability`");
	expect_gen_error(GROUPS "[generator.x]\nkind = dbs_disturbance\nworkers = a\ndelay_min = 6 s\n"
				"delay_max = 5.5 s\n", 19, "whole second");
	expect_gen_error(BASE "[network]\ntopology = none\n[workers.a]\ncount = 1\ndevice = cpu\n"
			      "cost = linear\nper_sample = 1 ms\n[generator.x]\nkind = network_bucket\n"
			      "workers = a\ninstance_type = c5.large\n", 14, "topology");
	expect_gen_error(GROUPS "[generator.x]\nkind = network_bucket\nworkers = a\ninstance_type = c5.large\n"
				"burst_rate = 0.1 Gbit/s\n", 19, "below the baseline");
	expect_gen_error(GROUPS "[generator.]\nkind = cpu_credits\n", 15, "generator names");
}

/* A generator section may come before the groups it names, and the
 * effective configuration records its values. */
static void test_gen_scenario(void)
{
	char *path;
	lbs_scenario sc;
	lbs_error err;
	CU_ASSERT_FATAL(load_text(&sc, BASE "[generator.nic]\nkind = network_bucket\nworkers = b,a\n"
					    "instance_type = c5.xlarge\n[network]\ntopology = ps\nbandwidth = 10 Gbit/s\n"
					    "[workers.a]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 1 ms\n"
					    "[workers.b]\ncount = 1\ndevice = cpu\ncost = linear\nper_sample = 1 ms\n",
				  &err, &path) == LBS_OK);
	CU_ASSERT_EQUAL_FATAL(sc.n_generators, 1);
	const lbs_gen_spec *g = &sc.generators[0];
	CU_ASSERT_EQUAL(g->n_groups, 2);
	CU_ASSERT(g->groups[0] == 1 && g->groups[1] == 0);
	const lbs_netbucket_type *t = lbs_netbucket_type_find("c5.xlarge");
	CU_ASSERT(EQ(g->bucket_bytes, t->bucket_Gbit * 1.25e8));
	CU_ASSERT(EQ(g->baseline_Bps, t->baseline_Gbps * 1.25e8));
	CU_ASSERT(g->initial_fill == 1);
	lbs_origin at = lbs_scenario_origin(&sc, "generator.nic", "workers");
	CU_ASSERT_EQUAL(at.line, 9);
	lbs_scenario_destroy(&sc);
	unlink(path);
	free(path);
}

/* ---- what the monitor reads (traces/monitor.c) -------------------------- */

/* A lagged, sampled reading is the exact reading of the sample's time: a
 * monitored background job (lag 1.5 s, or lag 0.5 s with samples every
 * 1 s) against a second job from the same stream, read exactly at
 * P floor((t - L) / P). The monitored one is also made to finish work up
 * to t before each reading, as a run does, so that its own state is past
 * the time it must read (the kept phases answer). */
static void monitor_lag_case(double lag_s, double period_s)
{
	lbs_background_params p = { .on_mean_s = 2, .off_mean_s = 4, .load = 0.6, .memory = 0.3,
				    .history_s = lag_s + period_s };
	lbs_background_params q = p;
	q.history_s = 0;
	lbs_error err;
	lbs_avail a, b;
	CU_ASSERT_FATAL(lbs_background_create(&p, lbs_rng_stream(3, "test", "m", 0, &err), &a, &err) == LBS_OK);
	CU_ASSERT_FATAL(lbs_background_create(&q, lbs_rng_stream(3, "test", "m", 0, &err), &b, &err) == LBS_OK);
	lbs_monitor m = { { 0, lag_s, period_s }, 1 };
	long bad = 0, on = 0, changed = 0;
	double prev = 0;
	double t = 0;
	for (int i = 0; i < 4000; i++) {
		/* An iteration from t, its barrier (and the reading) at t1. */
		double t1 = lbs_avail_finish(&a, t, 0.3, i) + 0.01;
		t = t1;
		uint64_t k;
		double s = lbs_monitor_sample_time(&m.p, t1, &k);
		double want = lbs_avail_reading(&b, s, i, LBS_READING_CPU_UTIL);
		double got = lbs_monitor_read(&m, &a, t1, i, LBS_READING_CPU_UTIL);
		double want_mem = lbs_avail_reading(&b, s, i, LBS_READING_MEM_UTIL);
		double got_mem = lbs_monitor_read(&m, &a, t1, i, LBS_READING_MEM_UTIL);
		bad += got != want || got_mem != want_mem;
		bad += !(s <= t1 - lag_s || s == 0) || (period_s > 0 && fabs(s / period_s - round(s / period_s)) > 1e-12);
		bad += period_s > 0 && s > 0 && !(s > t1 - lag_s - period_s);
		on += got > 0;
		changed += i > 0 && got != prev;
		prev = got;
	}
	/* Both states are seen, and often enough for the comparison to mean
	 * something. */
	CU_ASSERT(bad == 0);
	CU_ASSERT(on > 400 && on < 3600);
	CU_ASSERT(changed > 100);
	lbs_avail_destroy(&a);
	lbs_avail_destroy(&b);
}

static void test_monitor_lag(void)
{
	monitor_lag_case(1.5, 0);
	monitor_lag_case(0.5, 1);
	monitor_lag_case(0, 0.25);
	/* Before time 0 + lag: the reading at 0. */
	lbs_monitor_params p = { 0, 2, 0 };
	uint64_t k;
	CU_ASSERT(lbs_monitor_sample_time(&p, 1.5, &k) == 0);
	CU_ASSERT(lbs_monitor_sample_time(&p, 2.5, &k) == 0.5);
	p = (lbs_monitor_params){ 0, 0.25, 1 };
	CU_ASSERT(lbs_monitor_sample_time(&p, 3.2, &k) == 2 && k == 2);
	CU_ASSERT(lbs_monitor_sample_time(&p, 3.3, &k) == 3 && k == 3);
}

/* A constant reading for the noise tests. */
static double const_reading(void *state, double t, int64_t iteration, int kind)
{
	(void)t, (void)iteration, (void)kind;
	return *(const double *)state;
}
static double const_finish(void *state, double t0, double work_s, int64_t iteration)
{
	(void)state, (void)iteration;
	return t0 + work_s;
}
static double const_level(const void *state, double t, int64_t iteration)
{
	(void)state, (void)t, (void)iteration;
	return 1;
}

/* Noise: over N = 20000 samples of a reading of 0.5 with sd 0.05 (ten sd
 * from either clamp), the mean error is within 4 standard errors
 * (4 x 0.05 / sqrt(N) = 0.0014) of 0 and the sample sd within 4 of its
 * standard errors (sd / sqrt(2N) = 0.00025) of 0.05; a sample read twice
 * reads the same; noise 0 reads exactly what the source does, bit for bit;
 * a different stream gives different errors. */
static void test_monitor_noise(void)
{
	static const lbs_avail_ops ops = { .name = "const", .finish = const_finish, .level = const_level,
					   .reading = const_reading };
	double v = 0.5;
	lbs_avail a = { &ops, &v, 1 };
	lbs_monitor m = { { 0.05, 0, 0.1 }, lbs_rng_stream_seed(1, "readings", "g", 0) };
	lbs_monitor other = m;
	other.seed = lbs_rng_stream_seed(1, "readings", "g", 1);
	const int N = 20000;
	double sum = 0, sum2 = 0;
	long same = 0, differs = 0, mem_same = 0;
	for (int i = 0; i < N; i++) {
		double t = 0.1 * i + 0.05;
		double r = lbs_monitor_read(&m, &a, t, 0, LBS_READING_CPU_UTIL);
		same += r == lbs_monitor_read(&m, &a, t + 0.01, 0, LBS_READING_CPU_UTIL); /* one sample */
		differs += r != lbs_monitor_read(&other, &a, t, 0, LBS_READING_CPU_UTIL);
		mem_same += r == lbs_monitor_read(&m, &a, t, 0, LBS_READING_MEM_UTIL);
		sum += r - v;
		sum2 += (r - v) * (r - v);
	}
	double mean = sum / N, sd = sqrt((sum2 - N * mean * mean) / (N - 1));
	printf("\n    noise mean %.5f, sd %.5f over %d samples\n", mean, sd, N);
	CU_ASSERT(fabs(mean) < 4 * 0.05 / sqrt(N));
	CU_ASSERT(fabs(sd - 0.05) < 4 * 0.05 / sqrt(2.0 * N));
	CU_ASSERT(same == N);
	CU_ASSERT(differs == N);
	CU_ASSERT(mem_same == 0); /* the kinds' errors are drawn apart */

	/* Clamped to [0, 1]. */
	v = 0.0;
	long below = 0;
	for (int i = 0; i < 1000; i++)
		below += lbs_monitor_read(&m, &a, 0.1 * i, 0, LBS_READING_CPU_UTIL) < 0;
	CU_ASSERT(below == 0);

	/* Noise 0, lag 0, period 0: the source's own reading, for a
	 * background job read along a run. */
	lbs_background_params p = { .on_mean_s = 2, .off_mean_s = 4, .load = 0.6, .memory = 0.3 };
	lbs_error err;
	lbs_avail b, c;
	CU_ASSERT_FATAL(lbs_background_create(&p, lbs_rng_stream(5, "test", "m", 0, &err), &b, &err) == LBS_OK);
	CU_ASSERT_FATAL(lbs_background_create(&p, lbs_rng_stream(5, "test", "m", 0, &err), &c, &err) == LBS_OK);
	lbs_monitor exact = { { 0, 0, 0 }, 7 };
	long bad = 0;
	double t = 0;
	for (int i = 0; i < 2000; i++) {
		double fb = lbs_avail_finish(&b, t, 0.2, i), fc = lbs_avail_finish(&c, t, 0.2, i);
		t = fb;
		bad += fb != fc;
		bad += lbs_monitor_read(&exact, &b, fb, i, LBS_READING_CPU_UTIL) !=
		       lbs_avail_reading(&c, fc, i, LBS_READING_CPU_UTIL);
	}
	CU_ASSERT(bad == 0);
	lbs_avail_destroy(&b);
	lbs_avail_destroy(&c);
}

void suite_generators(void)
{
	static const test_case tests[] = {
		{ "credits: t2.micro depletion by hand", test_credit_depletion },
		{ "credits: limit, launch credits, t3", test_credit_limits },
		{ "credits: exact whatever the cut", test_credit_split },
		{ "background: exact across switches, readings", test_background_exact },
		{ "background: stationary share, streams", test_background_stationary },
		{ "network bucket: closed forms", test_netbucket_closed_form },
		{ "network bucket: Uta et al.'s runs", test_netbucket_uta_runs },
		{ "network bucket: bad data", test_netfit_bad_data },
		{ "dbs: the authors' code, transcribed", test_dbs_matches_code },
		{ "dbs: by hand", test_dbs_by_hand },
		{ "run: credits", test_run_credits },
		{ "run: network bucket on the aggregation", test_run_network_bucket },
		{ "run: network bucket, parameter server", test_run_network_bucket_ps },
		{ "run: seeds, streams, engine modes", test_run_deterministic },
		{ "run: dbs sleep once per iteration, micro-batches too", test_run_dbs_once_per_iteration },
		{ "run: dbs counts the run's epochs", test_run_dbs_epochs },
		{ "run: oracle bound with a sleeping idle worker", test_run_oracle_sleeping_worker },
		{ "oracle: greedy is no bound under credits", test_oracle_credits_greedy },
		{ "scenario: generator errors", test_gen_errors },
		{ "scenario: generator sections", test_gen_scenario },
		{ "monitor: a lagged, sampled reading is the exact one of its sample", test_monitor_lag },
		{ "monitor: noise mean, sd, clamping, streams; exact when 0", test_monitor_noise },
	};
	add_suite("generators", tests, sizeof tests / sizeof tests[0]);
}
