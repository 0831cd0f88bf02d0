/* gpus_builtin.c - datasheet figures of the GPUs the fitter and the tests need, in C.
 *
 * The runtime does not parse .llmp; `llmp op` builds RtGpu from hw/gpus.llmp.  These copies
 * are for `llmp fit`, the validation program and the tests, and must match hw/gpus.llmp
 * (gpus a100_sxm4_80gb, h100_sxm, gh200, and for the collective validation h200, b200, mi300x; figures from
 * shared/data/published/gpu_datasheet_peaks.csv, SM counts from the vendor whitepapers).
 * L2 sizes: A100 40 MB, H100/GH200 50 MB (whitepapers). */
#include <string.h>

#include "gpus_builtin.h"
#include "llmp_fit.h"

#define GiB (1024.0 * 1024 * 1024)
#define T 1e12

const RtGpu rt_gpus_builtin[RT_NGPUS_BUILTIN] = {   /* ORDER gpus_builtin.h */
    {"a100_sxm4_80gb", 80 * GiB, 2039e9, {19.5 * T, 156 * T, 312 * T, 312 * T, 0}, 108, 40e6, NULL, 0, 0},
    {"h100_sxm", 80 * GiB, 3350e9, {67 * T, 494.5 * T, 989 * T, 989 * T, 1979 * T}, 132, 50e6, NULL, 0.665, 0.655},
    {"gh200", 96 * GiB, 4000e9, {67 * T, 494.5 * T, 989 * T, 989 * T, 1979 * T}, 132, 50e6, NULL, 0, 0},
    {"h200", 141 * GiB, 4800e9, {67 * T, 494.5 * T, 989 * T, 989 * T, 1979 * T}, 132, 0, NULL, 0, 0},
    {"b200", 180 * GiB, 8000e9, {80 * T, 1125 * T, 2250 * T, 2250 * T, 4500 * T}, 148, 0, NULL, 0, 0},
    {"mi300x", 192 * GiB, 5300e9, {163.4 * T, 653.7 * T, 1307 * T, 1307 * T, 2615 * T}, 304, 0, NULL, 0, 0},
};
/* ORDER builtin: the calibration folder each GPU's tables come from (hw/gpus.llmp). */
static const char *const calib_names[RT_NGPUS_BUILTIN] = {"a100-sxm4-80gb-perlmutter", "h100-sxm5-80gb-hbm3", "gh200-vista",
                                                          "", "", ""};

const RtGpu *rt_gpu_builtin(const char *name) {
  for (size_t i = 0; name && i < RT_NGPUS_BUILTIN; i++)
    if (strcmp(name, rt_gpus_builtin[i].name) == 0 || (calib_names[i][0] && strcmp(name, calib_names[i]) == 0))
      return &rt_gpus_builtin[i];
  return NULL;
}
