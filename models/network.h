/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Gradient aggregation cost. A network model splits the time to aggregate
 * M gradient bytes among N workers into a fixed latency part and a transfer
 * part at nominal bandwidth, so a bandwidth trace can stretch the transfer
 * (rate = bandwidth factor / transfer time) without touching the latency. */
#ifndef LBS_NETWORK_H
#define LBS_NETWORK_H

#include <stdint.h>

struct lbs_network;

typedef struct lbs_net_time {
	double latency_s;  /* independent of bandwidth */
	double transfer_s; /* at nominal bandwidth */
} lbs_net_time;

typedef struct lbs_network_ops {
	const char *name;
	const char *summary;
	lbs_net_time (*time)(const struct lbs_network *net, int64_t n_workers, double bytes);
} lbs_network_ops;

typedef struct lbs_network {
	const lbs_network_ops *ops;
	int kind;                    /* index in lbs_network_kinds[] */
	double bandwidth_Bps;        /* ring: each link; ps: each server's NIC */
	double worker_bandwidth_Bps; /* ps: each worker's NIC */
	double latency_s;            /* ring: per step (alpha); ps: per message */
	int64_t servers;             /* ps: parameter-server shards */
	int exchange_on_workers;     /* 1: the exchange is also work on each worker's own CPU, under
					its availability (sim/run.c; doc/model.md); 0: it is not */
} lbs_network;

/* No aggregation cost (a single machine, or to isolate compute). */
extern const lbs_network_ops lbs_network_none;
/* Ring all-reduce, alpha-beta model (Thakur et al., IJHPCA 2005; Patarasuk &
 * Yuan, JPDC 2009): 2(N-1)/N * M/BW + 2(N-1)*alpha. */
extern const lbs_network_ops lbs_network_ring;
/* Parameter server with S shards: every worker pushes M bytes then pulls M
 * bytes; the bottleneck is either a server NIC (N*M/S bytes) or a worker NIC
 * (M bytes): 2*max(N*M/(S*BW_server), M/BW_worker) + 2*alpha. */
extern const lbs_network_ops lbs_network_ps;

extern const lbs_network_ops *const lbs_network_kinds[];
#define LBS_NETWORK_CHOICES "none|ring|ps"

static inline lbs_net_time lbs_network_time(const lbs_network *net, int64_t n, double bytes)
{
	return net->ops->time(net, n, bytes);
}

#endif
