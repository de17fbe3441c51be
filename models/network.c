/* SPDX-License-Identifier: GPL-3.0-or-later */
#include <stddef.h>

#include "models/network.h"

static lbs_net_time none_time(const lbs_network *net, int64_t n, double bytes)
{
	(void)net, (void)n, (void)bytes;
	return (lbs_net_time){ 0, 0 };
}

static lbs_net_time ring_time(const lbs_network *net, int64_t n, double bytes)
{
	if (n < 2)
		return (lbs_net_time){ 0, 0 };
	double steps = 2.0 * (double)(n - 1);
	return (lbs_net_time){ steps * net->latency_s,
			       steps / (double)n * bytes / net->bandwidth_Bps };
}

static lbs_net_time ps_time(const lbs_network *net, int64_t n, double bytes)
{
	double server = (double)n * bytes / ((double)net->servers * net->bandwidth_Bps);
	double worker = bytes / net->worker_bandwidth_Bps;
	return (lbs_net_time){ 2.0 * net->latency_s, 2.0 * (server > worker ? server : worker) };
}

const lbs_network_ops lbs_network_none = { "none", "no aggregation cost", none_time };
const lbs_network_ops lbs_network_ring = {
	"ring", "ring all-reduce: 2(N-1)/N * M/BW + 2(N-1)*latency", ring_time
};
const lbs_network_ops lbs_network_ps = {
	"ps", "parameter server: 2*max(N*M/(S*BW), M/BW_worker) + 2*latency", ps_time
};

const lbs_network_ops *const lbs_network_kinds[] = { &lbs_network_none, &lbs_network_ring,
						     &lbs_network_ps, NULL };
