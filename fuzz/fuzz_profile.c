/* SPDX-License-Identifier: GPL-3.0-or-later */
/* Fuzzes the cost-profile reader (models/profile.c). The input is the
 * profile. One that loads must also survive the two other paths a profile
 * takes: written back by lbs_profile_write (what lbsim calibrate does), it
 * must read back (a profile lbsim writes and then refuses is a bug: the
 * harness aborts); and named by `profile = profile.ini` in a small scenario
 * of its device class, it goes through the scenario's checks and is built
 * into a run (not executed). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "fuzz/harness.h"
#include "models/profile.h"
#include "sim/run.h"
#include "sim/scenario.h"

#define SCENARIO(device)                                                                          \
	"[run]\nglobal_batch = 64\niterations = 10\n[model]\nparameters = 1000\n"                 \
	"[network]\ntopology = ring\nbandwidth = 10 Gbit/s\nlatency = 5 us\n"                     \
	"[workers.a]\ncount = 2\ndevice = " device "\nprofile = profile.ini\n"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char cpu[1024], gpu[1024], written[1024];
	gsl_set_error_handler_off();
	if (!cpu[0]) {
		static const char c[] = SCENARIO("cpu"), g[] = SCENARIO("gpu");
		snprintf(cpu, sizeof cpu, "%s", lbs_fuzz_file("cpu.ini", (const uint8_t *)c, strlen(c)));
		snprintf(gpu, sizeof gpu, "%s", lbs_fuzz_file("gpu.ini", (const uint8_t *)g, strlen(g)));
		snprintf(written, sizeof written, "%s/written.ini", lbs_fuzz_dir());
	}
	const char *path = lbs_fuzz_file("profile.ini", data, size);
	lbs_error err = { 0 };
	lbs_profile p;
	if (lbs_profile_load(&p, path, &err) != LBS_OK)
		return 0;

	FILE *f = fopen(written, "w");
	if (!f) {
		perror(written);
		abort();
	}
	lbs_error werr = { 0 };
	lbs_status wst = lbs_profile_write(&p, f, &werr);
	if (fclose(f) != 0) {
		perror(written);
		abort();
	}
	if (wst == LBS_OK) { /* LBS_EINTERNAL: a value too long for a line, refused */
		lbs_profile q;
		lbs_error rerr = { 0 };
		if (lbs_profile_load(&q, written, &rerr) != LBS_OK) {
			fprintf(stderr, "fuzz_profile: a profile written by lbs_profile_write does not read "
					"back: %s\n", rerr.msg);
			abort();
		}
		lbs_profile_destroy(&q);
	}

	lbs_scenario sc;
	if (lbs_scenario_load(&sc, p.device_class ? gpu : cpu, NULL, 0, &err) == LBS_OK) {
		lbs_run run;
		if (lbs_run_create(&run, &sc, sc.policy.name, &err) == LBS_OK)
			lbs_run_destroy(&run);
		lbs_scenario_destroy(&sc);
	}
	lbs_profile_destroy(&p);
	return 0;
}
