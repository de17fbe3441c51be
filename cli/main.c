/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lbsim: the command line. main only finds the command named by the first
 * argument and hands it the rest; each command parses its own options,
 * prints to the user and picks the exit code (lbsim(1)). Everything below
 * the commands returns an lbs_status with a message. */
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "analysis/export.h"
#include "analysis/merge.h"
#include "analysis/plot.h"
#include "analysis/predict_cmd.h"
#include "analysis/report.h"
#include "analysis/views.h"
#include "cli/run_cmd.h"
#include "cli/scenarios_cmd.h"
#include "models/calib.h"
#include "models/calib/calibrate_cmd.h"
#include "sweep/sweep.h"
#include "whatif/whatif_cmd.h"
#include "testbed/testbed_cmd.h"
#include "testbed/torch.h"

/* Adding a command = a function int NAME(int argc, char **argv) beside the
 * domain it drives, and one line here. */
/* calibrate, with the testbed's torch worker for --torch (models/ does not
 * know the testbed). */
static int calibrate(int argc, char **argv)
{
	return lbs_calibrate_command_with(argc, argv, &lbs_tb_torch_framework);
}

static const struct {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "run", lbs_run_command },         /* cli/run_cmd.c */
	{ "keys", lbs_keys_command },       /* cli/run_cmd.c */
	{ "scenarios", lbs_scenarios_command }, /* cli/scenarios_cmd.c */
	{ "sweep", lbs_sweep_command },     /* sweep/exec.c */
	{ "merge", lbs_merge_command },     /* analysis/merge.c */
	{ "plot", lbs_plot_command },       /* analysis/plot.c */
	{ "export", lbs_export_command },   /* analysis/export.c */
	{ "views", lbs_views_command },     /* analysis/views.c */
	{ "report", lbs_report_command },   /* analysis/report.c */
	{ "predict", lbs_predict_command }, /* analysis/predict_cmd.c */
	{ "calibrate", calibrate }, /* models/calib/calibrate_cmd.c */
	{ "whatif", lbs_whatif_command },   /* whatif/whatif_cmd.c */
	{ "testbed", lbs_testbed_command },   /* testbed/testbed_cmd.c */
	{ "validate", lbs_validate_command }, /* testbed/testbed_cmd.c */
};

int main(int argc, char **argv)
{
	gsl_set_error_handler_off(); /* GSL reports through return codes, never aborts */
	if (argc >= 2)
		for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++)
			if (strcmp(argv[1], commands[i].name) == 0) {
				/* The command sees itself as argv[0]; `run` keeps
				 * the program's name, as `lbsim SCENARIO.ini` does. */
				if (commands[i].run == lbs_run_command)
					argv[1] = argv[0];
				return commands[i].run(argc - 1, argv + 1);
			}
	/* No command named: `lbsim SCENARIO.ini [options]` is a run. */
	return lbs_run_command(argc, argv);
}
