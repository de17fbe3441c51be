/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lbsim calibrate: model descriptions, microbenchmarks and fits that
 * produce cost profiles (doc/profiles.md). */
#ifndef LBS_CALIBRATE_CMD_H
#define LBS_CALIBRATE_CMD_H

int lbs_calibrate_command(int argc, char **argv);
/* The same, with `torch` the framework --torch runs (NULL: --torch says it
 * is not available to this caller). */
struct lbs_calib_framework;
int lbs_calibrate_command_with(int argc, char **argv, const struct lbs_calib_framework *torch);

#endif
