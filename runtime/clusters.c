/* clusters.c - hw/systems/{perlmutter,vista,selene,eos}.llmp and their GPUs (hw/gpus.llmp)
 * as C structs, in one place.  Every figure is the .llmp file's; where RtTier needs one the
 * file does not state, the comment says how it follows from the file.
 * Units: bytes, bytes/s, seconds. */
#include <string.h>

#include "clusters.h"

#define GB 1e9
#define GIB 1073741824.0
#define GBIT (1e9 / 8)
#define US 1e-6
#define TF 1e12

/* hw/gpus.llmp: a100_sxm4_80gb, h100_sxm, gh200 (memory, bandwidth, dense peaks, SMs). */
static const RtGpu rt_gpu_a100 = {"a100_sxm4_80gb", 80 * GIB, 2039 * GB,
                                  {19.5 * TF, 156 * TF, 312 * TF, 312 * TF, 0}, 108, 0, NULL};
static const RtGpu rt_gpu_h100 = {"h100_sxm", 80 * GIB, 3350 * GB,
                                  {67 * TF, 494.5 * TF, 989 * TF, 989 * TF, 1979 * TF}, 132, 0,
                                  NULL};
static const RtGpu rt_gpu_gh200 = {"gh200", 96 * GIB, 4000 * GB,
                                   {67 * TF, 494.5 * TF, 989 * TF, 989 * TF, 1979 * TF}, 132, 0,
                                   NULL};

static const RtCluster rt_clusters[] = {
  /* hw/systems/perlmutter.llmp.  nvlink: "100 GB/s per GPU pair" in a mesh (no NVSwitch), so
   * links_per_node counts the node's GPU ports: 4 GPUs x 3 peers = 12 (collectives.c). */
  {"perlmutter", &rt_gpu_a100, 4, 256,
   {{"nvlink", 0, 100 * GB, 2 * US, 12, 0}, {"slingshot", -1, 25 * GB, 4 * US, 4, 0}}, 2, NULL},
  /* hw/systems/vista.llmp: one GPU per node, so no in-node tier; leaf of 32 nodes. */
  {"vista", &rt_gpu_gh200, 1, 600,
   {{"leaf", 32, 400 * GBIT, 4 * US, 1, 0}, {"fabric", -1, 400 * GBIT, 5 * US, 1, 0}}, 2, NULL},
  /* hw/systems/selene.llmp: NVSwitch, 300 GB/s per GPU; 8 HDR HCAs per node. */
  {"selene", &rt_gpu_a100, 8, 560,
   {{"nvlink", 0, 300 * GB, 2 * US, 0, 0}, {"infiniband", -1, 200 * GBIT, 5 * US, 8, 0}}, 2,
   NULL},
  /* hw/systems/eos.llmp: NVSwitch, 450 GB/s per GPU; 8 NDR HCAs per node. */
  {"eos", &rt_gpu_h100, 8, 1452,
   {{"nvlink", 0, 450 * GB, 2 * US, 0, 0}, {"infiniband", -1, 400 * GBIT, 5 * US, 8, 0}}, 2,
   NULL},
};

const RtCluster *rt_cluster_builtin(const char *name) {
  for (size_t i = 0; name && i < sizeof rt_clusters / sizeof *rt_clusters; i++)
    if (strcmp(rt_clusters[i].name, name) == 0) return &rt_clusters[i];
  return NULL;
}
