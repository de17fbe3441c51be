/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "testbed/tenant.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"

#define SLOT_S 0.010

static volatile sig_atomic_t job_on;

static void on_signal(int sig)
{
	job_on = sig == SIGUSR1;
}

/* The child: never returns. SIGUSR1 and SIGUSR2 are blocked on entry. */
static void spin(double load, size_t bytes, int cpu, pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	if (cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(cpu, &set);
		sched_setaffinity(0, sizeof set, &set);
	}
	setpriority(PRIO_PROCESS, 0, -20); /* best effort: root may, others keep 0 */
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	struct sigaction sa = { .sa_handler = on_signal };
	sigemptyset(&sa.sa_mask);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGUSR2, &sa, NULL);
	sigset_t none;
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL); /* a signal sent before now arrives here */
	char *mem = NULL;
	if (bytes > 0 && (mem = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0)) ==
	    MAP_FAILED)
		_exit(1);
	long page = sysconf(_SC_PAGESIZE);
	bool held = false;
	double next = lbs_monotonic_s();
	volatile unsigned long sink = 0;
	for (;;) {
		if (!job_on) {
			if (held) /* the pages go back; the next write faults them in again */
				madvise(mem, bytes, MADV_DONTNEED);
			held = false;
			sigset_t wait;
			sigemptyset(&wait);
			while (!job_on)
				sigsuspend(&wait);
		}
		if (mem && !held) {
			for (size_t off = 0; off < bytes; off += (size_t)page)
				mem[off] = 1;
			held = true;
		}
		double now = lbs_monotonic_s();
		if (now > next + SLOT_S) /* on again after a pause: a new slot from now */
			next = now;
		next += SLOT_S;
		double c0 = lbs_cpu_time_s();
		while (job_on && lbs_cpu_time_s() - c0 < load * SLOT_S && lbs_monotonic_s() < next)
			for (int k = 0; k < 1000; k++)
				sink += (unsigned long)k;
		struct timespec ts = { .tv_sec = (time_t)next, .tv_nsec = (long)(1e9 * (next - floor(next))) };
		while (job_on && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
}

lbs_status lbs_tb_tenant_start(lbs_tb_tenant *t, double load, size_t bytes, int cpu, lbs_error *err)
{
	*t = (lbs_tb_tenant){ .pid = 0, .on = false, .load = load, .bytes = bytes };
	pid_t parent = getpid();
	/* The child handles SIGUSR1/2 once its handlers are in place: until
	 * then they wait, blocked (their default would kill it). */
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGUSR2);
	sigprocmask(SIG_BLOCK, &block, &old);
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0)
		spin(load, bytes, cpu, parent);
	int e = errno;
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid < 0)
		return lbs_error_set(err, LBS_EINTERNAL, "fork: %s", strerror(e));
	t->pid = pid;
	return LBS_OK;
}

void lbs_tb_tenant_set(lbs_tb_tenant *t, bool on)
{
	if (t->pid > 0 && t->on != on) {
		kill(t->pid, on ? SIGUSR1 : SIGUSR2);
		t->on = on;
	}
}

double lbs_tb_tenant_memory_bytes(const lbs_tb_tenant *t)
{
	char path[64], line[256];
	snprintf(path, sizeof path, "/proc/%ld/smaps_rollup", (long)t->pid);
	FILE *f = t->pid > 0 ? fopen(path, "r") : NULL;
	if (!f)
		return NAN;
	double kb = NAN;
	while (fgets(line, sizeof line, f))
		if (sscanf(line, "Private_Dirty: %lf kB", &kb) == 1)
			break;
	fclose(f);
	return kb * 1024.0;
}

void lbs_tb_tenant_stop(lbs_tb_tenant *t)
{
	if (t->pid > 0) {
		kill(t->pid, SIGKILL);
		while (waitpid(t->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	t->pid = 0;
}
