/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lbsim whatif (doc/whatif.md). */
#ifndef LBS_WHATIF_CMD_H
#define LBS_WHATIF_CMD_H

/* The whatif_* tables, created if absent in a results database. */
extern const char lbs_whatif_schema_sql[];

int lbs_whatif_command(int argc, char **argv);

#endif
