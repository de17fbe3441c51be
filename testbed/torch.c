/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "testbed/torch.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "util/datapath.h"
#include "util/proc.h"

#ifndef LBS_SOURCE_DIR
#define LBS_SOURCE_DIR ""
#endif

#define WORKER_REL "testbed/torch_worker.py"

static const char *const nets[] = { "cifarnet", "resnet32", "resnet50", "resnet101", "teacher-student" };

bool lbs_tb_torch_has_net(const char *name)
{
	for (size_t i = 0; i < sizeof nets / sizeof *nets; i++)
		if (!strcmp(nets[i], name))
			return true;
	return false;
}

const char *lbs_tb_torch_nets(void)
{
	return "cifarnet, resnet32, resnet50, resnet101, teacher-student";
}

/* The python3 to run, or NULL; buf holds one found on PATH. */
static const char *python(char *buf, size_t len)
{
	const char *p = getenv("LBSIM_PYTHON");
	if (p && *p)
		return p;
	if (access("/usr/bin/python3", X_OK) == 0)
		return "/usr/bin/python3";
	return lbs_proc_find("python3", buf, len) ? buf : NULL;
}

typedef struct script_search {
	char path[LBS_DATAPATH_MAX];
	bool found;
} script_search;

static void look(void *ctx, const char *dir)
{
	script_search *s = ctx;
	if (s->found || !dir || !*dir)
		return;
	char p[LBS_DATAPATH_MAX];
	if ((size_t)snprintf(p, sizeof p, "%s/%s", dir, WORKER_REL) < sizeof p && access(p, R_OK) == 0) {
		memcpy(s->path, p, sizeof p);
		s->found = true;
	}
}

/* The worker program, or NULL. */
static const char *script(char *buf, size_t len)
{
	const char *e = getenv("LBSIM_TORCH_WORKER");
	if (e && *e)
		return access(e, R_OK) == 0 ? lbs_fmt(buf, len, "%s", e) : NULL;
	script_search s = { .found = false };
	lbs_datapath_each(look, &s);
	look(&s, LBS_SOURCE_DIR);
	return s.found ? lbs_fmt(buf, len, "%s", s.path) : NULL;
}

lbs_status lbs_tb_torch_probe(char *version, size_t len, lbs_error *err)
{
	char found[LBS_DATAPATH_MAX], prog[LBS_DATAPATH_MAX];
	const char *py = python(found, sizeof found);
	if (!py)
		return lbs_error_set(err, LBS_ENOTESTBED, "the torch worker needs python3, and there is none "
				     "(LBSIM_PYTHON, /usr/bin/python3 or PATH; Debian: apt-get install python3 "
				     "python3-torch)");
	if (!script(prog, sizeof prog))
		return lbs_error_set(err, LBS_ENOTESTBED, "the torch worker's program %s is not found (set "
				     "LBSIM_TORCH_WORKER, or LBSIM_PATH to lbsim's source tree, or install lbsim)",
				     WORKER_REL);
	int out[2];
	if (pipe(out) != 0)
		return lbs_error_set(err, LBS_EINTERNAL, "pipe: %s", strerror(errno));
	fflush(NULL);
	pid_t pid = fork();
	if (pid < 0) {
		close(out[0]);
		close(out[1]);
		return lbs_error_set(err, LBS_EINTERNAL, "fork: %s", strerror(errno));
	}
	if (pid == 0) {
		dup2(out[1], STDOUT_FILENO);
		dup2(out[1], STDERR_FILENO);
		close(out[0]);
		close(out[1]);
		execl(py, py, prog, "probe", (char *)NULL);
		_exit(127);
	}
	close(out[1]);
	char text[512] = "";
	size_t at = 0;
	ssize_t k;
	while (at + 1 < sizeof text && ((k = read(out[0], text + at, sizeof text - 1 - at)) > 0 || (k < 0 && errno == EINTR)))
		at += k > 0 ? (size_t)k : 0;
	text[at] = '\0';
	close(out[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	text[strcspn(text, "\n")] = '\0';
	if (WIFEXITED(status) && WEXITSTATUS(status) == 127)
		return lbs_error_set(err, LBS_ENOTESTBED, "the torch worker needs python3: %s cannot be run", py);
	if (!(WIFEXITED(status) && WEXITSTATUS(status) == 0))
		return lbs_error_set(err, LBS_ENOTESTBED, "the torch worker needs PyTorch, and %s cannot import it "
				     "(Debian: apt-get install python3-torch): %s", py,
				     strncmp(text, "torch_worker: ", 14) ? text : text + 14);
	if (version)
		lbs_fmt(version, len, "%s", text);
	return LBS_OK;
}

/* The child: never returns. */
static void exec_worker(const char *py, const char *prog, const lbs_tb_torch_spec *s, int in, int out,
			pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	if (s->cpu >= 0) {
		cpu_set_t set;
		CPU_ZERO(&set);
		CPU_SET(s->cpu, &set);
		sched_setaffinity(0, sizeof set, &set); /* best effort, as the blas worker */
	}
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGPIPE, SIG_DFL);
	/* Its ends of the pipes at 3 and 4, nothing else of the coordinator's
	 * open: a worker holding another's pipe would keep it from seeing
	 * the end of its input. */
	int in3 = fcntl(in, F_DUPFD, 10), out4 = fcntl(out, F_DUPFD, 10);
	if (in3 < 0 || out4 < 0 || dup2(in3, 3) < 0 || dup2(out4, 4) < 0)
		_exit(1);
	long max = sysconf(_SC_OPEN_MAX);
	for (long fd = 5; fd < (max > 0 && max < 65536 ? max : 65536); fd++)
		close((int)fd);
	/* One thread computes, as the blas worker's one BLAS thread; gloo on
	 * loopback. */
	setenv("OMP_NUM_THREADS", "1", 1);
	setenv("MKL_NUM_THREADS", "1", 1);
	setenv("OPENBLAS_NUM_THREADS", "1", 1);
	setenv("GLOO_SOCKET_IFNAME", "lo", 1);
	setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
	char rank[24], world[24], gb[24], mb[24], seed[24], every[24], stale[24], backup[24], period[24];
	snprintf(stale, sizeof stale, "%lld", (long long)s->staleness);
	snprintf(backup, sizeof backup, "%lld", (long long)s->backup);
	snprintf(period, sizeof period, "%lld", (long long)(s->period > 0 ? s->period : 1));
	snprintf(rank, sizeof rank, "%zu", s->rank);
	snprintf(world, sizeof world, "%zu", s->world);
	snprintf(gb, sizeof gb, "%lld", (long long)s->global_batch);
	snprintf(mb, sizeof mb, "%lld", (long long)s->max_batch);
	snprintf(seed, sizeof seed, "%llu", (unsigned long long)(s->seed % 2147483647ULL));
	snprintf(every, sizeof every, "%lld", (long long)(s->loss_every > 0 ? s->loss_every : 10));
	char *argv[] = { (char *)py, "-u", (char *)prog, "serve", "--net", (char *)s->net, "--rank", rank,
			 "--world", world, "--global-batch", gb, "--max-batch", mb, "--seed", seed,
			 "--loss-every", every,
			 "--loss-file", (char *)(s->loss_file ? s->loss_file : ""),
			 "--in-fd", "3", "--out-fd", "4", "--init", (char *)(s->rendezvous ? s->rendezvous : ""),
			 "--sync", (char *)(s->sync ? s->sync : "bsp"), "--staleness", stale, "--backup", backup,
			 "--period", period, "--penalty", (char *)(s->penalty ? s->penalty : "inverse"),
			 "--ps-log", (char *)(s->ps_log ? s->ps_log : ""), "--role", s->ps ? "ps" : "worker",
			 s->ddp ? "--ddp" : NULL, NULL };
	execv(py, argv);
	_exit(127);
}

lbs_status lbs_tb_torch_spawn(lbs_tb_worker *w, const lbs_tb_torch_spec *spec, lbs_error *err)
{
	w->to_fd = w->from_fd = -1;
	w->pid = 0;
	char found[LBS_DATAPATH_MAX], prog[LBS_DATAPATH_MAX];
	const char *py = python(found, sizeof found);
	if (!py || !script(prog, sizeof prog))
		return lbs_tb_torch_probe(NULL, 0, err);
	pid_t parent = getpid();
	int to, from;
	lbs_status st = lbs_proc_fork_piped(&w->pid, &to, &from, err);
	if (st != LBS_OK)
		return st;
	if (w->pid == 0)
		exec_worker(py, prog, spec, from, to, parent);
	w->to_fd = to;
	w->from_fd = from;
	w->self_cpu = true;
	w->offsets = true;
	return LBS_OK;
}

static lbs_status fw_open(const char *net, int64_t max_batch, void **ctx, char *version, size_t len,
			  lbs_error *err)
{
	lbs_status st = lbs_tb_torch_probe(version, len, err);
	if (st != LBS_OK)
		return st;
	if (!lbs_tb_torch_has_net(net))
		return lbs_error_set(err, LBS_EUSAGE, "--torch %s: the torch worker builds %s", net, lbs_tb_torch_nets());
	lbs_tb_worker *w = lbs_calloc(1, sizeof *w, err);
	if (!w)
		return LBS_EINTERNAL;
	lbs_tb_torch_spec ts = { .net = net, .max_batch = max_batch, .global_batch = max_batch, .cpu = -1,
				 .rank = 0, .world = 1, .seed = 1 };
	if ((st = lbs_tb_torch_spawn(w, &ts, err)) == LBS_OK)
		st = lbs_tb_worker_ready(w, "the torch worker", err);
	if (st != LBS_OK) {
		lbs_tb_worker_stop(w);
		free(w);
		return st;
	}
	*ctx = w;
	return LBS_OK;
}

static void fw_close(void *ctx)
{
	lbs_tb_worker_finish(ctx);
	lbs_tb_worker_stop(ctx);
	free(ctx);
}

const lbs_calib_framework lbs_tb_torch_framework = {
	.name = "torch",
	.summary = "PyTorch",
	.open = fw_open,
	.step = lbs_tb_worker_step,
	.close = fw_close,
};
