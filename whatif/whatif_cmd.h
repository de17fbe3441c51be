/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lbsim whatif (doc/whatif.md). */
#ifndef LBS_WHATIF_CMD_H
#define LBS_WHATIF_CMD_H

int lbs_whatif_command(int argc, char **argv);

#endif
