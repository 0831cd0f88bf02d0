/* dtype.c - the element types the kernels know: names and sizes. */
#include <string.h>

#include "llmp_rt.h"

static const char *const dtype_names[RT_NDTYPES] = {"fp32", "tf32", "fp16", "bf16", "fp8", "mxfp8", "nvfp4"};
/* ORDER RtDtype.  tf32 is stored as fp32: it is a tensor-core input mode, not a format.
 * mxfp8: a 1-byte E4M3/E5M2 element plus one E8M0 scale byte per 32 (OCP Microscaling
 * Formats v1.0, section 5); nvfp4: a 4-bit E2M1 element plus one E4M3 scale byte per 16
 * (NVIDIA, "Pretraining Large Language Models with NVFP4", arXiv 2509.25149, section 2). */
static const double dtype_bytes[RT_NDTYPES] = {4, 4, 2, 2, 1, 1 + 1.0 / 32, 0.5 + 1.0 / 16};

const char *rt_dtype_name(RtDtype dt) { return (unsigned)dt < RT_NDTYPES ? dtype_names[dt] : "?"; }

int rt_dtype_lookup(const char *name) {
  for (int i = 0; name && i < RT_NDTYPES; i++)
    if (strcmp(name, dtype_names[i]) == 0) return i;
  return -1;
}

double rt_dtype_bytes(RtDtype dt) { return (unsigned)dt < RT_NDTYPES ? dtype_bytes[dt] : 0; }

int rt_dtype_quantized(RtDtype dt) { return dt == RT_FP8 || dt == RT_MXFP8 || dt == RT_NVFP4; }
