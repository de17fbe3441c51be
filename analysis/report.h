/* SPDX-License-Identifier: GPL-3.0-or-later */
/* `lbsim report`: a results database as one self-contained HTML file. */
#ifndef LBS_REPORT_H
#define LBS_REPORT_H

/* The `lbsim report RESULTS.db [-o FILE]` command; returns the exit status. */
int lbs_report_command(int argc, char **argv);

#endif
