/* gpus_builtin.h - gpus_builtin.c's table, for clusters.c (internal header: runtime/ and its
 * tests).  rt_gpu_builtin() (llmp_fit.h) looks the same entries up by name. */
#ifndef LLMP_RT_GPUS_BUILTIN_H
#define LLMP_RT_GPUS_BUILTIN_H

#include "llmp_rt.h"

enum { RT_GPU_A100_SXM4_80GB, RT_GPU_H100_SXM, RT_GPU_GH200, RT_GPU_H200, RT_GPU_B200, RT_GPU_MI300X,
       RT_NGPUS_BUILTIN };
extern const RtGpu rt_gpus_builtin[RT_NGPUS_BUILTIN];   /* ORDER the enum above */

#endif
