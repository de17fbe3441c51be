/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lbsim testbed (a scenario run for real) and lbsim validate (the same
 * scenario and seed simulated and measured, compared): doc/validation.md. */
#ifndef LBS_TESTBED_CMD_H
#define LBS_TESTBED_CMD_H

int lbs_testbed_command(int argc, char **argv);
int lbs_validate_command(int argc, char **argv);

#endif
