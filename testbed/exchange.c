/* SPDX-License-Identifier: GPL-3.0-or-later */
#include "testbed/exchange.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sched.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "util/clock.h"
#include "util/proc.h"

#define PORT 7077
/* Shaping (doc/validation.md, "The network"). The model's bandwidth is
 * gradient bytes a second; htb counts frames, 1514 bytes for 1448 of TCP
 * payload (MTU 1500, timestamps on), so a class's rate is the bandwidth
 * times FRAME / PAYLOAD. Its bucket is one frame: what an idle link saves
 * is sent ahead of the rate, and with one frame a step of a ring starts at
 * most 0.12 ms ahead at 100 Mbit/s (the default bucket and TCP's 64 KiB
 * GSO frames let each step start 0.6 ms ahead, measured). The reverse
 * ACKs (IP packets under 256 bytes) go through a class of their own: the
 * model's links carry gradients only (sharing the class, they made each
 * link 2.3% slower). */
#define BURST_BYTES 1514
#define FRAME_BYTES 1514.0
#define PAYLOAD_BYTES 1448.0

enum { CMD_LISTEN = 1, CMD_CONNECT = 2, CMD_EXCHANGE = 3 };
enum { ROLE_SWITCH, ROLE_RING, ROLE_PS_WORKER, ROLE_PS_SERVER };

typedef struct answer {
	int32_t status; /* 0: done; else the errno of what failed */
	int32_t step;   /* what failed */
} answer;

typedef struct node_cfg {
	int role;
	size_t k;            /* this node's index: workers 0..N-1, then servers */
	size_t workers, servers;
	size_t floats;       /* gradient, in floats */
	double latency_s;
} node_cfg;

/* Node k's address, 10.77.0.0/16 from 10.77.0.1. */
static struct sockaddr_in address(size_t k)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(PORT) };
	a.sin_addr.s_addr = htonl((10u << 24) | (77u << 16) | (uint32_t)(k + 1));
	return a;
}

static void address_text(size_t k, char *buf, size_t len)
{
	uint32_t h = (uint32_t)(k + 1);
	lbs_fmt(buf, len, "10.77.%u.%u", (unsigned)(h >> 8), (unsigned)(h & 255));
}

static void wait_s(double s)
{
	if (s <= 0)
		return;
	double end = lbs_monotonic_s() + s;
	struct timespec ts = { .tv_sec = (time_t)end, .tv_nsec = (long)(1e9 * (end - floor(end))) };
	while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
		;
}

/* One side of a transfer: `left` bytes to send on or receive from fd. */
typedef struct xfer {
	int fd;
	char *p;
	size_t left;
	bool out;
} xfer;

/* Moves every transfer to its end at once (the sockets are non-blocking). */
static bool transfer(xfer *x, size_t n, struct pollfd *pf)
{
	for (;;) {
		size_t m = 0;
		for (size_t i = 0; i < n; i++)
			if (x[i].left)
				pf[m++] = (struct pollfd){ .fd = x[i].fd, .events = x[i].out ? POLLOUT : POLLIN };
		if (!m)
			return true;
		if (poll(pf, (nfds_t)m, -1) < 0 && errno != EINTR)
			return false;
		m = 0;
		for (size_t i = 0; i < n; i++) {
			if (!x[i].left)
				continue;
			short re = pf[m++].revents;
			if (!re)
				continue;
			ssize_t k = x[i].out ? send(x[i].fd, x[i].p, x[i].left, MSG_NOSIGNAL)
					     : recv(x[i].fd, x[i].p, x[i].left, 0);
			if (k < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
				continue;
			if (k <= 0)
				return false;
			x[i].p += k;
			x[i].left -= (size_t)k;
		}
	}
}

/* Float offset of part c of n of `floats`. */
static size_t part(size_t floats, size_t c, size_t n)
{
	return (size_t)((unsigned long long)floats * c / n);
}

static void answer_and_exit(int out, int32_t status, int32_t step)
{
	answer a = { status, step };
	lbs_write_all(out, &a, sizeof a);
	_exit(1);
}

static int tune(int fd)
{
	int one = 1;
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
	return fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
}

static int connect_to(size_t k)
{
	struct sockaddr_in a = address(k);
	/* The links come up within moments of being made: retry for 5 s. */
	for (int tries = 0; tries < 500; tries++) {
		int fd = socket(AF_INET, SOCK_STREAM, 0);
		if (fd < 0)
			return -1;
		if (connect(fd, (struct sockaddr *)&a, sizeof a) == 0)
			return fd;
		int e = errno;
		close(fd);
		if (e != ECONNREFUSED && e != ENETUNREACH && e != EHOSTUNREACH && e != ETIMEDOUT)
			return -1;
		wait_s(0.01);
	}
	return -1;
}

/* A node's life after its namespace is made: never returns. */
static void node_serve(const node_cfg *c, int in, int out)
{
	const size_t N = c->workers, S = c->servers;
	const bool server = c->role == ROLE_PS_SERVER;
	size_t nfd = c->role == ROLE_RING ? 2 : server ? N : S;
	int *fd = calloc(nfd, sizeof *fd);
	struct pollfd *pf = calloc(nfd + 1, sizeof *pf);
	xfer *x = calloc(nfd + 1, sizeof *x);
	size_t mine = server ? part(c->floats, c->k - N + 1, S) - part(c->floats, c->k - N, S) : c->floats;
	size_t chunk = 0; /* the largest part a ring node receives */
	for (size_t i = 0; c->role == ROLE_RING && i < N; i++)
		if (part(c->floats, i + 1, N) - part(c->floats, i, N) > chunk)
			chunk = part(c->floats, i + 1, N) - part(c->floats, i, N);
	float *buf = calloc(mine ? mine : 1, sizeof *buf);
	float *tmp = calloc((server ? N * mine : chunk) + 1, sizeof *tmp);
	int lfd = -1;
	if (!fd || !pf || !x || !buf || !tmp)
		answer_and_exit(out, ENOMEM, 0);
	for (size_t i = 0; i < mine; i++)
		buf[i] = 1e-3f * (float)(i % 1000) + (float)c->k;
	int64_t cmd;
	while (lbs_read_all(in, &cmd, sizeof cmd) && cmd >= 0) {
		bool ok = true;
		if (cmd == CMD_LISTEN) {
			struct sockaddr_in a = address(c->k);
			int one = 1;
			lfd = socket(AF_INET, SOCK_STREAM, 0);
			ok = lfd >= 0 && setsockopt(lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one) == 0 &&
			     bind(lfd, (struct sockaddr *)&a, sizeof a) == 0 && listen(lfd, (int)N + 1) == 0;
		} else if (cmd == CMD_CONNECT && c->role == ROLE_RING) {
			ok = N < 2 || ((fd[1] = connect_to((c->k + 1) % N)) >= 0 &&
				       (fd[0] = accept(lfd, NULL, NULL)) >= 0 && tune(fd[0]) == 0 && tune(fd[1]) == 0);
		} else if (cmd == CMD_CONNECT && c->role == ROLE_PS_WORKER) {
			for (size_t s = 0; s < S && ok; s++) {
				int32_t id = (int32_t)c->k;
				ok = (fd[s] = connect_to(N + s)) >= 0 && lbs_write_all(fd[s], &id, sizeof id) &&
				     tune(fd[s]) == 0;
			}
		} else if (cmd == CMD_CONNECT) {
			for (size_t i = 0; i < N && ok; i++) {
				int32_t id = -1;
				int f = accept(lfd, NULL, NULL);
				ok = f >= 0 && lbs_read_all(f, &id, sizeof id) && id >= 0 && (size_t)id < N;
				if (ok)
					ok = tune(fd[id] = f) == 0;
			}
		} else if (cmd == CMD_EXCHANGE && c->role == ROLE_RING && N >= 2) {
			/* Reduce-scatter: at step s, part k - s goes right, part
			 * k - s - 1 comes from the left and is added in; then
			 * all-gather: part k + 1 - s goes, part k - s comes. */
			for (size_t s = 0; s < 2 * (N - 1) && ok; s++) {
				bool gather = s >= N - 1;
				size_t t = gather ? s - (N - 1) : s;
				size_t send_part = (c->k + (gather ? 1 : 0) + 2 * N - t) % N;
				size_t recv_part = (c->k + 2 * N - t - (gather ? 0 : 1)) % N;
				size_t so = part(c->floats, send_part, N), se = part(c->floats, send_part + 1, N);
				size_t ro = part(c->floats, recv_part, N), re = part(c->floats, recv_part + 1, N);
				x[0] = (xfer){ fd[1], (char *)(buf + so), (se - so) * sizeof *buf, true };
				x[1] = (xfer){ fd[0], (char *)(gather ? buf + ro : tmp), (re - ro) * sizeof *buf, false };
				ok = transfer(x, 2, pf);
				wait_s(c->latency_s); /* the last byte's flight */
				for (size_t i = 0; ok && !gather && i < re - ro; i++)
					buf[ro + i] += tmp[i];
			}
		} else if (cmd == CMD_EXCHANGE && c->role == ROLE_PS_WORKER) {
			for (size_t s = 0; s < S; s++) {
				size_t o = part(c->floats, s, S), e = part(c->floats, s + 1, S);
				x[s] = (xfer){ fd[s], (char *)(buf + o), (e - o) * sizeof *buf, true };
			}
			ok = transfer(x, S, pf);
			for (size_t s = 0; s < S; s++) {
				size_t o = part(c->floats, s, S), e = part(c->floats, s + 1, S);
				x[s] = (xfer){ fd[s], (char *)(buf + o), (e - o) * sizeof *buf, false };
			}
			ok = ok && transfer(x, S, pf);
			wait_s(c->latency_s); /* the pull's last byte's flight */
		} else if (cmd == CMD_EXCHANGE && server) {
			for (size_t i = 0; i < N; i++)
				x[i] = (xfer){ fd[i], (char *)(tmp + i * mine), mine * sizeof *buf, false };
			ok = transfer(x, N, pf);
			wait_s(c->latency_s); /* the pushes' last bytes' flight */
			for (size_t j = 0; j < mine; j++) {
				float sum = 0;
				for (size_t i = 0; i < N; i++)
					sum += tmp[i * mine + j];
				buf[j] = sum;
			}
			for (size_t i = 0; ok && i < N; i++)
				x[i] = (xfer){ fd[i], (char *)buf, mine * sizeof *buf, true };
			ok = ok && transfer(x, N, pf);
		}
		answer a = { ok ? 0 : (errno ? errno : EIO), (int32_t)cmd };
		if (!lbs_write_all(out, &a, sizeof a) || !ok)
			break;
	}
	_exit(0);
}

/* A process in a network namespace of its own: the switch's holder (it
 * waits for the end of its input) or a node. Never returns. */
static void spawn_child(const node_cfg *c, int in, int out, pid_t parent)
{
	prctl(PR_SET_PDEATHSIG, SIGKILL);
	if (getppid() != parent)
		_exit(1);
	signal(SIGINT, SIG_DFL);
	signal(SIGTERM, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	if (unshare(CLONE_NEWNET) != 0)
		answer_and_exit(out, errno, -1);
	/* A connection idle between iterations keeps its window (the
	 * default restarts it in slow start after an idle RTO). */
	int f = open("/proc/sys/net/ipv4/tcp_slow_start_after_idle", O_WRONLY);
	if (f >= 0) {
		if (write(f, "0", 1) != 1) { /* best effort */
		}
		close(f);
	}
	answer a = { 0, 0 };
	if (!lbs_write_all(out, &a, sizeof a))
		_exit(1);
	if (c->role == ROLE_SWITCH) {
		char byte;
		while (read(in, &byte, 1) > 0)
			;
		_exit(0);
	}
	node_serve(c, in, out);
}

static void node_stop(lbs_tb_node *p)
{
	if (p->pid > 0) {
		kill(p->pid, SIGKILL);
		while (waitpid(p->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	if (p->to_fd >= 0)
		close(p->to_fd);
	if (p->from_fd >= 0)
		close(p->from_fd);
	*p = (lbs_tb_node){ 0, -1, -1 };
}

static lbs_status node_start(lbs_tb_node *p, const node_cfg *c, lbs_error *err)
{
	*p = (lbs_tb_node){ 0, -1, -1 };
	pid_t parent = getpid(), pid;
	int to, from;
	lbs_status st = lbs_proc_fork_piped(&pid, &to, &from, err);
	if (st != LBS_OK)
		return st;
	if (pid == 0)
		spawn_child(c, from, to, parent);
	*p = (lbs_tb_node){ pid, to, from };
	answer a = { 0, 0 };
	if (!lbs_read_all(p->from_fd, &a, sizeof a) || a.status != 0) {
		int e = a.status;
		node_stop(p);
		return lbs_error_set(err, LBS_ENOTESTBED, "cannot make a network namespace (unshare CLONE_NEWNET): "
				     "%s", e ? strerror(e) : "the process died");
	}
	return LBS_OK;
}

/* Runs `tool -batch -` (ip or tc) in the network namespace of process
 * ns_pid with `script` on its input; LBS_ENOTESTBED with what it said. */
static lbs_status in_netns(pid_t ns_pid, const char *tool, const char *script, lbs_error *err)
{
	int in[2], er[2];
	if (pipe(in) != 0)
		return lbs_error_set(err, LBS_EINTERNAL, "pipe: %s", strerror(errno));
	if (pipe(er) != 0) {
		close(in[0]);
		close(in[1]);
		return lbs_error_set(err, LBS_EINTERNAL, "pipe: %s", strerror(errno));
	}
	fflush(NULL);
	pid_t pid = fork();
	if (pid == 0) {
		char path[64];
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		int ns = open(lbs_fmt(path, sizeof path, "/proc/%ld/ns/net", (long)ns_pid), O_RDONLY);
		if (ns < 0 || setns(ns, CLONE_NEWNET) != 0) {
			dprintf(er[1], "setns %s: %s", path, strerror(errno));
			_exit(126);
		}
		dup2(in[0], 0);
		dup2(er[1], 1);
		dup2(er[1], 2);
		close(in[0]);
		close(in[1]);
		close(er[0]);
		close(er[1]);
		execlp(tool, tool, "-batch", "-", (char *)NULL);
		fprintf(stderr, "%s: %s", tool, strerror(errno));
		_exit(127);
	}
	close(in[0]);
	close(er[1]);
	if (pid < 0) {
		close(in[1]);
		close(er[0]);
		return lbs_error_set(err, LBS_EINTERNAL, "fork: %s", strerror(errno));
	}
	/* The tool may stop reading on an error: do not die of SIGPIPE. */
	struct sigaction ign = { .sa_handler = SIG_IGN }, old;
	sigemptyset(&ign.sa_mask);
	sigaction(SIGPIPE, &ign, &old);
	bool wrote = lbs_write_all(in[1], script, strlen(script));
	close(in[1]);
	sigaction(SIGPIPE, &old, NULL);
	/* Read to the end (the first 511 bytes kept): a tool whose output
	 * is not read dies of SIGPIPE. */
	char said[512] = "", rest[512];
	size_t at = 0;
	ssize_t k;
	while ((k = read(er[0], at < sizeof said - 1 ? said + at : rest,
			 at < sizeof said - 1 ? sizeof said - 1 - at : sizeof rest)) > 0 || (k < 0 && errno == EINTR))
		if (k > 0 && at < sizeof said - 1)
			at += (size_t)k;
	said[at] = '\0';
	close(er[0]);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	if (!wrote || !WIFEXITED(status) || WEXITSTATUS(status) != 0) {
		for (char *p = said; *p; p++)
			if (*p == '\n')
				*p = ' ';
		return lbs_error_set(err, LBS_ENOTESTBED, "`%s -batch -` in the testbed's network namespace "
				     "failed (status %d): %s", tool, WIFEXITED(status) ? WEXITSTATUS(status) : -1,
				     said[0] ? said : "no message");
	}
	return LBS_OK;
}

/* Is `tool` an executable on PATH? */
static bool on_path(const char *tool)
{
	const char *path = getenv("PATH");
	char dir[4096];
	while (path && *path) {
		size_t n = strcspn(path, ":");
		if (n > 0 && n < sizeof dir - 64) {
			memcpy(dir, path, n);
			lbs_fmt(dir + n, sizeof dir - n, "/%s", tool);
			if (access(dir, X_OK) == 0)
				return true;
		}
		path += n + (path[n] == ':');
	}
	return false;
}

static lbs_status need_tools(lbs_error *err)
{
	const char *tools[] = { "ip", "tc" };
	for (size_t i = 0; i < 2; i++)
		if (!on_path(tools[i]))
			return lbs_error_set(err, LBS_ENOTESTBED, "a network on the testbed needs `%s` (iproute2) to "
					     "build its tc-shaped links, and it is not on PATH (%s)", tools[i],
					     getenv("PATH") ? getenv("PATH") : "unset");
	return LBS_OK;
}

lbs_status lbs_tb_exchange_probe(lbs_error *err)
{
	lbs_status st = need_tools(err);
	if (st != LBS_OK)
		return st;
	lbs_tb_node sw;
	node_cfg c = { .role = ROLE_SWITCH };
	if ((st = node_start(&sw, &c, err)) != LBS_OK)
		return st;
	st = in_netns(sw.pid, "ip", "link add lbsbr type bridge\nlink add lbsp type veth peer name lbse\n"
		      "link set lbsp gso_max_segs 1\nlink set lbsp master lbsbr\n", err);
	if (st == LBS_OK)
		st = in_netns(sw.pid, "tc", "qdisc add dev lbsp root handle 1: htb default 1\n"
			      "class add dev lbsp parent 1: classid 1:1 htb rate 1mbit\n"
			      "filter add dev lbsp parent 1: protocol ip prio 1 u32 match u16 0x0000 0xff00 at 2 "
			      "flowid 1:1\n", err);
	node_stop(&sw);
	if (st != LBS_OK)
		lbs_error_prefix(err, "a network on the testbed needs a network namespace with a bridge, a veth "
				 "pair, an htb qdisc and a u32 filter");
	return st;
}

/* Appends printf-style text to the script s (of cap bytes). */
static bool add(char **s, size_t *len, size_t *cap, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static bool add(char **s, size_t *len, size_t *cap, const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int k = vsnprintf(*s + *len, *cap - *len, fmt, ap);
		va_end(ap);
		if (k < 0)
			return false;
		if ((size_t)k < *cap - *len) {
			*len += (size_t)k;
			return true;
		}
		char *more = realloc(*s, 2 * *cap + (size_t)k);
		if (!more)
			return false;
		*s = more;
		*cap = 2 * *cap + (size_t)k;
	}
}

/* tc's commands shaping device <side>k to `bit` bits of payload a second. */
static bool shape(char **s, size_t *len, size_t *cap, char side, size_t k, double bit)
{
	return add(s, len, cap, "qdisc add dev %c%zu root handle 1: htb default 1\n"
		   "class add dev %c%zu parent 1: classid 1:1 htb rate %.0fbit burst %d cburst %d quantum %d\n"
		   "class add dev %c%zu parent 1: classid 1:2 htb rate 10gbit quantum %d\n"
		   "filter add dev %c%zu parent 1: protocol ip prio 1 u32 match u16 0x0000 0xff00 at 2 flowid 1:2\n",
		   side, k, side, k, bit * FRAME_BYTES / PAYLOAD_BYTES, BURST_BYTES, BURST_BYTES, BURST_BYTES, side,
		   k, BURST_BYTES, side, k);
}

/* The rate of node k's NIC, bytes per second. */
static double nic_Bps(const lbs_tb_exchange *x, size_t k)
{
	if (x->net->ops == &lbs_network_ps && k < x->workers)
		return x->net->worker_bandwidth_Bps > 0 ? x->net->worker_bandwidth_Bps : x->net->bandwidth_Bps;
	return x->net->bandwidth_Bps;
}

static lbs_status command_all(lbs_tb_exchange *x, int64_t cmd, const volatile sig_atomic_t *interrupt,
			      lbs_error *err)
{
	for (size_t k = 0; k < x->n; k++)
		if (!lbs_write_all(x->nodes[k].to_fd, &cmd, sizeof cmd))
			return lbs_error_set(err, LBS_EINTERNAL, "network node %zu died", k);
	struct pollfd *pf = x->pf;
	for (size_t k = 0; k < x->n; k++)
		pf[k] = (struct pollfd){ .fd = x->nodes[k].from_fd, .events = POLLIN };
	lbs_status st = LBS_OK;
	for (size_t left = x->n; left > 0 && st == LBS_OK;) {
		if (interrupt && *interrupt)
			return lbs_error_set(err, LBS_EINTR, "interrupted during the gradient exchange");
		int m = poll(pf, (nfds_t)x->n, 50);
		if (m < 0 && errno != EINTR)
			return lbs_error_set(err, LBS_EINTERNAL, "poll: %s", strerror(errno));
		for (size_t k = 0; m > 0 && k < x->n && st == LBS_OK; k++) {
			if (pf[k].fd < 0 || !(pf[k].revents & (POLLIN | POLLHUP | POLLERR)))
				continue;
			answer a = { 0, 0 };
			if (!lbs_read_all(pf[k].fd, &a, sizeof a))
				st = lbs_error_set(err, LBS_EINTERNAL, "network node %zu died", k);
			else if (a.status)
				st = lbs_error_set(err, LBS_EINTERNAL, "network node %zu (%s %zu): step %d failed: %s",
						   k, k < x->workers ? "worker" : "server",
						   k < x->workers ? k : k - x->workers, a.step, strerror(a.status));
			pf[k].fd = -1;
			left--;
		}
	}
	return st;
}

lbs_status lbs_tb_exchange_start(lbs_tb_exchange *x, const lbs_network *net, size_t n_workers, double bytes,
				 lbs_error *err)
{
	bool ps = net->ops == &lbs_network_ps;
	*x = (lbs_tb_exchange){ .net = net, .workers = n_workers, .bytes = bytes,
				.n = n_workers + (ps ? (size_t)net->servers : 0), .sw = { 0, -1, -1 } };
	if (!(bytes <= LBS_TB_EXCHANGE_MAX_BYTES))
		return lbs_error_set(err, LBS_EINPUT, "a gradient of %.0f bytes: the testbed exchanges at most "
				     "%.0f MiB (give [model] gradient scaled down, doc/validation.md)", bytes,
				     LBS_TB_EXCHANGE_MAX_BYTES / 1048576);
	lbs_status st = need_tools(err);
	if (st != LBS_OK)
		return st;
	if (!(x->nodes = lbs_calloc(x->n, sizeof *x->nodes, err)) || !(x->pf = lbs_calloc(x->n, sizeof *x->pf, err))) {
		free(x->nodes);
		x->nodes = NULL;
		return LBS_EINTERNAL;
	}
	for (size_t k = 0; k < x->n; k++)
		x->nodes[k] = (lbs_tb_node){ 0, -1, -1 };
	node_cfg sw = { .role = ROLE_SWITCH };
	st = node_start(&x->sw, &sw, err);
	for (size_t k = 0; k < x->n && st == LBS_OK; k++) {
		node_cfg c = { .role = !ps ? ROLE_RING : k < n_workers ? ROLE_PS_WORKER : ROLE_PS_SERVER,
			       .k = k, .workers = n_workers, .servers = ps ? (size_t)net->servers : 0,
			       .floats = (size_t)(bytes / sizeof(float)), .latency_s = net->latency_s };
		st = node_start(&x->nodes[k], &c, err);
	}
	/* The switch: a bridge, and a veth pair to each node, the node's end
	 * moved into its namespace; both ends shaped to the node's NIC rate. */
	size_t len = 0, cap = 4096, tlen = 0, tcap = 4096;
	char *ip = malloc(cap), *tc = malloc(tcap);
	if (!ip || !tc)
		st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	bool ok = st == LBS_OK && add(&ip, &len, &cap, "link set lo up\nlink add br0 type bridge\nlink set br0 up\n");
	for (size_t k = 0; ok && k < x->n; k++) {
		double bit = 8 * nic_Bps(x, k);
		ok = add(&ip, &len, &cap, "link add p%zu type veth peer name e%zu\nlink set e%zu netns %ld\n"
			 "link set p%zu gso_max_segs 1\nlink set p%zu master br0\nlink set p%zu up\n", k, k, k,
			 (long)x->nodes[k].pid, k, k, k) &&
		     shape(&tc, &tlen, &tcap, 'p', k, bit);
	}
	if (st == LBS_OK && !ok)
		st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
	if (st == LBS_OK && (st = in_netns(x->sw.pid, "ip", ip, err)) == LBS_OK)
		st = in_netns(x->sw.pid, "tc", tc, err);
	for (size_t k = 0; k < x->n && st == LBS_OK; k++) {
		char a[32];
		address_text(k, a, sizeof a);
		len = tlen = 0;
		if (!add(&ip, &len, &cap, "link set lo up\nlink set e%zu gso_max_segs 1\naddr add %s/16 dev e%zu\n"
			 "link set e%zu up\n", k, a, k, k) ||
		    !shape(&tc, &tlen, &tcap, 'e', k, 8 * nic_Bps(x, k)))
			st = lbs_error_set(err, LBS_EINTERNAL, "out of memory");
		else if ((st = in_netns(x->nodes[k].pid, "ip", ip, err)) == LBS_OK)
			st = in_netns(x->nodes[k].pid, "tc", tc, err);
	}
	free(ip);
	free(tc);
	if (st == LBS_OK && (st = command_all(x, CMD_LISTEN, NULL, err)) == LBS_OK)
		st = command_all(x, CMD_CONNECT, NULL, err);
	/* One untimed exchange, as the workers warm up: every connection's
	 * window has grown and every buffer is touched before the first
	 * timed one. */
	if (st == LBS_OK)
		st = command_all(x, CMD_EXCHANGE, NULL, err);
	if (st != LBS_OK) {
		lbs_error_prefix(err, "building the testbed's network (%s)", net->ops->name);
		lbs_tb_exchange_stop(x);
	}
	return st;
}

lbs_status lbs_tb_exchange_run(lbs_tb_exchange *x, const volatile sig_atomic_t *interrupt, lbs_error *err)
{
	return command_all(x, CMD_EXCHANGE, interrupt, err);
}

void lbs_tb_exchange_stop(lbs_tb_exchange *x)
{
	for (size_t k = 0; x->nodes && k < x->n; k++)
		node_stop(&x->nodes[k]);
	if (x->sw.pid > 0 || x->sw.to_fd >= 0)
		node_stop(&x->sw);
	free(x->nodes);
	free(x->pf);
	x->nodes = NULL;
	x->pf = NULL;
	x->n = 0;
}
