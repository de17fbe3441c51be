/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The network builders, for the registry (models/nets/registry.c). */
#ifndef LBS_NETS_IMPL_H
#define LBS_NETS_IMPL_H

#include "models/nets.h"

void lbs_build_cifarnet(lbs_net_builder *b);
void lbs_build_resnet32(lbs_net_builder *b);
void lbs_build_resnet50(lbs_net_builder *b);
void lbs_build_resnet101(lbs_net_builder *b);
void lbs_build_inception3(lbs_net_builder *b);
void lbs_build_densenet121(lbs_net_builder *b);
void lbs_build_linear_url(lbs_net_builder *b);

#endif
