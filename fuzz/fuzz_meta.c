/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Fuzzes the job metadata reader of lbsim whatif (META.yaml,
 * traces/read_ops.c): metadata that reads must keep its documented
 * invariants (sizes from 1 to 2^24, world_size their exact product), and is
 * checked against a small trace as the command does. */
#include <stdlib.h>
#include <string.h>

#include "fuzz/harness.h"
#include "traces/read_ops.h"

static const char trace[] =
	"dp_rank,stage,rank,step,optype,start_ts,duration,seq_id,mc,mb_id,gmc\n"
	"0,0,0,1,forward-compute,0,1,0,0,0,0\n"
	"1,1,3,1,backward-compute,1,2,0,0,0,1\n"
	"0,0,0,1,optimizer,3,0.5,0,-1,-1,-1\n";

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static lbs_ops_trace t;
	static bool have;
	lbs_error err = { 0 };
	if (!have) {
		const char *tp = lbs_fuzz_file("trace.csv", (const uint8_t *)trace, strlen(trace));
		if (lbs_ops_read(tp, &t, &err) != LBS_OK)
			abort();
		have = true;
	}
	const char *path = lbs_fuzz_file("meta.yaml", data, size);
	lbs_ops_meta m;
	if (lbs_ops_meta_read(path, &m, &err) != LBS_OK)
		return 0;
	const int64_t s[] = { m.dp_size, m.dsp_size, m.pp_size, m.tp_size, m.vpp_size };
	unsigned __int128 product = 1;
	for (size_t i = 0; i < 5; i++) {
		if (s[i] < 1 || s[i] > (1 << 24))
			abort();
		if (i < 4)
			product *= (uint64_t)s[i];
	}
	if (product != (unsigned __int128)m.world_size || !m.trial_name[0])
		abort();
	lbs_ops_check_meta(&t, &m, &err);
	return 0;
}
