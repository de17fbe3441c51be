/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Running a sweep: GNU parallel runs jobs of one or more consecutive points
 * each, one process a job (lbsim sweep --run-batch, sweep/job.c) writing
 * small databases, then the points are merged into the output.
 *
 * Next to the output OUT lives the work folder OUT.sweep/ while a sweep is
 * unfinished:
 *   sweep        the sweep's identity (hash, shard): a rerun must match it
 *   jobs         one shell command per job, each ended by a NUL byte (GNU
 *                parallel --null): a path may hold any byte but NUL, a
 *                newline too, and every one is single-quoted
 *   points.list  each point's number and the line of jobs that runs it
 *   joblog       GNU parallel's job log (--joblog, --resume-failed)
 *   points/N.db  point N's results, put in place when its run succeeded;
 *   points/A-B.db  those of the job's points A to B, consecutive runs of
 *                one job put in place together
 *   lock         held (flock) by the sweep using the folder
 *   jobs.lock    held shared by each running job: a sweep resuming after a
 *                crash waits until the jobs of the crashed one are gone
 *                before it cleans up
 * A rerun after an interruption skips the jobs the log records as done and,
 * because a job runs only the points no database holds, the points that
 * finished; points already merged are skipped by the merge. On success the
 * folder is removed (unless --keep). */
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
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/buf.h"
#include "util/clock.h"
#include "util/datapath.h"
#include "util/outfile.h"
#include "analysis/merge.h"
#include "sim/plugin.h"
#include "sim/recorder.h"
#include "util/proc.h"
#include "sweep/sweep.h"
#include "traces/series.h"

static volatile sig_atomic_t interrupted;

static void on_signal(int sig)
{
	interrupted = sig;
}

static void usage(FILE *out)
{
	fprintf(out,
		"Usage: lbsim sweep SWEEP.ini [-j N] [-o FILE] [--shard K/N] [options]\n"
		"\n"
		"Runs every point of the sweep SWEEP.ini (a base scenario and the keys to vary)\n"
		"as `lbsim run` would, in jobs of a few points each run in parallel by GNU\n"
		"parallel, and merges the runs into one results database. An interrupted sweep\n"
		"resumes where it stopped when run again with the same arguments. See\n"
		"doc/sweeps.md.\n"
		"\n"
		"Options:\n"
		"  -j, --jobs N          jobs run at once (default: one per CPU core)\n"
		"      --points-per-job K  points each job runs, one after the other in one\n"
		"                        process (default: the points / (2 x the jobs run at\n"
		"                        once), rounded up)\n"
		"  -o, --output FILE     results database (default: results.db); the work folder\n"
		"                        FILE.sweep/ holds the job log until the sweep is done\n"
		"      --shard K/N       run only points K, K+N, K+2N, ... (for job arrays);\n"
		"                        join the shards' outputs with `lbsim merge`\n"
		"  -S, --sshlogin LOGINS run on these machines too (GNU parallel --sshlogin; the\n"
		"                        same paths must exist on them, e.g. a shared file system)\n"
		"      --list            print the points (of the shard) and exit\n"
		"      --keep            keep the work folder after a successful sweep\n"
		"      --max-rows N      with [sweep] detail = workers, refuse a sweep whose points\n"
		"                        would write more than N rows to worker_iterations in all\n"
		"                        (default 20000000; 0: no limit)\n"
		"      --max-trace-rows N  refuse a trace file that would keep more than N rows\n"
		"                        (default 100000000; 0: no limit), here and in every point\n"
		"      --plugins         load the plugins the scenario names (here and in every job);\n"
		"                        without it (or LBSIM_PLUGINS=1) a scenario naming one is\n"
		"                        refused; --list never loads them\n"
		"  -q, --quiet           print nothing but errors\n"
		"  -h, --help            this help\n");
}

/* ---- helpers ---------------------------------------------------------- */

/* GNU parallel, not moreutils' parallel of the same name. */
static lbs_status check_parallel(lbs_error *err)
{
	char path[4096];
	if (!lbs_proc_find("parallel", path, sizeof path))
		return lbs_error_set(err, LBS_EIO, "sweeps run their points with GNU parallel, which is not "
				     "on PATH: install it (Debian package parallel)");
	/* GNU parallel is a Perl script whose third line names its author;
	 * moreutils' parallel is a compiled program. Reading that saves
	 * starting Perl (tens of milliseconds) for --version. */
	char head[512] = "";
	FILE *f = fopen(path, "r");
	size_t got = f ? fread(head, 1, sizeof head - 1, f) : 0;
	if (f)
		fclose(f);
	head[got] = '\0';
	if (!strncmp(head, "#!", 2) && strstr(head, "Copyright (C) 2007-") && strstr(head, "Ole Tange"))
		return LBS_OK;
	int fd[2];
	if (pipe(fd) != 0)
		return lbs_error_set(err, LBS_EIO, "cannot run %s: %s", path, strerror(errno));
	pid_t pid = fork();
	if (pid == 0) {
		dup2(fd[1], STDOUT_FILENO);
		int null = open("/dev/null", O_WRONLY);
		if (null >= 0)
			dup2(null, STDERR_FILENO);
		close(fd[0]);
		close(fd[1]);
		execl(path, "parallel", "--version", (char *)NULL);
		_exit(127);
	}
	close(fd[1]);
	char line[256] = "";
	ssize_t n = pid > 0 ? read(fd[0], line, sizeof line - 1) : -1;
	line[n > 0 ? n : 0] = '\0';
	close(fd[0]);
	int status = 0;
	if (pid > 0)
		waitpid(pid, &status, 0);
	if (strncmp(line, "GNU parallel", 12) != 0)
		return lbs_error_set(err, LBS_EIO, "%s is not GNU parallel (is it moreutils' parallel?): "
				     "install GNU parallel (Debian package parallel)", path);
	return LBS_OK;
}

/* The work folder's files are written whole or not at all (util/outfile.h). */
static lbs_status write_bytes(const char *path, const char *data, size_t len, lbs_error *err)
{
	return lbs_write_file(path, data, len, err);
}

static lbs_status write_file(const char *path, const char *text, lbs_error *err)
{
	return write_bytes(path, text, strlen(text), err);
}

/* The whole file, or NULL. */
static char *read_file(const char *path)
{
	lbs_buf b = { 0 };
	if (!lbs_buf_append_file(&b, path)) {
		lbs_buf_free(&b);
		return NULL;
	}
	return b.s ? b.s : strdup("");
}

static bool exists(const char *path)
{
	struct stat sb;
	return stat(path, &sb) == 0;
}

typedef struct plan {
	char dir[4096];
	size_t *points; /* 1-based point numbers, ascending */
	size_t *job;    /* the line of jobs (from 1) that runs each */
	size_t n, n_jobs;
	int lock_fd;
	bool resumed;
} plan;

/* The first index i of the plan with pl->points[i] >= p. */
static size_t plan_index(const plan *pl, size_t p)
{
	size_t lo = 0, hi = pl->n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (pl->points[mid] < p)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

typedef struct segment {
	size_t first, last; /* plan indices, inclusive */
} segment;

static int by_first(const void *a, const void *b)
{
	const segment *x = a, *y = b;
	return x->first < y->first ? -1 : x->first > y->first;
}

/* The points databases in dir/points, in plan order (NULL, 0 if none). */
static segment *list_segments(const plan *pl, size_t *n)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/points", pl->dir);
	DIR *d = opendir(path);
	segment *seg = NULL;
	size_t cap = 0;
	*n = 0;
	for (struct dirent *e; d && (e = readdir(d));) {
		size_t a, b;
		if (!lbs_sweep_segment_parse(e->d_name, &a, &b))
			continue;
		size_t i = plan_index(pl, a), k = plan_index(pl, b + 1);
		if (i >= pl->n || pl->points[i] != a || k == 0 || pl->points[k - 1] != b)
			continue; /* not this plan's: never merged */
		if (*n == cap) {
			cap = cap ? 2 * cap : 64;
			segment *x = realloc(seg, cap * sizeof *x);
			if (!x)
				break;
			seg = x;
		}
		seg[(*n)++] = (segment){ i, k - 1 };
	}
	if (d)
		closedir(d);
	if (seg)
		qsort(seg, *n, sizeof *seg, by_first);
	return seg;
}

/* Points done: those the databases in dir/points hold. */
static size_t count_done(const plan *pl)
{
	size_t n, done = 0;
	segment *seg = list_segments(pl, &n);
	for (size_t i = 0; i < n; i++)
		done += seg[i].last - seg[i].first + 1;
	free(seg);
	return done;
}

/* Removes points' leftovers of a killed attempt (*.tmp.PID, *-journal). */
static void remove_leftovers(const char *dir, bool everything)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/points", dir);
	DIR *d = opendir(path);
	for (struct dirent *e; d && (e = readdir(d));) {
		if (e->d_name[0] == '.')
			continue;
		size_t a, b;
		if (everything || !lbs_sweep_segment_parse(e->d_name, &a, &b)) {
			char f[4500];
			snprintf(f, sizeof f, "%s/%s", path, e->d_name);
			unlink(f);
		}
	}
	if (d)
		closedir(d);
}

static void format_duration(char *buf, size_t len, double s)
{
	long t = (long)(s + 0.5);
	if (t >= 3600)
		snprintf(buf, len, "%ld:%02ld:%02ld", t / 3600, t / 60 % 60, t % 60);
	else
		snprintf(buf, len, "%ld:%02ld", t / 60, t % 60);
}

/* The exit value the job log records last for line `seq` of jobs, or -1. */
static int logged_exit(const char *joblog, size_t seq)
{
	FILE *f = fopen(joblog, "r");
	if (!f)
		return -1;
	char *line = NULL;
	size_t cap = 0;
	int code = -1;
	while (getline(&line, &cap, f) > 0) {
		/* Seq Host Starttime JobRuntime Send Receive Exitval Signal Command */
		char *save = NULL, *tok = strtok_r(line, "\t", &save);
		if (!tok || strtoull(tok, NULL, 10) != seq)
			continue;
		for (int i = 0; i < 6 && tok; i++)
			tok = strtok_r(NULL, "\t", &save);
		if (tok)
			code = atoi(tok);
	}
	free(line);
	fclose(f);
	return code;
}

/* ---- the command ------------------------------------------------------ */

typedef struct options {
	const char *sweep, *output, *jobs;
	const char *logins[16];
	size_t n_logins;
	size_t shard_k, shard_n;
	size_t per_job; /* 0: chosen from the jobs run at once */
	int64_t max_rows;
	bool list, keep, quiet;
} options;

/* The shell command of the job of plan points [from, to): `lbsim sweep
 * --run-batch` (sweep/job.c), which runs those of them that no database in
 * points/ holds. exec: the job's parent is the shell's, GNU parallel, and it
 * stops if that dies (--parent). */
static void job_line(lbs_buf *b, const lbs_sweep *sw, const options *o, const plan *pl, size_t from, size_t to,
		     const char *lbsim)
{
	char dir[4200], lock[4200];
	snprintf(dir, sizeof dir, "%s/points", pl->dir);
	snprintf(lock, sizeof lock, "%s/jobs.lock", pl->dir);
	static const char *const detail[] = { "runs", "iterations", "workers" };
	lbs_buf_printf(b, "exec ");
	lbs_buf_shell_quote(b, lbsim);
	lbs_buf_printf(b, " sweep --run-batch ");
	lbs_buf_shell_quote(b, dir);
	lbs_buf_printf(b, " --lock ");
	lbs_buf_shell_quote(b, lock);
	lbs_buf_printf(b, " --scenario ");
	lbs_buf_shell_quote(b, sw->scenario);
	lbs_buf_printf(b, " --detail %s", detail[sw->detail]);
	if (lbs_plugins_allowed()) /* the sweep was allowed them: so are its jobs, here or over ssh */
		lbs_buf_printf(b, " --plugins");
	if (sw->detail == LBS_DETAIL_WORKERS) /* the sweep checked the total; each point is within it */
		lbs_buf_printf(b, " --max-rows %lld", (long long)o->max_rows);
	if (lbs_trace_max_rows() != LBS_SERIES_DEFAULT_MAX_ROWS)
		lbs_buf_printf(b, " --max-trace-rows %lld", (long long)lbs_trace_max_rows());
	for (size_t k = 0; k < sw->n_keys; k++) {
		lbs_buf_printf(b, " --key ");
		lbs_buf_shell_quote(b, sw->keys[k].name);
	}
	lbs_buf_printf(b, " --parent \"$PPID\" --");
	for (size_t i = from; i < to; i++) {
		size_t p = pl->points[i];
		lbs_buf_printf(b, " %zu", p);
		for (size_t k = 0; k < sw->n_keys; k++) {
			lbs_buf_printf(b, " ");
			lbs_buf_shell_quote(b, lbs_sweep_value(sw, p - 1, k));
		}
	}
}

/* The jobs GNU parallel runs at once: -j N (default: one per core) on this
 * machine, and on each --sshlogin host as many as its N/ says or as -j. */
static size_t job_slots(const options *o)
{
	long cores = sysconf(_SC_NPROCESSORS_ONLN);
	size_t per_host = o->jobs ? strtoull(o->jobs, NULL, 10) : cores > 0 ? (size_t)cores : 1, slots = 0;
	for (size_t i = 0; i < o->n_logins; i++)
		for (const char *h = o->logins[i]; *h; h += strcspn(h, ",") + (h[strcspn(h, ",")] == ',')) {
			char *end;
			unsigned long long n = strtoull(h, &end, 10);
			slots += end > h && *end == '/' && n > 0 ? (size_t)n : per_host;
		}
	return slots ? slots : per_host;
}

/* The absolute path of this program, for the job commands. */
static void self_path(char *buf, size_t len, const char *argv0)
{
	ssize_t n = readlink("/proc/self/exe", buf, len - 1);
	if (n > 0) {
		buf[n] = '\0';
		return;
	}
	char *abs = strchr(argv0, '/') ? realpath(argv0, NULL) : NULL;
	snprintf(buf, len, "%s", abs ? abs : "lbsim");
	free(abs);
}

/* OUT.sweep, absolute (OUT need not exist yet). */
static lbs_status work_dir(const char *output, char *dir, size_t len, lbs_error *err)
{
	const char *slash = strrchr(output, '/');
	char parent[4096];
	snprintf(parent, sizeof parent, "%.*s", slash ? (int)(slash - output) : 1, slash ? output : ".");
	if (slash == output)
		snprintf(parent, sizeof parent, "/");
	char *abs = realpath(parent, NULL);
	if (!abs)
		return lbs_error_set(err, LBS_EIO, "%s: cannot use folder %s: %s", output, parent, strerror(errno));
	snprintf(dir, len, "%s/%s.sweep", strcmp(abs, "/") ? abs : "", slash ? slash + 1 : output);
	free(abs);
	return LBS_OK;
}

/* Waits until no point job of an earlier sweep on this folder is running
 * (jobs whose GNU parallel was killed stop on their own, their runs rolling
 * back; a job of a remote --sshlogin may take until its run ends). */
static lbs_status wait_for_jobs(const char *dir, bool quiet, lbs_error *err)
{
	char path[4200];
	snprintf(path, sizeof path, "%s/jobs.lock", dir);
	int fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (fd < 0)
		return lbs_error_set(err, LBS_EIO, "%s: cannot create: %s", path, strerror(errno));
	bool said = false;
	lbs_status st = LBS_OK;
	while (flock(fd, LOCK_EX | LOCK_NB) != 0) {
		if (errno != EWOULDBLOCK && errno != EINTR) {
			st = lbs_error_set(err, LBS_EIO, "%s: cannot lock: %s", path, strerror(errno));
			break;
		}
		if (interrupted) {
			st = lbs_error_set(err, LBS_EINTR, "interrupted while waiting for the jobs of an "
					   "earlier sweep to stop");
			break;
		}
		if (!said && !quiet)
			fprintf(stderr, "lbsim sweep: waiting for the jobs of an earlier, interrupted sweep "
				"to stop (%s is held)\n", path);
		said = true;
		nanosleep(&(struct timespec){ 0, 50000000 }, NULL);
	}
	close(fd); /* releases the lock: the jobs this sweep starts take it shared */
	return st;
}

/* The jobs each running one made, by default, so that they balance the
 * load when points take different times, with few enough that the cost of
 * a job (GNU parallel's, a process's, a database's) stays small. */
#define JOBS_PER_SLOT 2

typedef struct job_range {
	size_t from, to; /* plan indices [from, to) */
	uint64_t cost;
	size_t order;
} job_range;

static int by_cost(const void *a, const void *b)
{
	const job_range *x = a, *y = b;
	if (x->cost != y->cost)
		return x->cost > y->cost ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/* Creates or reopens the work folder. A fresh one gets the job list of the
 * shard's points that the output lacks; an existing one must belong to the
 * same sweep and shard, and keeps its job list (GNU parallel resumes by line
 * number). */
static lbs_status prepare(const lbs_sweep *sw, const options *o, lbs_merge *m, const char *lbsim,
			  plan *pl, lbs_error *err)
{
	char path[4200], identity[512];
	snprintf(identity, sizeof identity, "lbsim sweep\nhash %s\nshard %zu/%zu\nname %s\njobs batch\n", sw->hash,
		 o->shard_k, o->shard_n, sw->name);
	if (mkdir(pl->dir, 0777) != 0 && errno != EEXIST)
		return lbs_error_set(err, LBS_EIO, "%s: cannot create the work folder: %s", pl->dir,
				     strerror(errno));
	/* The lock, the job log and the points go into a folder of the sweep's
	 * own, never through a link to another (whose points/ it would
	 * clear). */
	if (lbs_is_symlink(pl->dir))
		return lbs_error_set(err, LBS_EINPUT, "%s: the work folder of %s is a symbolic link: refused "
				     "(remove it; a sweep writes only into a folder of its own)", pl->dir, o->output);
	snprintf(path, sizeof path, "%s/points", pl->dir);
	if (mkdir(path, 0777) != 0 && errno != EEXIST)
		return lbs_error_set(err, LBS_EIO, "%s: cannot create: %s", path, strerror(errno));
	if (lbs_is_symlink(path))
		return lbs_error_set(err, LBS_EINPUT, "%s: a symbolic link: refused (remove it; a sweep "
				     "writes only into a folder of its own)", path);
	snprintf(path, sizeof path, "%s/lock", pl->dir);
	pl->lock_fd = open(path, O_RDWR | O_CREAT | O_NOFOLLOW | O_CLOEXEC, 0666);
	if (pl->lock_fd < 0)
		return lbs_error_set(err, LBS_EIO, "%s: cannot create: %s", path, strerror(errno));
	if (flock(pl->lock_fd, LOCK_EX | LOCK_NB) != 0)
		return lbs_error_set(err, LBS_EIO, "%s: another lbsim sweep is using this work folder "
				     "(writing to %s)", pl->dir, o->output);
	lbs_status st = wait_for_jobs(pl->dir, o->quiet, err);
	if (st != LBS_OK)
		return st;
	snprintf(path, sizeof path, "%s/sweep", pl->dir);
	char *old = read_file(path);
	/* A folder of an lbsim whose job list was one command a line (before
	 * "jobs nul") or one `lbsim run` a point (before "jobs batch"): the
	 * same sweep, but its jobs are not run as they are: started afresh
	 * (points already merged stay merged). */
	size_t cut = strlen(identity) - strlen("jobs batch\n");
	if (old && strcmp(old, identity) && !strncmp(old, identity, cut) &&
	    (strlen(old) == cut || !strncmp(old + cut, "jobs ", 5))) {
		free(old);
		old = NULL;
	}
	if (old && strcmp(old, identity)) {
		st = lbs_error_set(err, LBS_EINPUT,
				   "%s holds an unfinished sweep that differs from %s (another sweep file, "
				   "shard or scenario text): finish it with its own sweep file, or remove the "
				   "folder to start afresh", pl->dir, sw->path);
		free(old);
		return st;
	}
	char list_path[4200], jobs_path[4200];
	snprintf(list_path, sizeof list_path, "%s/points.list", pl->dir);
	snprintf(jobs_path, sizeof jobs_path, "%s/jobs", pl->dir);
	if (old) {
		free(old);
		char *text = read_file(list_path);
		if (!text)
			return lbs_error_set(err, LBS_EIO, "%s: cannot read: %s", list_path, strerror(errno));
		size_t n = 0;
		for (char *p = text; *p; p++)
			n += *p == '\n';
		pl->points = calloc(n + 1, sizeof *pl->points);
		pl->job = calloc(n + 1, sizeof *pl->job);
		if (!pl->points || !pl->job) {
			free(text);
			return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
		}
		/* "POINT JOB\n" a line, the points ascending */
		for (char *p = text, *end; *p; p = end + (*end != '\0')) {
			size_t v = strtoull(p, &end, 10);
			if (end == p || *end != ' ' || v < 1 || v > sw->n_points || pl->n >= n ||
			    (pl->n && v <= pl->points[pl->n - 1]))
				break;
			p = end;
			size_t job = strtoull(p, &end, 10);
			if (end == p || *end != '\n' || job < 1 || job > n)
				break;
			pl->points[pl->n] = v;
			pl->job[pl->n++] = job;
			pl->n_jobs = job > pl->n_jobs ? job : pl->n_jobs;
		}
		free(text);
		if (pl->n != n)
			return lbs_error_set(err, LBS_EIO, "%s: damaged: remove %s to start afresh", list_path,
					     pl->dir);
		pl->resumed = true;
		remove_leftovers(pl->dir, false);
		return LBS_OK;
	}
	/* A fresh folder: nothing in it is from this sweep. */
	remove_leftovers(pl->dir, true);
	snprintf(path, sizeof path, "%s/joblog", pl->dir);
	unlink(path);
	pl->points = calloc(sw->n_points / o->shard_n + 1, sizeof *pl->points);
	pl->job = calloc(sw->n_points / o->shard_n + 1, sizeof *pl->job);
	if (!pl->points || !pl->job)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	for (size_t p = o->shard_k - 1; p < sw->n_points; p += o->shard_n)
		if (sw->run_as[p] == p && !lbs_merge_has_point(m, sw->hash, (int64_t)p + 1))
			pl->points[pl->n++] = p + 1;
	/* Consecutive points a job, as many as make about JOBS_PER_SLOT jobs
	 * for each that runs at once; fewer where a job's command would pass
	 * 32 KiB (the kernel takes at most 128 KiB a shell argument, and over
	 * ssh GNU parallel quotes it again). */
	size_t slots = job_slots(o), per_job = o->per_job;
	if (!per_job)
		per_job = (pl->n + JOBS_PER_SLOT * slots - 1) / (JOBS_PER_SLOT * slots);
	per_job = per_job ? per_job : 1;
	job_range *jr = calloc(pl->n + 1, sizeof *jr);
	lbs_buf jobs = { 0 }, list = { 0 }, line = { 0 };
	if (!jr)
		return lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	size_t n_jobs = 0;
	for (size_t from = 0; from < pl->n;) {
		size_t to = from + per_job < pl->n ? from + per_job : pl->n;
		for (;;) {
			line.len = 0;
			job_line(&line, sw, o, pl, from, to, lbsim);
			if (line.failed || line.len <= 32 * 1024 || to - from == 1)
				break;
			to = from + (to - from) / 2;
		}
		jr[n_jobs] = (job_range){ from, to, 0, n_jobs };
		/* its cost: iterations x workers of each point, and one more a
		 * point for what costs the same at any size */
		for (size_t i = from; i < to; i++)
			jr[n_jobs].cost += sw->point_rows[pl->points[i] - 1] + 1;
		n_jobs++;
		from = to;
	}
	/* The costliest first (GNU parallel starts them in order), so that
	 * the last to finish are short: a sweep listing its largest points
	 * last would otherwise end on its largest job alone. */
	qsort(jr, n_jobs, sizeof *jr, by_cost);
	for (size_t j = 0; j < n_jobs; j++) {
		line.len = 0;
		job_line(&line, sw, o, pl, jr[j].from, jr[j].to, lbsim);
		lbs_buf_printf(&jobs, "%s%c", lbs_buf_str(&line), '\0');
		for (size_t i = jr[j].from; i < jr[j].to; i++)
			pl->job[i] = j + 1;
	}
	pl->n_jobs = n_jobs;
	for (size_t i = 0; i < pl->n; i++)
		lbs_buf_printf(&list, "%zu %zu\n", pl->points[i], pl->job[i]);
	free(jr);
	lbs_buf_free(&line);
	if (jobs.failed || list.failed)
		st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	if (st == LBS_OK)
		st = write_bytes(jobs_path, lbs_buf_str(&jobs), jobs.len, err);
	if (st == LBS_OK)
		st = write_file(list_path, lbs_buf_str(&list), err);
	/* The identity goes last: a folder without it is started afresh. */
	snprintf(path, sizeof path, "%s/sweep", pl->dir);
	if (st == LBS_OK)
		st = write_file(path, identity, err);
	lbs_buf_free(&jobs);
	lbs_buf_free(&list);
	return st;
}

/* Runs GNU parallel over the job list and waits for it, with a progress
 * line on a terminal. Returns its exit status (-1 if it could not start). */
static int run_parallel(const options *o, const lbs_sweep *sw, const plan *pl, bool show)
{
	char jobs[4200], joblog[4200];
	snprintf(jobs, sizeof jobs, "%s/jobs", pl->dir);
	snprintf(joblog, sizeof joblog, "%s/joblog", pl->dir);
	const char *args[64];
	size_t n = 0;
	args[n++] = "parallel";
	args[n++] = "--will-cite";
	args[n++] = "--joblog";
	args[n++] = joblog;
	args[n++] = "--resume-failed";
	if (o->jobs) {
		args[n++] = "-j";
		args[n++] = o->jobs;
	}
	for (size_t i = 0; i < o->n_logins; i++) {
		args[n++] = "--sshlogin";
		args[n++] = o->logins[i];
	}
	args[n++] = "--null";
	args[n++] = "-a";
	args[n++] = jobs;
	args[n] = NULL;
	pid_t pid = fork();
	if (pid < 0)
		return -1;
	if (pid == 0) {
#ifdef __linux__
		/* If lbsim dies, GNU parallel stops too, rather than running on
		 * beside the next sweep that takes over the work folder. */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
#endif
		/* The job lines are POSIX shell, whatever shell started lbsim. */
		setenv("PARALLEL_SHELL", "/bin/sh", 1);
		int null = open("/dev/null", O_RDONLY);
		if (null >= 0)
			dup2(null, STDIN_FILENO);
		execvp("parallel", (char *const *)args);
		_exit(127);
	}
	double t0 = lbs_monotonic_s(), next = t0;
	size_t done0 = count_done(pl);
	bool forwarded = false;
	int status = 0;
	for (;;) {
		pid_t w = waitpid(pid, &status, show ? WNOHANG : 0);
		if (w == pid)
			break;
		if (w < 0 && errno != EINTR)
			return -1;
		if (interrupted && !forwarded) {
			kill(pid, SIGTERM); /* parallel stops its jobs; they roll back */
			forwarded = true;
		}
		if (show && w == 0) {
			double now = lbs_monotonic_s();
			if (now >= next) {
				size_t done = count_done(pl);
				char el[32], left[48] = "";
				format_duration(el, sizeof el, now - t0);
				if (done > done0 && done < pl->n) {
					char t[32];
					format_duration(t, sizeof t, (now - t0) / (double)(done - done0) *
								     (double)(pl->n - done));
					snprintf(left, sizeof left, ", about %s left", t);
				}
				fprintf(stderr, "\rlbsim: sweep %s: %zu/%zu points (%.0f%%), %s elapsed%s\033[K",
					sw->name, done, pl->n, pl->n ? 100.0 * (double)done / (double)pl->n : 100.0,
					el, left);
				next = now + 0.25;
			}
			nanosleep(&(struct timespec){ 0, 50000000 }, NULL);
		}
	}
	if (show)
		fprintf(stderr, "\r\033[K");
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* Removes the work folder of a finished sweep. The identity goes first, as
 * it came last: a removal cut short leaves a folder that the next run
 * starts afresh (finding every point merged), never one that claims a
 * sweep but lacks its job list. */
static void remove_work_dir(plan *pl)
{
	static const char *const files[] = { "jobs", "jobs.tmp", "points.list", "joblog", "lock", "jobs.lock" };
	char path[4200];
	snprintf(path, sizeof path, "%s/sweep", pl->dir);
	unlink(path);
	remove_leftovers(pl->dir, true);
	for (size_t i = 0; i < sizeof files / sizeof *files; i++) {
		snprintf(path, sizeof path, "%s/%s", pl->dir, files[i]);
		unlink(path);
	}
	/* and the temporaries of files whose writing was cut short */
	DIR *d = opendir(pl->dir);
	for (struct dirent *e; d && (e = readdir(d));)
		if (strstr(e->d_name, ".tmp.")) {
			lbs_fmt(path, sizeof path, "%s/%s", pl->dir, e->d_name);
			unlink(path);
		}
	if (d)
		closedir(d);
	snprintf(path, sizeof path, "%s/points", pl->dir);
	rmdir(path);
	rmdir(pl->dir);
}

static int parse_options(int argc, char **argv, options *o)
{
	static const struct option longopts[] = {
		{ "jobs", required_argument, NULL, 'j' },   { "output", required_argument, NULL, 'o' },
		{ "shard", required_argument, NULL, 'k' },  { "sshlogin", required_argument, NULL, 'S' },
		{ "list", no_argument, NULL, 'l' },         { "keep", no_argument, NULL, 'K' },
		{ "quiet", no_argument, NULL, 'q' },        { "help", no_argument, NULL, 'h' },
		{ "max-rows", required_argument, NULL, 'M' }, { "max-trace-rows", required_argument, NULL, 'T' },
		{ "points-per-job", required_argument, NULL, 'B' },
		{ "plugins", no_argument, NULL, 'L' },
		{ NULL, 0, NULL, 0 },
	};
	*o = (options){ .output = "results.db", .shard_k = 1, .shard_n = 1, .max_rows = LBS_DEFAULT_MAX_ROWS };
	int c;
	while ((c = getopt_long(argc, argv, "j:o:S:qh", longopts, NULL)) != -1) {
		switch (c) {
		case 'j': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || *end || v < 1 || v > 100000) {
				fprintf(stderr, "lbsim sweep: -j %s: expected a number of jobs from 1 to 100000\n",
					optarg);
				return LBS_EUSAGE;
			}
			o->jobs = optarg;
			break;
		}
		case 'o': o->output = optarg; break;
		case 'B': {
			char *end;
			long v = strtol(optarg, &end, 10);
			if (*optarg < '0' || *optarg > '9' || *end || v < 1 || v > LBS_SWEEP_MAX_POINTS) {
				fprintf(stderr, "lbsim sweep: --points-per-job %s: expected a number of points from "
					"1 to %d\n", optarg, LBS_SWEEP_MAX_POINTS);
				return LBS_EUSAGE;
			}
			o->per_job = (size_t)v;
			break;
		}
		case 'k': {
			unsigned long long k, n;
			char tail;
			if (sscanf(optarg, "%llu/%llu%c", &k, &n, &tail) != 2 || n < 1 || k < 1 || k > n ||
			    n > LBS_SWEEP_MAX_POINTS || *optarg < '0' || *optarg > '9') {
				fprintf(stderr, "lbsim sweep: --shard %s: expected K/N with 1 <= K <= N, e.g. "
					"--shard 2/8\n", optarg);
				return LBS_EUSAGE;
			}
			o->shard_k = (size_t)k;
			o->shard_n = (size_t)n;
			break;
		}
		case 'S':
			if (o->n_logins == sizeof o->logins / sizeof *o->logins) {
				fprintf(stderr, "lbsim sweep: too many --sshlogin options (join them with commas)\n");
				return LBS_EUSAGE;
			}
			o->logins[o->n_logins++] = optarg;
			break;
		case 'M':
		case 'T':
			if (!lbs_row_limit_option("lbsim sweep", c == 'T', optarg, &o->max_rows))
				return LBS_EUSAGE;
			break;
		case 'l': o->list = true; break;
		case 'L': lbs_plugins_permit(1); break;
		case 'K': o->keep = true; break;
		case 'q': o->quiet = true; break;
		case 'h': usage(stdout); return -1;
		default: usage(stderr); return LBS_EUSAGE;
		}
	}
	if (optind + 1 != argc) {
		fprintf(stderr, "lbsim sweep: %s\n", optind == argc ? "no sweep file given" : "one sweep file at a time");
		usage(stderr);
		return LBS_EUSAGE;
	}
	o->sweep = argv[optind];
	/* Listing runs nothing: no plugin loads, whatever allows it. */
	if (o->list)
		lbs_plugins_permit(-1);
	lbs_error err = { 0 };
	if (lbs_recorder_check_path("-o", o->output, &err) != LBS_OK) {
		fprintf(stderr, "lbsim sweep: %s\n", err.msg);
		return LBS_EUSAGE;
	}
	return 0;
}

static void list_points(const lbs_sweep *sw, const options *o)
{
	printf("point");
	for (size_t k = 0; k < sw->n_keys; k++)
		printf("\t%s", sw->keys[k].name);
	printf("\n");
	for (size_t p = o->shard_k - 1; p < sw->n_points; p += o->shard_n) {
		printf("%zu", p + 1);
		for (size_t k = 0; k < sw->n_keys; k++)
			printf("\t%s", lbs_sweep_value(sw, p, k));
		printf("\n");
	}
}

/* Merges the points databases in plan order, each in one transaction, each
 * run tagged with its point. */
static lbs_status merge_points(const lbs_sweep *sw, const plan *pl, lbs_merge *m, lbs_merge_counts *n,
			       lbs_error *err)
{
	size_t n_seg;
	segment *seg = list_segments(pl, &n_seg);
	const char **keys = calloc(sw->n_keys + 1, sizeof *keys);
	const char **values = calloc(pl->n * sw->n_keys + 1, sizeof *values);
	lbs_merge_tag *tags = calloc(pl->n + 1, sizeof *tags);
	lbs_status st = keys && values && tags ? LBS_OK : lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	for (size_t k = 0; k < sw->n_keys && st == LBS_OK; k++)
		keys[k] = sw->keys[k].name;
	for (size_t s = 0; s < n_seg && st == LBS_OK; s++) {
		size_t count = seg[s].last - seg[s].first + 1, have = 0;
		for (size_t i = 0; i < count; i++) {
			size_t p = pl->points[seg[s].first + i];
			const char **v = values + i * sw->n_keys;
			for (size_t k = 0; k < sw->n_keys; k++)
				v[k] = lbs_sweep_value(sw, p - 1, k);
			tags[i] = (lbs_merge_tag){ .sweep = sw->name, .hash = sw->hash, .point = (int64_t)p,
						   .n = sw->n_keys, .keys = keys, .values = v };
			have += lbs_merge_has_point(m, sw->hash, (int64_t)p);
		}
		if (have == count) { /* merged before an interruption */
			n->skipped += count;
			continue;
		}
		char db[4200], dir[4200];
		snprintf(dir, sizeof dir, "%s/points", pl->dir);
		lbs_sweep_segment_path(db, sizeof db, dir, pl->points[seg[s].first], pl->points[seg[s].last]);
		st = lbs_merge_points(m, db, tags, count, &interrupted, n, err);
	}
	free(seg);
	free(keys);
	free(values);
	free(tags);
	return st;
}

int lbs_sweep_command(int argc, char **argv)
{
	if (argc > 1 && !strcmp(argv[1], "--run-batch"))
		return lbs_sweep_batch_command(argc, argv);
	double t0 = lbs_monotonic_s();
	options o;
	int rc = parse_options(argc, argv, &o);
	if (rc)
		return rc < 0 ? 0 : rc;
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	lbs_signals_watch(&interrupted); /* a wait for the output's lock gives up on them */

	lbs_error err = { 0 };
	lbs_sweep sw;
	lbs_datapath file; /* `lbsim sweep sweeps/cluster-size`: an installed sweep */
	lbs_datapath_scenario(o.sweep, &file);
	lbs_status st = lbs_datapath_check_named(o.sweep, &file, &err);
	if (st == LBS_OK)
		st = lbs_sweep_load(&sw, file.path, &err);
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim sweep: %s\n", err.msg);
		return st;
	}
	if (o.shard_n > sw.n_points) {
		fprintf(stderr, "lbsim sweep: --shard %zu/%zu: the sweep has only %zu point%s\n", o.shard_k,
			o.shard_n, sw.n_points, sw.n_points == 1 ? "" : "s");
		lbs_sweep_destroy(&sw);
		return LBS_EUSAGE;
	}
	if (o.list) {
		list_points(&sw, &o);
		lbs_sweep_destroy(&sw);
		return 0;
	}
	/* The points of the shard that run: a point whose run another stands
	 * for (sw.run_as) is never made. */
	size_t in_shard = 0;
	for (size_t p = o.shard_k - 1; p < sw.n_points; p += o.shard_n)
		in_shard += sw.run_as[p] == p;
	/* The output-size guard, before anything is written: every point of the
	 * shard (those already in the output too) is one run. At most 10^4
	 * points of 10^9 iterations x 10^6 workers: the sum fits in 64 bits. */
	if (sw.detail == LBS_DETAIL_WORKERS) {
		uint64_t rows = 0, lo = UINT64_MAX, hi = 0;
		for (size_t p = o.shard_k - 1; p < sw.n_points; p += o.shard_n) {
			if (sw.run_as[p] != p)
				continue;
			rows += sw.point_rows[p];
			lo = sw.point_rows[p] < lo ? sw.point_rows[p] : lo;
			hi = sw.point_rows[p] > hi ? sw.point_rows[p] : hi;
		}
		char how[256];
		if (lo == hi)
			snprintf(how, sizeof how, "%zu point%s of %llu rows (iterations x workers)", in_shard,
				 in_shard == 1 ? "" : "s", (unsigned long long)lo);
		else
			snprintf(how, sizeof how, "%zu points of %llu to %llu rows (iterations x workers)",
				 in_shard, (unsigned long long)lo, (unsigned long long)hi);
		if ((st = lbs_check_worker_rows(rows, o.max_rows, sw.path, how, &err)) != LBS_OK) {
			fprintf(stderr, "lbsim sweep: %s\n", err.msg);
			lbs_sweep_destroy(&sw);
			return st;
		}
	}
	char lbsim[4096];
	self_path(lbsim, sizeof lbsim, argv[0]);
	lbs_merge m = { 0 };
	plan pl = { .lock_fd = -1 };
	/* A results file this sweep creates is removed if it fails before
	 * merging a point: a refusal leaves no empty file. */
	struct stat out_st;
	bool created = lstat(o.output, &out_st) != 0 && errno == ENOENT;
	struct stat dir_st;
	if ((st = check_parallel(&err)) == LBS_OK && (st = work_dir(o.output, pl.dir, sizeof pl.dir, &err)) == LBS_OK &&
	    lstat(pl.dir, &dir_st) == 0 && (!S_ISDIR(dir_st.st_mode) || dir_st.st_uid != geteuid()))
		st = lbs_error_set(&err, LBS_EINPUT, "%s: the work folder of %s is %s: refused (remove it; a "
				   "sweep writes only into a folder of its own)", pl.dir, o.output,
				   S_ISLNK(dir_st.st_mode) ? "a symbolic link" : !S_ISDIR(dir_st.st_mode) ? "not a folder"
				   : "another user's");
	if (st == LBS_OK && (st = lbs_merge_open(&m, o.output, &err)) == LBS_OK) {
		/* Nothing to do when the output holds every point and no work is pending. */
		size_t have = 0;
		for (size_t p = o.shard_k - 1; p < sw.n_points; p += o.shard_n)
			have += sw.run_as[p] == p && lbs_merge_has_point(&m, sw.hash, (int64_t)p + 1);
		if (have == in_shard && !exists(pl.dir)) {
			if (!o.quiet)
				printf("sweep %s: all %zu point%s already in %s\n", sw.name, in_shard,
				       in_shard == 1 ? " is" : "s are", o.output);
			lbs_merge_close(&m);
			lbs_sweep_destroy(&sw);
			return 0;
		}
		st = prepare(&sw, &o, &m, lbsim, &pl, &err);
	}
	if (st != LBS_EINTR && interrupted)
		st = lbs_error_set(&err, LBS_EINTR, "interrupted before any point ran");
	size_t before = st == LBS_OK ? count_done(&pl) : 0;
	bool show = !o.quiet && isatty(STDERR_FILENO);
	if (st == LBS_OK && before < pl.n) {
		int prc = run_parallel(&o, &sw, &pl, show);
		size_t done = count_done(&pl);
		char joblog[4200];
		snprintf(joblog, sizeof joblog, "%s/joblog", pl.dir);
		if (prc < 0) {
			st = lbs_error_set(&err, LBS_EIO, "cannot run GNU parallel: %s", strerror(errno));
		} else if (interrupted) {
			st = lbs_error_set(&err, LBS_EINTR, "interrupted with %zu of %zu points done; run the "
					   "same command again to resume", done, pl.n);
		} else if (done < pl.n) {
			/* The exit status of a failed point's job, as the job log has it. */
			int code = LBS_EINTERNAL;
			size_t n_seg;
			segment *seg = list_segments(&pl, &n_seg);
			for (size_t i = 0, s = 0; i < pl.n; i++) {
				while (s < n_seg && seg[s].last < i)
					s++;
				if (s < n_seg && seg[s].first <= i)
					continue; /* done */
				int c = logged_exit(joblog, pl.job[i]);
				if (c == LBS_EINPUT || c == LBS_EIO || c == LBS_EINTERNAL || c == LBS_EINTR) {
					code = c;
					break;
				}
			}
			free(seg);
			st = lbs_error_set(&err, (lbs_status)code,
					   "%zu of %zu points failed (their errors are above; the job log is "
					   "%s): run the same command again to retry them", pl.n - done, pl.n,
					   joblog);
		}
	}
	size_t ran = st == LBS_OK ? pl.n - before : 0;
	lbs_merge_counts n = { 0 };
	if (st == LBS_OK)
		st = merge_points(&sw, &pl, &m, &n, &err);
	if (st == LBS_EINTR && n.added)
		lbs_error_prefix(&err, "%zu points merged", n.added);
	if (m.db)
		lbs_merge_close(&m);
	if (st != LBS_OK && created && !n.added)
		lbs_recorder_remove(o.output);
	if (st == LBS_OK && !o.keep)
		remove_work_dir(&pl);
	if (pl.lock_fd >= 0)
		close(pl.lock_fd);
	free(pl.points);
	free(pl.job);
	if (st != LBS_OK) {
		fprintf(stderr, "lbsim sweep: %s\n", err.msg);
		lbs_sweep_destroy(&sw);
		return st;
	}
	double wall = lbs_monotonic_s() - t0;
	if (!o.quiet) {
		printf("sweep %s (%s): %zu point%s", sw.name, sw.path, sw.n_points, sw.n_points == 1 ? "" : "s");
		if (sw.n_runs < sw.n_points)
			printf(" (%zu runs: %zu share another point's run, which differs only in the options of "
			       "a policy it does not use)", sw.n_runs, sw.n_points - sw.n_runs);
		if (o.shard_n > 1)
			printf(", shard %zu/%zu: %zu", o.shard_k, o.shard_n, in_shard);
		printf("\nran %zu point%s in %.2f s (%.2f runs/s, -j %s)", ran, ran == 1 ? "" : "s", wall,
		       wall > 0 ? (double)ran / wall : 0.0, o.jobs ? o.jobs : "cores");
		if (in_shard > ran)
			printf("; %zu done before", in_shard - ran);
		printf("\nresults: %s", o.output);
		if (n.added)
			printf(" (runs %lld to %lld)", (long long)n.first_run_id, (long long)n.last_run_id);
		printf("\n");
	}
	lbs_sweep_destroy(&sw);
	return 0;
}
