/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lbsim predict: replays speed series one step ahead through each
 * predictor and reports RMSE, MAE and MAPE. */
#ifndef LBS_PREDICT_CMD_H
#define LBS_PREDICT_CMD_H

int lbs_predict_command(int argc, char **argv);

#endif
