/* SPDX-License-Identifier: GPL-3.0-or-later */
/* The BLAS module, lbsim-blas.so (models/calib/blas_module.c): the only
 * part of lbsim linked against the optimised CBLAS that configure found
 * (OpenBLAS). The program loads it (dlopen, models/calib/blas.c) only when
 * it runs real matrix products (`lbsim calibrate --blas`, the testbed's
 * workers), so no other command starts the library's thread pool when it
 * loads, and the simulation's own linear algebra (GSL, on GSL's reference
 * CBLAS) depends neither on the library's per-CPU kernels nor on its
 * thread count. The program takes cblas_sgemm and OpenBLAS's extensions
 * from the module's handle: dlsym there searches the module's own
 * dependencies, where the program's global scope would give GSL's. */
#ifndef LBS_BLAS_MODULE_H
#define LBS_BLAS_MODULE_H

#define LBS_BLAS_MODULE_ABI 1

/* The module's marker: returns LBS_BLAS_MODULE_ABI. */
typedef int (*lbs_blas_module_abi_fn)(void);
#define LBS_BLAS_MODULE_SYMBOL "lbs_blas_module_abi"

#endif
