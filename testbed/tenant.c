/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "testbed/tenant.h"

#include <errno.h>
#include <math.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"

#define SLOT_S 0.010

/* The child: never returns. */
static void spin(double load, int cpu, pid_t parent)
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
	double next = lbs_monotonic_s();
	volatile unsigned long sink = 0;
	for (;;) {
		double now = lbs_monotonic_s();
		if (now > next + SLOT_S) /* continued after a stop: a new slot from now */
			next = now;
		next += SLOT_S;
		double c0 = lbs_cpu_time_s();
		while (lbs_cpu_time_s() - c0 < load * SLOT_S && lbs_monotonic_s() < next)
			for (int k = 0; k < 1000; k++)
				sink += (unsigned long)k;
		struct timespec ts = { .tv_sec = (time_t)next, .tv_nsec = (long)(1e9 * (next - floor(next))) };
		while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
			;
	}
}

lbs_status lbs_tb_tenant_start(lbs_tb_tenant *t, double load, int cpu, lbs_error *err)
{
	*t = (lbs_tb_tenant){ .pid = 0, .on = true, .load = load };
	pid_t parent = getpid();
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0)
		return lbs_error_set(err, LBS_EINTERNAL, "fork: %s", strerror(errno));
	if (pid == 0)
		spin(load, cpu, parent);
	t->pid = pid;
	lbs_tb_tenant_set(t, false);
	return LBS_OK;
}

void lbs_tb_tenant_set(lbs_tb_tenant *t, bool on)
{
	if (t->pid > 0 && t->on != on) {
		kill(t->pid, on ? SIGCONT : SIGSTOP);
		t->on = on;
	}
}

double lbs_tb_tenant_cpu_s(const lbs_tb_tenant *t)
{
	char path[64];
	snprintf(path, sizeof path, "/proc/%ld/stat", (long)t->pid);
	FILE *f = t->pid > 0 ? fopen(path, "r") : NULL;
	if (!f)
		return NAN;
	char buf[1024];
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')'); /* after the command's name */
	unsigned long utime = 0, stime = 0;
	if (!p || sscanf(p + 2, "%*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &utime, &stime) != 2)
		return NAN;
	return (double)(utime + stime) / (double)sysconf(_SC_CLK_TCK);
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
