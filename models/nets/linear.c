/* SPDX-License-Identifier: GPL-3.0-or-later */
/* A linear model on a wide sparse input: logistic regression or a linear
 * SVM (one output and a bias) on the malicious-URL data set of the LB-BSP
 * CPU experiments (Ma, Saul, Savage and Voelker, "Identifying Suspicious
 * URLs: An Application of Large-Scale Online Learning", ICML 2009; UCI "URL
 * Reputation": 2,396,130 URLs, 3,231,961 lexical and host-based features).
 * The nonzeros per sample, 128, are an assumption of ours: our sources do
 * not state the data set's mean. */
#include "models/nets/nets_impl.h"

void lbs_build_linear_url(lbs_net_builder *b)
{
	lbs_nb_sparse(b, "linear", 3231961, 128, 1, true);
}

/* The student of the testbed's teacher-student task (testbed/
 * teacher_student.py, doc/validation.md, "Real convergence"): 512 inputs,
 * a tanh hidden layer of 1024, 8 outputs; 512 x 1024 + 1024 + 1024 x 8 + 8
 * = 533,512 parameters. */
void lbs_build_teacher_student(lbs_net_builder *b)
{
	lbs_nb_fc(b, "hidden", 1024, true);
	lbs_nb_act(b, "tanh", b->at, true);
	lbs_nb_fc(b, "out", 8, true);
}
