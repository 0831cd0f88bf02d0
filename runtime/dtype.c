/* dtype.c - the element types the kernels know: names and sizes. */
#include <string.h>

#include "llmp_rt.h"

static const char *const dtype_names[RT_NDTYPES] = {"fp32", "tf32", "fp16", "bf16", "fp8"};
/* ORDER RtDtype.  tf32 is stored as fp32: it is a tensor-core input mode, not a format. */
static const double dtype_bytes[RT_NDTYPES] = {4, 4, 2, 2, 1};

const char *rt_dtype_name(RtDtype dt) { return (unsigned)dt < RT_NDTYPES ? dtype_names[dt] : "?"; }

int rt_dtype_lookup(const char *name) {
  for (int i = 0; name && i < RT_NDTYPES; i++)
    if (strcmp(name, dtype_names[i]) == 0) return i;
  return -1;
}

double rt_dtype_bytes(RtDtype dt) { return (unsigned)dt < RT_NDTYPES ? dtype_bytes[dt] : 0; }
