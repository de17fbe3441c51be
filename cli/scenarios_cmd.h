/* SPDX-License-Identifier: GPL-3.0-or-later */
/* `lbsim scenarios` (cli/scenarios_cmd.c). */
#ifndef LBS_SCENARIOS_CMD_H
#define LBS_SCENARIOS_CMD_H

/* `lbsim scenarios`: lists the scenarios and sweeps found under scenarios/
 * of each folder of LBSIM_PATH and of the installed data folder, by the
 * name `lbsim run NAME` and `lbsim sweep NAME` take (lbsim(1)). */
int lbs_scenarios_command(int argc, char **argv);

#endif
