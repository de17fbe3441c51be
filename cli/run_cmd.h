/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The commands that run scenarios (cli/run_cmd.c). Like every command,
 * each takes its arguments with the command's name as argv[0] and returns
 * the exit status; only commands print to the user. */
#ifndef LBS_RUN_CMD_H
#define LBS_RUN_CMD_H

/* `lbsim [run] SCENARIO.ini [options]`: runs the scenario's policies, records
 * them, prints the summary (lbsim(1)). */
int lbs_run_command(int argc, char **argv);

/* `lbsim keys`: the Markdown reference of every scenario key. */
int lbs_keys_command(int argc, char **argv);

#endif
