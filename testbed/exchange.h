/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The testbed's gradient exchange (doc/validation.md, "The network"): the
 * scenario's ring all-reduce or parameter server, run for real over TCP
 * between processes in network namespaces joined by tc-shaped links.
 *
 * Every endpoint is a process of its own (a node): one per worker, and for
 * `ps` one per server shard. Each node unshares a network namespace of its
 * own at start, and one more process holds a "switch" namespace with a
 * bridge; every node's namespace is joined to the bridge by a veth pair, so
 * that each node has one NIC (its end of the pair, 10.77.0.K/16). A NIC's
 * rate is shaped in both directions with an htb class (`tc`): on the
 * node's end for what it sends, on the bridge's end for what it receives.
 * Ring nodes and parameter servers get [network] bandwidth, a parameter
 * server's workers worker_bandwidth: the links of the simulation's model
 * (models/network.h). The latency is each message's, held by the node
 * receiving it: a message counts as arrived `latency` after its last byte
 * (netem is not in every kernel; doc/validation.md).
 *
 * The nodes hold a buffer of the gradient's size (M bytes of floats). At
 * each exchange a ring node runs the 2(N-1) steps of a ring all-reduce
 * (reduce-scatter, then all-gather, one chunk of M/N bytes to its right
 * neighbour per step, adding what it receives during the reduce-scatter);
 * a parameter server's worker pushes its M/S bytes to each server and
 * pulls the sum back, each server summing the N pushes before it answers.
 * Connections are made once, before the first iteration.
 *
 * Cleanup: every process dies with the coordinator (PR_SET_PDEATHSIG), and
 * the namespaces, veths and qdiscs exist only while a process is in them,
 * so the kernel removes everything even when the coordinator is killed
 * with SIGKILL; nothing is named in the machine's own namespace. */
#ifndef LBS_TB_EXCHANGE_H
#define LBS_TB_EXCHANGE_H

#include <poll.h>
#include <signal.h>
#include <stddef.h>
#include <sys/types.h>

#include "models/network.h"
#include "util/error.h"

typedef struct lbs_tb_node {
	pid_t pid;   /* 0: not running */
	int to_fd;   /* commands */
	int from_fd; /* answers */
} lbs_tb_node;

typedef struct lbs_tb_exchange {
	const lbs_network *net;
	size_t workers, n;  /* nodes: workers, then servers */
	double bytes;       /* gradient bytes per worker */
	lbs_tb_node sw;     /* the switch's namespace holder */
	lbs_tb_node *nodes;
	struct pollfd *pf;  /* one per node */
} lbs_tb_exchange;

/* The largest gradient the testbed exchanges (each node holds it). */
#define LBS_TB_EXCHANGE_MAX_BYTES (256.0 * 1024 * 1024)

/* Checks that this machine can build the links: `ip` and `tc` (iproute2)
 * on PATH, a network namespace, a veth pair, a bridge, an htb qdisc and a
 * u32 filter in it (all made in a scratch namespace and gone at return);
 * LBS_ENOTESTBED saying exactly which is missing. */
lbs_status lbs_tb_exchange_probe(lbs_error *err);

/* Starts the nodes of `net` for n_workers workers exchanging `bytes` each,
 * builds and shapes the links and connects the nodes. */
lbs_status lbs_tb_exchange_start(lbs_tb_exchange *x, const lbs_network *net, size_t n_workers, double bytes,
				 lbs_error *err);

/* One exchange, every node at once; returns when all are done
 * (LBS_EINTR when *interrupt becomes non-zero). */
lbs_status lbs_tb_exchange_run(lbs_tb_exchange *x, const volatile sig_atomic_t *interrupt, lbs_error *err);

/* Kills every node and the switch's holder (their namespaces go with them). */
void lbs_tb_exchange_stop(lbs_tb_exchange *x);

#endif
