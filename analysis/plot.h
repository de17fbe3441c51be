/* SPDX-License-Identifier: GPL-3.0-or-later */
/* `lbsim plot RESULTS.db [--out DIR]`: the plots of analysis/ rendered with
 * gnuplot, run as an external program. */
#ifndef LBS_PLOT_H
#define LBS_PLOT_H

/* The `lbsim plot` command; returns the exit status. */
int lbs_plot_command(int argc, char **argv);

#endif
