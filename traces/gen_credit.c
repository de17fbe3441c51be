/* SPDX-License-Identifier: GPL-3.0-or-later */
/* EC2 burstable CPU credits (T2 and T3 families, standard mode).
 *
 * AWS's model (Amazon EC2 User Guide, "Key concepts and definitions for
 * burstable performance instances", formerly "CPU credits and baseline
 * utilization for burstable performance instances",
 * https://docs.aws.amazon.com/AWSEC2/latest/UserGuide/burstable-credits-baseline-concepts.html):
 * one CPU credit is one vCPU at 100% for one minute; an instance earns
 * credits continuously at its type's rate, up to a balance limit of 24 hours
 * of earnings, and spends them at its utilisation. Standard mode: with no
 * credits left it runs at its baseline, earn rate / (60 * vCPUs) per vCPU.
 * T2 Standard instances also get launch credits, 30 per vCPU, spent before
 * earned credits and not counted against the limit ("Standard mode concepts
 * for burstable instances", section "Launch credits"); T3 get none.
 *
 * Here a computing worker keeps every vCPU at 100%, so it spends vcpus/60
 * credits per second, and an idle one spends none. AWS lowers the CPU
 * "gradually" as the balance nears zero; how gradually is not published, so
 * the drop to baseline is taken as a step.
 *
 * While computing, the balance is piecewise linear in time: launch credits
 * fall at the spend rate while earned ones rise at the earn rate (capped);
 * then earned credits fall at spend - earn; then the worker runs at the
 * baseline share, where spend equals earn and the balance stays at zero. So
 * the completion is found in closed form, segment by segment. */
#include <assert.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "traces/gen.h"

/* The credit table of the page cited above (columns: CPU credits earned
 * per hour, maximum earned credits that can be accrued, vCPUs; baseline per
 * vCPU follows from them) and the launch-credit table of "Standard mode
 * concepts for burstable instances" (t2: 30 per vCPU; T3 instances "do not
 * receive launch credits"), as the User Guide lists them (read November 2026). */
const lbs_credit_type lbs_credit_types[] = {
	{ "t2.nano", 3, 72, 1, 30 },           /* baseline 5% */
	{ "t2.micro", 6, 144, 1, 30 },         /* 10% */
	{ "t2.small", 12, 288, 1, 30 },        /* 20% */
	{ "t2.medium", 24, 576, 2, 60 },       /* 20% per vCPU */
	{ "t2.large", 36, 864, 2, 60 },        /* 30% */
	{ "t2.xlarge", 54, 1296, 4, 120 },     /* 22.5% */
	{ "t2.2xlarge", 81.6, 1958.4, 8, 240 }, /* 17% */
	{ "t3.nano", 6, 144, 2, 0 },           /* 5% */
	{ "t3.micro", 12, 288, 2, 0 },         /* 10% */
	{ "t3.small", 24, 576, 2, 0 },         /* 20% */
	{ "t3.medium", 24, 576, 2, 0 },        /* 20% */
	{ "t3.large", 36, 864, 2, 0 },         /* 30% */
	{ "t3.xlarge", 96, 2304, 4, 0 },       /* 40% */
	{ "t3.2xlarge", 192, 4608, 8, 0 },     /* 40% */
	{ NULL, 0, 0, 0, 0 },
};

const lbs_credit_type *lbs_credit_type_find(const char *name)
{
	for (const lbs_credit_type *t = lbs_credit_types; t->name; t++)
		if (strcmp(t->name, name) == 0)
			return t;
	return NULL;
}

double lbs_credit_baseline(const lbs_credit_type *type)
{
	return type->earn_per_hour / (60.0 * type->vcpus);
}

typedef struct credit_state {
	double launch, earned; /* credits, as of time at_s */
	double at_s;           /* when the worker last stopped computing */
	double max_earned;
	double spend_per_s;    /* every vCPU at 100% */
	double earn_per_s;
	double baseline;       /* share of full speed with no credits */
} credit_state;

/* Earned credits after dt seconds of earning (at most the limit). */
static double earn(const credit_state *s, double dt)
{
	double e = s->earned + s->earn_per_s * dt;
	return e < s->max_earned ? e : s->max_earned;
}

static double credit_finish(void *state, double t0, double work_s, int64_t iteration)
{
	(void)iteration;
	credit_state *s = state;
	assert(t0 >= s->at_s);
	s->earned = earn(s, t0 - s->at_s); /* idle since then: earning only */
	double t = t0, w = work_s;
	if (w > 0 && s->launch > 0) {
		/* Launch credits first, at full speed, earning meanwhile. */
		double dt = s->launch / s->spend_per_s;
		if (w <= dt) {
			s->launch -= w * s->spend_per_s;
			s->earned = earn(s, w);
			s->at_s = t + w;
			return s->at_s;
		}
		s->launch = 0;
		s->earned = earn(s, dt);
		t += dt;
		w -= dt;
	}
	if (w > 0 && s->earned > 0) {
		/* Earned credits, at full speed: the balance falls at spend - earn. */
		double net = s->spend_per_s - s->earn_per_s;
		double dt = s->earned / net;
		if (w <= dt) {
			s->earned -= w * net;
			s->at_s = t + w;
			return s->at_s;
		}
		s->earned = 0;
		t += dt;
		w -= dt;
	}
	/* No credits: the baseline share, where spend equals earn. */
	s->at_s = w > 0 ? t + w / s->baseline : t;
	return s->at_s;
}

/* The speed a computation starting at t would begin with: t at or after
 * the last computation's end. */
static double credit_level(const void *state, double t, int64_t iteration)
{
	(void)iteration;
	const credit_state *s = state;
	return s->launch > 0 || s->earned > 0 || t > s->at_s ? 1.0 : s->baseline;
}

static double credit_reading(void *state, double t, int64_t iteration, int kind)
{
	(void)iteration;
	const credit_state *s = state;
	if (kind != LBS_READING_CPU_CREDITS)
		return NAN;
	return s->launch + earn(s, t > s->at_s ? t - s->at_s : 0);
}

static void credit_destroy(void *state) { free(state); }

/* finish() on a copy: what the worker would get, spending nothing. */
static double credit_peek(void *state, double t0, double work_s, int64_t iteration)
{
	credit_state copy = *(const credit_state *)state;
	return credit_finish(&copy, t0, work_s, iteration);
}

static const lbs_avail_ops credit_ops = {
	.peek = credit_peek,
	.name = "cpu_credits",
	.finish = credit_finish,
	.level = credit_level,
	.reading = credit_reading,
	.destroy = credit_destroy,
};

lbs_status lbs_credit_create(const lbs_credit_type *type, double launch, double earned,
			     lbs_avail *out, lbs_error *err)
{
	if (!(launch >= 0) || !(earned >= 0) || earned > type->max_earned)
		return lbs_error_set(err, LBS_EINPUT,
				     "%s: credits must be >= 0 and earned credits <= %g (got %g launch, %g earned)",
				     type->name, type->max_earned, launch, earned);
	credit_state *s = lbs_calloc(1, sizeof *s, err);
	if (!s)
		return LBS_EINTERNAL;
	s->launch = launch;
	s->earned = earned;
	s->max_earned = type->max_earned;
	s->spend_per_s = type->vcpus / 60.0;
	s->earn_per_s = type->earn_per_hour / 3600.0;
	s->baseline = lbs_credit_baseline(type);
	assert(s->spend_per_s > s->earn_per_s); /* every type's baseline is below 100% */
	*out = (lbs_avail){ &credit_ops, s, 1.0 };
	return LBS_OK;
}
