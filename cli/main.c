/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lbsim: the command line. main only finds the command named by the first
 * argument and hands it the rest; each command parses its own options,
 * prints to the user and picks the exit code (lbsim(1)). Everything below
 * the commands returns an lbs_status with a message. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

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
#include "util/suggest.h"

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

#define N_COMMANDS (sizeof commands / sizeof commands[0])

/* `lbsim help [COMMAND]`: the command's --help, or the list of commands. */
static int help(int argc, char **argv)
{
	if (argc >= 2) {
		for (size_t i = 0; i < N_COMMANDS; i++)
			if (!strcmp(argv[1], commands[i].name)) {
				char *args[] = { argv[1], "--help", NULL };
				return commands[i].run(2, args);
			}
		fprintf(stderr, "lbsim help: %s is not a command\n", argv[1]);
	}
	FILE *out = argc >= 2 ? stderr : stdout;
	fprintf(out, "Usage: lbsim [run] SCENARIO.ini [options]   (lbsim --help for the options)\n"
		     "       lbsim COMMAND [options]               (lbsim help COMMAND for its own)\n\n"
		     "Commands:");
	for (size_t i = 0; i < N_COMMANDS; i++)
		fprintf(out, " %s", commands[i].name);
	fprintf(out, " help\n\nThe manual: man lbsim (doc/lbsim.1 in the source tree).\n");
	return argc >= 2 ? 2 : 0;
}

int main(int argc, char **argv)
{
	gsl_set_error_handler_off(); /* GSL reports through return codes, never aborts */
	/* Messages, the option parser's included, name the program "lbsim" (or "lbsim
	 * COMMAND"), not the path it was started by. */
	static char self[] = "lbsim", named[64];
	argv[0] = self;
	if (argc >= 2) {
		if (!strcmp(argv[1], "help"))
			return help(argc - 1, argv + 1);
		for (size_t i = 0; i < N_COMMANDS; i++)
			if (strcmp(argv[1], commands[i].name) == 0) {
				/* The command sees itself as argv[0]; `run` keeps
				 * the program's name, as `lbsim SCENARIO.ini` does. */
				if (commands[i].run == lbs_run_command)
					argv[1] = argv[0];
				else
					argv[1] = lbs_fmt(named, sizeof named, "lbsim %s", commands[i].name);
				return commands[i].run(argc - 1, argv + 1);
			}
		/* A word that is no file, and near a command's name: a slip. */
		const char *word = argv[1];
		if (word[0] != '-' && !strchr(word, '/') && !strchr(word, '.') && access(word, F_OK) != 0) {
			const char *names[N_COMMANDS + 1];
			for (size_t i = 0; i < N_COMMANDS; i++)
				names[i] = commands[i].name;
			names[N_COMMANDS] = "help";
			const char *best = lbs_suggest(word, names, N_COMMANDS + 1);
			if (best) {
				fprintf(stderr, "lbsim: %s is not a command: did you mean %s? (lbsim help lists them)\n",
					word, best);
				return 2;
			}
		}
	}
	/* No command named: `lbsim SCENARIO.ini [options]` is a run. */
	return lbs_run_command(argc, argv);
}
