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

static bool write_all(int fd, const void *buf, size_t n)
{
	const char *p = buf;
	while (n > 0) {
		ssize_t k = write(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		p += k;
		n -= (size_t)k;
	}
	return true;
}

static bool read_all(int fd, void *buf, size_t n)
{
	char *p = buf;
	while (n > 0) {
		ssize_t k = read(fd, p, n);
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return false;
		p += k;
		n -= (size_t)k;
	}
	return true;
}

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
	if (!write_all(out, &r, sizeof r) || r.status != LBS_OK)
		_exit(1);
	int64_t batch;
	while (read_all(in, &batch, sizeof batch) && batch >= 0) {
		double c0 = lbs_cpu_time_s(), t0 = lbs_monotonic_s();
		lbs_blas_work_run(work, batch);
		r.compute_s = lbs_monotonic_s() - t0;
		r.cpu_s = lbs_cpu_time_s() - c0;
		if (!write_all(out, &r, sizeof r))
			break;
	}
	lbs_blas_work_destroy(work);
	lbs_blas_close(blas);
	_exit(0);
}

lbs_status lbs_tb_worker_start(lbs_tb_worker *w, const lbs_net *net, int64_t max_batch, int cpu,
			       lbs_error *err)
{
	int down[2], up[2];
	w->pid = 0;
	w->to_fd = w->from_fd = -1;
	if (pipe(down) != 0)
		return lbs_error_set(err, LBS_EINTERNAL, "pipe: %s", strerror(errno));
	if (pipe(up) != 0) {
		close(down[0]);
		close(down[1]);
		return lbs_error_set(err, LBS_EINTERNAL, "pipe: %s", strerror(errno));
	}
	pid_t parent = getpid();
	fflush(NULL); /* nothing buffered is written twice */
	pid_t pid = fork();
	if (pid < 0) {
		close(down[0]);
		close(down[1]);
		close(up[0]);
		close(up[1]);
		return lbs_error_set(err, LBS_EINTERNAL, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		close(down[1]);
		close(up[0]);
		serve(net, max_batch, cpu, down[0], up[1], parent);
	}
	close(down[0]);
	close(up[1]);
	w->pid = pid;
	w->to_fd = down[1];
	w->from_fd = up[0];
	lbs_tb_result r;
	if (!read_all(w->from_fd, &r, sizeof r) || r.status != LBS_OK) {
		lbs_tb_worker_stop(w);
		return lbs_error_set(err, LBS_EINTERNAL, "a worker process for %s at batch %lld could not "
				     "start (out of memory for its GEMM buffers?)", net->name, (long long)max_batch);
	}
	return LBS_OK;
}

lbs_status lbs_tb_worker_send(lbs_tb_worker *w, int64_t batch, lbs_error *err)
{
	if (!write_all(w->to_fd, &batch, sizeof batch))
		return lbs_error_set(err, LBS_EINTERNAL, "worker process %ld: cannot send its batch: %s",
				     (long)w->pid, strerror(errno));
	return LBS_OK;
}

lbs_status lbs_tb_worker_read(lbs_tb_worker *w, lbs_tb_result *out, lbs_error *err)
{
	if (!read_all(w->from_fd, out, sizeof *out))
		return lbs_error_set(err, LBS_EINTERNAL, "worker process %ld died during its iteration",
				     (long)w->pid);
	return LBS_OK;
}

void lbs_tb_worker_stop(lbs_tb_worker *w)
{
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
