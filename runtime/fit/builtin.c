/* builtin.c - the GPUs and clusters the fitter, the validation programs and the tests use
 * without the compiler: the declarations of hw/gpus.llmp and hw/systems/, compiled in.  The
 * tables are generated from those files at build time (gen_builtin.c), so hw/ stays their one
 * source; a cluster's GPU is one of the built-in GPUs. */
#include <string.h>

#include "clusters.h"
#include "llmp_fit.h"

#include "builtin_data.h" /* generated: builtin_gpus, builtin_calib_names, builtin_clusters */

const RtGpu *rt_gpu_builtin(const char *name) {
  for (size_t i = 0; name && i < sizeof builtin_gpus / sizeof *builtin_gpus; i++)
    if (strcmp(name, builtin_gpus[i].name) == 0 ||
        (builtin_calib_names[i][0] && strcmp(name, builtin_calib_names[i]) == 0))
      return &builtin_gpus[i];
  return NULL;
}

const RtCluster *rt_cluster_builtin(const char *name) {
  for (size_t i = 0; name && i < sizeof builtin_clusters / sizeof *builtin_clusters; i++)
    if (strcmp(builtin_clusters[i].name, name) == 0) return &builtin_clusters[i];
  return NULL;
}
