/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A sweep's jobs: the protocol of `lbsim run --sweep-job`, and a batch of
 * points run in one process (`lbsim sweep --run-batch`). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <unistd.h>

#include "util/clock.h"
#include "util/datapath.h"
#include "util/outfile.h"
#include "sim/plugin.h"
#include "sim/recorder.h"
#include "sim/run.h"
#include "sim/scenario.h"
#include "sweep/sweep.h"

/* Takes the shared job lock into j->lock_fd and checks the parent. */
static lbs_status hold(lbs_sweep_job *j, const char *lock, pid_t parent, const volatile sig_atomic_t *interrupted,
		       lbs_error *err)
{
	j->lock_fd = open(lock, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (j->lock_fd < 0)
		return lbs_error_set(err, LBS_EIO, "%s: cannot open the job lock: %s", lock, strerror(errno));
	while (flock(j->lock_fd, LOCK_SH) != 0) {
		if (errno != EINTR || (interrupted && *interrupted))
			return errno == EINTR ? lbs_error_set(err, LBS_EINTR, "interrupted before the run")
					      : lbs_error_set(err, LBS_EIO, "%s: cannot lock: %s", lock,
							      strerror(errno));
	}
	if (parent) {
#ifdef __linux__
		prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
		/* It died before prctl (the shell that exec'd this run may itself
		 * have started orphaned, under init), or it is not our parent. */
		if (getppid() != parent || parent == 1)
			return lbs_error_set(err, LBS_EINTR, "the parent process %ld has gone: not running",
					     (long)parent);
	}
	return LBS_OK;
}

lbs_status lbs_sweep_job_begin(lbs_sweep_job *j, const char *lock, pid_t parent, const char *output,
			       const volatile sig_atomic_t *interrupted, lbs_error *err)
{
	j->output = output;
	lbs_status st = hold(j, lock, parent, interrupted, err);
	if (st != LBS_OK)
		return st;
	if (access(output, F_OK) == 0) {
		j->done = true;
		return LBS_OK;
	}
	if ((size_t)snprintf(j->tmp, sizeof j->tmp, "%s.tmp.%ld", output, (long)getpid()) >= sizeof j->tmp)
		return lbs_error_set(err, LBS_EUSAGE, "%s: path too long", output);
	return LBS_OK;
}

/* Puts tmp in place as output if publish (never over a file there
 * already), and removes it and its journal. False (errno set) if it could
 * not be put in place. */
static bool publish(const char *tmp, const char *output, bool publish)
{
	bool ok = !publish || link(tmp, output) == 0 || errno == EEXIST || rename(tmp, output) == 0;
	int saved = errno;
	char journal[4300];
	snprintf(journal, sizeof journal, "%s-journal", tmp);
	unlink(tmp);
	unlink(journal);
	errno = saved;
	return ok;
}

lbs_status lbs_sweep_job_end(lbs_sweep_job *j, lbs_status status)
{
	lbs_status st = status;
	if (j->tmp[0] && !publish(j->tmp, j->output, status == LBS_OK))
		st = LBS_EIO;
	if (j->lock_fd >= 0)
		close(j->lock_fd);
	j->lock_fd = -1;
	return st;
}


/* ---- points databases ------------------------------------------------- */

void lbs_sweep_segment_path(char *buf, size_t len, const char *dir, size_t first, size_t last)
{
	if (first == last)
		snprintf(buf, len, "%s/%06zu.db", dir, first);
	else
		snprintf(buf, len, "%s/%06zu-%06zu.db", dir, first, last);
}

/* Six digits exactly: a point number as the names write it. */
static bool six_digits(const char *s, size_t *v)
{
	*v = 0;
	for (int i = 0; i < 6; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		*v = 10 * *v + (size_t)(s[i] - '0');
	}
	return true;
}

bool lbs_sweep_segment_parse(const char *name, size_t *first, size_t *last)
{
	size_t len = strlen(name);
	if (len == 9 && six_digits(name, first) && !strcmp(name + 6, ".db")) {
		*last = *first;
		return *first >= 1;
	}
	return len == 16 && six_digits(name, first) && name[6] == '-' && six_digits(name + 7, last) &&
	       !strcmp(name + 13, ".db") && *first >= 1 && *first < *last;
}

/* ---- a batch of points in one process --------------------------------- */

static volatile sig_atomic_t batch_interrupted;

static void on_batch_signal(int sig)
{
	batch_interrupted = sig;
}

typedef struct batch {
	const char *dir, *lock, *scenario;
	lbs_detail detail;
	int64_t max_rows;
	pid_t parent;
	const char *keys[LBS_SWEEP_MAX_KEYS + 2];
	size_t n_keys;
} batch;

/* The point's parameters as "k=v, k=v" for messages. */
static void describe(const batch *b, char *const *values, char *buf, size_t len)
{
	buf[0] = '\0';
	for (size_t k = 0; k < b->n_keys; k++) {
		size_t used = strlen(buf);
		snprintf(buf + used, len - used, "%s%s=%s", k ? ", " : "", b->keys[k], values[k]);
	}
}

/* One point, as `lbsim run SCENARIO --no-baseline --set KEY=VALUE...
 * --policy P --seed S` runs it (the seed applied after every --set), into
 * the open recorder in its own transaction. */
static lbs_status run_point(const batch *b, char *const *values, lbs_recorder *rec, lbs_error *err)
{
	const char *ovs[LBS_SWEEP_MAX_KEYS + 2], *policy = NULL;
	char ovbuf[LBS_SWEEP_MAX_KEYS + 2][LBS_VALUE_MAX + LBS_NAME_MAX * 2 + 32], seed[64] = "";
	size_t n = 0;
	for (size_t k = 0; k < b->n_keys; k++) {
		if (!strcmp(b->keys[k], "policy"))
			policy = values[k];
		else if (!strcmp(b->keys[k], "seed"))
			snprintf(seed, sizeof seed, "run.seed=%s", values[k]);
		else {
			snprintf(ovbuf[n], sizeof ovbuf[n], "%s=%s", b->keys[k], values[k]);
			ovs[n] = ovbuf[n];
			n++;
		}
	}
	if (seed[0])
		ovs[n++] = seed;
	lbs_datapath file;
	lbs_datapath_scenario(b->scenario, &file);
	lbs_scenario sc;
	lbs_status st = lbs_scenario_load(&sc, file.path, ovs, n, err);
	if (st != LBS_OK)
		return st;
	lbs_run run;
	if ((st = lbs_run_create(&run, &sc, policy ? policy : sc.policy.name, err)) != LBS_OK) {
		lbs_scenario_destroy(&sc);
		return st;
	}
	rec->row_budget = b->detail == LBS_DETAIL_WORKERS && b->max_rows > 0 ? b->max_rows : -1;
	st = lbs_recorder_begin(rec, &run, err);
	double t0 = lbs_monotonic_s();
	if (st == LBS_OK)
		st = lbs_run_execute(&run, lbs_recorder_iteration, rec, &batch_interrupted, err);
	if (st == LBS_OK)
		st = lbs_recorder_commit(rec, &run, lbs_monotonic_s() - t0, err);
	if (st != LBS_OK)
		lbs_recorder_abort(rec);
	lbs_run_destroy(&run);
	lbs_scenario_destroy(&sc);
	return st;
}

/* The points of this batch that a database in b->dir holds already. */
static void find_done(const batch *b, const size_t *points, size_t n, bool *done)
{
	DIR *d = opendir(b->dir);
	for (struct dirent *e; d && (e = readdir(d));) {
		size_t first, last;
		if (!lbs_sweep_segment_parse(e->d_name, &first, &last))
			continue;
		for (size_t i = 0; i < n; i++)
			done[i] |= points[i] >= first && points[i] <= last;
	}
	if (d)
		closedir(d);
}

typedef struct segment {
	lbs_recorder rec;
	char tmp[4200];
	size_t first, last, runs;
} segment;

/* Closes the segment's database and puts it in place if it holds a run. */
static lbs_status end_segment(const batch *b, segment *s, lbs_error *err)
{
	if (!s->rec.db)
		return LBS_OK;
	lbs_recorder_close(&s->rec);
	int fd = s->runs ? open(s->tmp, O_RDONLY | O_CLOEXEC) : -1;
	bool synced = fd >= 0 && fsync(fd) == 0;
	if (fd >= 0)
		close(fd);
	if (s->runs && !synced) {
		publish(s->tmp, "", false);
		s->runs = 0;
		return lbs_error_set(err, LBS_EIO, "%s: cannot write: %s", s->tmp, strerror(errno));
	}
	char out[4200];
	lbs_sweep_segment_path(out, sizeof out, b->dir, s->first, s->last);
	lbs_status st = LBS_OK;
	if (!publish(s->tmp, out, s->runs > 0))
		st = lbs_error_set(err, LBS_EIO, "%s: cannot put the points' database in place: %s", out,
				   strerror(errno));
	s->runs = 0;
	return st;
}

static int batch_usage(const char *what)
{
	fprintf(stderr, "lbsim sweep --run-batch: %s (this mode runs the job lines lbsim sweep writes)\n", what);
	return LBS_EUSAGE;
}

int lbs_sweep_batch_command(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "run-batch", required_argument, NULL, 'b' }, { "lock", required_argument, NULL, 'l' },
		{ "parent", required_argument, NULL, 'P' },    { "scenario", required_argument, NULL, 's' },
		{ "detail", required_argument, NULL, 'd' },    { "key", required_argument, NULL, 'k' },
		{ "max-rows", required_argument, NULL, 'M' },  { "max-trace-rows", required_argument, NULL, 'T' },
		{ "plugins", no_argument, NULL, 'L' },
		{ NULL, 0, NULL, 0 },
	};
	batch b = { .detail = LBS_DETAIL_ITERATIONS, .max_rows = LBS_DEFAULT_MAX_ROWS };
	int c;
	while ((c = getopt_long(argc, argv, "", longopts, NULL)) != -1) {
		switch (c) {
		case 'b': b.dir = optarg; break;
		case 'l': b.lock = optarg; break;
		case 's': b.scenario = optarg; break;
		case 'L': lbs_plugins_permit(1); break;
		case 'P': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (!*optarg || *end || v <= 0)
				return batch_usage("--parent: expected a process id");
			b.parent = (pid_t)v;
			break;
		}
		case 'd': {
			int d = lbs_choice_index(LBS_DETAIL_CHOICES, optarg);
			if (d < 0)
				return batch_usage("--detail: expected runs, iterations or workers");
			b.detail = (lbs_detail)d;
			break;
		}
		case 'k':
			if (b.n_keys == sizeof b.keys / sizeof *b.keys)
				return batch_usage("too many --key");
			b.keys[b.n_keys++] = optarg;
			break;
		case 'M':
		case 'T':
			if (!lbs_row_limit_option("lbsim sweep --run-batch", c == 'T', optarg, &b.max_rows))
				return LBS_EUSAGE;
			break;
		default: return batch_usage("unknown option");
		}
	}
	size_t group = b.n_keys + 1, n = optind < argc ? (size_t)(argc - optind) / group : 0;
	if (!b.dir || !b.lock || !b.scenario || !n || (size_t)(argc - optind) % group)
		return batch_usage("expected --run-batch DIR --lock LOCK --scenario FILE --key NAME... -- "
				   "then each point's number and values");
	size_t *points = calloc(n, sizeof *points);
	bool *done = calloc(n, sizeof *done);
	if (!points || !done) {
		free(points);
		free(done);
		fprintf(stderr, "lbsim sweep: out of memory\n");
		return LBS_EINTERNAL;
	}
	for (size_t i = 0; i < n; i++) {
		char *end;
		const char *arg = argv[optind + i * group];
		unsigned long long v = strtoull(arg, &end, 10);
		if (*arg < '1' || *arg > '9' || *end || v > LBS_SWEEP_MAX_POINTS || (i && v <= points[i - 1])) {
			free(points);
			free(done);
			return batch_usage("the points must be increasing numbers from 1");
		}
		points[i] = (size_t)v;
	}
	struct sigaction sa = { .sa_handler = on_batch_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	lbs_signals_watch(&batch_interrupted); /* a wait for a lock gives up on them */

	/* The runs of consecutive points go into one database, named by its
	 * first and last point and put in place when it is closed: at the end,
	 * at a point that failed (which has no run) or at one done already. */
	lbs_error err = { 0 };
	lbs_sweep_job j = { .lock_fd = -1 };
	lbs_status st = hold(&j, b.lock, b.parent, &batch_interrupted, &err), first_failure = LBS_OK;
	if (st == LBS_OK)
		find_done(&b, points, n, done);
	segment s = { 0 };
	for (size_t i = 0; st == LBS_OK && i < n; i++) {
		if (batch_interrupted) {
			st = lbs_error_set(&err, LBS_EINTR, "interrupted");
			break;
		}
		if (done[i]) {
			st = end_segment(&b, &s, &err);
			continue;
		}
		if (!s.rec.db) {
			snprintf(s.tmp, sizeof s.tmp, "%s/%06zu.tmp.%ld", b.dir, points[i], (long)getpid());
			/* A scratch file until it is put in place, synced once then
			 * (end_segment). */
			if ((st = lbs_recorder_open_scratch(&s.rec, s.tmp, b.detail, &err)) != LBS_OK)
				break;
			s.first = points[i];
		}
		char *const *values = argv + optind + i * group + 1;
		lbs_status pst = run_point(&b, values, &s.rec, &err);
		if (pst == LBS_OK) {
			s.last = points[i];
			s.runs++;
			continue;
		}
		/* This point only: the others of the batch are kept, or still run. */
		char what[LBS_ERROR_MAX];
		describe(&b, values, what, sizeof what);
		fprintf(stderr, "lbsim sweep: point %zu (%s): %s\n", points[i], what, err.msg);
		if (first_failure == LBS_OK)
			first_failure = pst;
		st = end_segment(&b, &s, &err);
		if (pst == LBS_EINTR || pst == LBS_EIO)
			break;
	}
	lbs_status end = end_segment(&b, &s, &err);
	if (st == LBS_OK)
		st = end;
	if (st != LBS_OK)
		fprintf(stderr, "lbsim sweep: %s\n", err.msg);
	if (j.lock_fd >= 0)
		close(j.lock_fd);
	free(points);
	free(done);
	return first_failure != LBS_OK ? first_failure : st;
}
