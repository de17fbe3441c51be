/* SPDX-License-Identifier: GPL-3.0-or-later */
/* lbsim-blas.so: a marker and a link to the optimised CBLAS
 * (models/calib/blas_module.h). */
#include <cblas.h>

#include "models/calib/blas_module.h"

int lbs_blas_module_abi(void);
void *lbs_blas_module_link(void);

int lbs_blas_module_abi(void)
{
	return LBS_BLAS_MODULE_ABI;
}

/* A reference to the library, so that the link keeps it as the module's
 * dependency whatever the linker's --as-needed default. */
void *lbs_blas_module_link(void)
{
	return (void *)cblas_sgemm;
}
