/* clusters.c - hw/systems/{perlmutter,vista,selene,eos}.llmp and their GPUs (hw/gpus.llmp)
 * as C structs, in one place.  Every figure is the .llmp file's; where RtTier needs one the
 * file does not state, the comment says how it follows from the file.
 * Units: bytes, bytes/s, seconds. */
#include <string.h>

#include "clusters.h"
#include "gpus_builtin.h"

#define GB 1e9
#define GBIT (1e9 / 8)
#define US 1e-6

/* The GPUs are gpus_builtin.c's (hw/gpus.llmp), so a cluster's GPU is the one `llmp op` and
 * the fitter use. */
#define A100 (&rt_gpus_builtin[RT_GPU_A100_SXM4_80GB])
#define H100 (&rt_gpus_builtin[RT_GPU_H100_SXM])
#define GH200 (&rt_gpus_builtin[RT_GPU_GH200])

static const RtCluster rt_clusters[] = {
  /* hw/systems/perlmutter.llmp.  nvlink: "100 GB/s per GPU pair" in a mesh (no NVSwitch), so
   * links_per_node counts the node's GPU ports: 4 GPUs x 3 peers = 12 (collectives.c).
   * slingshot: efficiency 0.048, the ~1.2 GB/s per NIC the paper's samples measured. */
  {"perlmutter", A100, 4, 256,
   {{"nvlink", 0, 100 * GB, 3.4 * US, 12, 0}, {"slingshot", -1, 25 * GB, 4 * US, 4, 0.048}}, 2,
   NULL},
  /* hw/systems/vista.llmp: one GPU per node, so no in-node tier; leaf of 32 nodes. */
  {"vista", GH200, 1, 600,
   {{"leaf", 32, 400 * GBIT, 4 * US, 1, 0}, {"fabric", -1, 400 * GBIT, 5 * US, 1, 0}}, 2, NULL},
  /* hw/systems/selene.llmp: NVSwitch, 300 GB/s per GPU; 8 HDR HCAs per node. */
  {"selene", A100, 8, 560,
   {{"nvlink", 0, 300 * GB, 3.4 * US, 0, 0}, {"infiniband", -1, 200 * GBIT, 5 * US, 8, 0}}, 2,
   NULL},
  /* hw/systems/eos.llmp: NVSwitch, 450 GB/s per GPU; 8 NDR HCAs per node. */
  {"eos", H100, 8, 1452,
   {{"nvlink", 0, 450 * GB, 3.4 * US, 0, 0}, {"infiniband", -1, 400 * GBIT, 5 * US, 8, 0}}, 2,
   NULL},
};

const RtCluster *rt_cluster_builtin(const char *name) {
  for (size_t i = 0; name && i < sizeof rt_clusters / sizeof *rt_clusters; i++)
    if (strcmp(rt_clusters[i].name, name) == 0) return &rt_clusters[i];
  return NULL;
}
