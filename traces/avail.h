/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Availability: the fraction a(t) > 0 of its nominal speed a worker (or a
 * link) delivers at time t. Work of nominal duration W started at t0 ends at
 * the t1 where the integral of a(t) from t0 to t1 equals W (DESIGN.md, the
 * fluid rule). A source answers exactly that question, so a change of a(t)
 * in the middle of an iteration moves the completion as the integral says.
 *
 * Until trace readers and generators plug in their sources, every worker
 * has the constant source (ops == NULL): t1 = t0 + W / level. */
#ifndef LBS_AVAIL_H
#define LBS_AVAIL_H

typedef struct lbs_avail_ops {
	const char *name;
	/* Completion time of `work_s` seconds of nominal work started at t0. */
	double (*finish)(const void *state, double t0, double work_s);
	/* a(t), for readings and reports. */
	double (*level)(const void *state, double t);
} lbs_avail_ops;

typedef struct lbs_avail {
	const lbs_avail_ops *ops; /* NULL: constant `level` */
	const void *state;
	double level;
} lbs_avail;

static inline double lbs_avail_finish(const lbs_avail *a, double t0, double work_s)
{
	return a->ops ? a->ops->finish(a->state, t0, work_s) : t0 + work_s / a->level;
}

#endif
