/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lbsim calibrate: model descriptions, microbenchmarks and fits that
 * produce cost profiles (doc/profiles.md). */
#ifndef LBS_CALIBRATE_CMD_H
#define LBS_CALIBRATE_CMD_H

int lbs_calibrate_command(int argc, char **argv);

#endif
