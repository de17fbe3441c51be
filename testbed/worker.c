/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "testbed/worker.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "models/calib.h"
#include "util/clock.h"
#include "util/proc.h"

/* The child: never returns. */
static void serve(const lbs_net *net, int64_t max_batch, int cpu, int in, int out, pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent) /* the coordinator died before prctl */
		_exit(1);
	if (cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof set, &set); /* best effort: unbound if refused */
	}
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	lbs_error err = { 0 };
	lbs_blas *blas = NULL;
	lbs_blas_work *work = NULL;
	lbs_tb_result r = { 0 };
	r.status = lbs_blas_open(1, &blas, &err); /* one thread per worker, none started */
	if (r.status == LBS_OK)
		r.status = lbs_blas_work_create(blas, net, max_batch, 1e12, &work, &err);
	/* One untimed iteration at the largest batch, as the calibration warms
	 * up: every page of the buffers and the BLAS's own are touched before
	 * the first timed one. */
	if (r.status == LBS_OK)
		lbs_blas_work_run(work, max_batch);
	if (!lbs_write_all(out, &r, sizeof r) || r.status != LBS_OK)
		_exit(1);
	int64_t batch;
	while (lbs_read_all(in, &batch, sizeof batch) && batch >= 0) {
		/* Only the wall clock (vDSO, no system call) between the
		 * batch and the answer: reading its own CPU clock makes the
		 * kernel account its running time, and a worker that has
		 * overrun its quota since the last tick is throttled right
		 * there, its answer held back until its next period
		 * (doc/validation.md). The coordinator reads its CPU time. */
		double t0 = lbs_monotonic_s();
		lbs_blas_work_run(work, batch);
		r.compute_s = lbs_monotonic_s() - t0;
		r.start_s = t0;
		if (!lbs_write_all(out, &r, sizeof r))
			break;
	}
	lbs_blas_work_destroy(work);
	lbs_blas_close(blas);
	_exit(0);
}

lbs_status lbs_tb_worker_start(lbs_tb_worker *w, const lbs_net *net, int64_t max_batch, int cpu,
			       lbs_error *err)
{
	pid_t parent = getpid();
	int to, from;
	w->to_fd = w->from_fd = -1;
	lbs_status st = lbs_proc_fork_piped(&w->pid, &to, &from, err);
	if (st != LBS_OK)
		return st;
	if (w->pid == 0)
		serve(net, max_batch, cpu, from, to, parent);
	w->to_fd = to;
	w->from_fd = from;
	w->self_cpu = false;
	char what[128];
	return lbs_tb_worker_ready(w, lbs_fmt(what, sizeof what, "a worker process for %s at batch %lld "
					      "(out of memory for its GEMM buffers?)", net->name,
					      (long long)max_batch), err);
}

lbs_status lbs_tb_worker_ready(lbs_tb_worker *w, const char *what, lbs_error *err)
{
	lbs_tb_result r;
	if (!lbs_read_all(w->from_fd, &r, sizeof r) || r.status != LBS_OK) {
		lbs_tb_worker_stop(w);
		return lbs_error_set(err, LBS_EINTERNAL, "%s could not start", what);
	}
	w->cpu_mark_s = lbs_proc_cpu_s(w->pid); /* ready: its set-up is not an iteration's */
	return LBS_OK;
}

lbs_status lbs_tb_worker_send(lbs_tb_worker *w, int64_t batch, lbs_error *err)
{
	return lbs_tb_worker_send_at(w, batch, 0, err);
}

lbs_status lbs_tb_worker_send_at(lbs_tb_worker *w, int64_t batch, int64_t offset, lbs_error *err)
{
	const int64_t msg[2] = { batch, offset };
	if (!lbs_write_all(w->to_fd, msg, w->offsets ? sizeof msg : sizeof batch))
		return lbs_error_set(err, LBS_EINTERNAL, "worker process %ld: cannot send its batch: %s",
				     (long)w->pid, strerror(errno));
	return LBS_OK;
}

lbs_status lbs_tb_worker_read(lbs_tb_worker *w, lbs_tb_result *out, lbs_error *err)
{
	if (!lbs_read_all(w->from_fd, out, sizeof *out))
		return lbs_error_set(err, LBS_EINTERNAL, "worker process %ld died during its iteration",
				     (long)w->pid);
	/* Read once per answer, from outside and while it waits for its next
	 * batch (not on the way to sending it): the CPU time since the last. */
	double now = lbs_proc_cpu_s(w->pid);
	if (!w->self_cpu)
		out->cpu_s = now - w->cpu_mark_s;
	w->cpu_mark_s = now;
	return LBS_OK;
}

lbs_status lbs_tb_worker_step(void *w, int64_t batch, double *compute_s, lbs_error *err)
{
	lbs_tb_result r;
	lbs_status st = lbs_tb_worker_send(w, batch, err);
	if (st == LBS_OK && (st = lbs_tb_worker_read(w, &r, err)) == LBS_OK)
		*compute_s = r.compute_s;
	return st;
}

void lbs_tb_worker_finish(lbs_tb_worker *w)
{
	const int64_t end[2] = { -1, 0 };
	if (w->pid > 0 && w->to_fd >= 0 && !w->finishing) {
		/* a worker that died already: no SIGPIPE for us */
		void (*was)(int) = signal(SIGPIPE, SIG_IGN);
		w->finishing = lbs_write_all(w->to_fd, end, w->offsets ? sizeof end : sizeof end[0]);
		signal(SIGPIPE, was);
	}
}

void lbs_tb_worker_stop(lbs_tb_worker *w)
{
	if (w->pid > 0 && w->finishing) {
		const double until = lbs_monotonic_s() + 3.0;
		struct timespec nap = { 0, 10000000 };
		pid_t got;
		while ((got = waitpid(w->pid, NULL, WNOHANG)) == 0 && lbs_monotonic_s() < until)
			nanosleep(&nap, NULL);
		if (got == w->pid)
			w->pid = 0;
	}
	w->finishing = false;
	if (w->pid > 0) {
		kill(w->pid, SIGKILL);
		while (waitpid(w->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (w->to_fd >= 0)
		close(w->to_fd);
	if (w->from_fd >= 0)
		close(w->from_fd);
	w->pid = 0;
	w->to_fd = w->from_fd = -1;
}
