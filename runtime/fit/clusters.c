/* clusters.c - hw/systems/{perlmutter,vista,selene,eos,hgx_h200,aws_p6_b200,mi300x_node}.llmp and their GPUs (hw/gpus.llmp)
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
#define H200 (&rt_gpus_builtin[RT_GPU_H200])
#define B200 (&rt_gpus_builtin[RT_GPU_B200])
#define MI300X (&rt_gpus_builtin[RT_GPU_MI300X])

static const RtCluster rt_clusters[] = {
  /* hw/systems/perlmutter.llmp.  nvlink: "100 GB/s per GPU pair" in a mesh (no NVSwitch), so
   * links_per_node counts the node's GPU ports: 4 GPUs x 3 peers = 12 (collectives.c).
   * slingshot: efficiency 0.048, the ~1.2 GB/s per NIC the paper's samples measured. */
  {"perlmutter", A100, 4, 256,
   {{"nvlink", 0, 100 * GB, 3.4 * US, 12, 0, 0}, {"slingshot", -1, 25 * GB, 4 * US, 4, 0.048, 0}}, 2,
   NULL},
  /* hw/systems/vista.llmp: one GPU per node, so no in-node tier; leaf of 32 nodes. */
  {"vista", GH200, 1, 600,
   {{"leaf", 32, 400 * GBIT, 4 * US, 1, 0, 0}, {"fabric", -1, 400 * GBIT, 5 * US, 1, 0, 0}}, 2, NULL},
  /* hw/systems/selene.llmp: NVSwitch, 300 GB/s per GPU; 8 HDR HCAs per node. */
  {"selene", A100, 8, 560,
   {{"nvlink", 0, 300 * GB, 3.4 * US, 0, 0, 0}, {"infiniband", -1, 200 * GBIT, 5 * US, 8, 0, 0}}, 2,
   NULL},
  /* hw/systems/eos.llmp: NVSwitch, 450 GB/s per GPU; 8 NDR HCAs per node. */
  {"eos", H100, 8, 1452,
   {{"nvlink", 0, 450 * GB, 3.4 * US, 0, 0, 0}, {"infiniband", -1, 400 * GBIT, 5 * US, 8, 0, 0}}, 2,
   NULL},
  /* hw/systems/hgx_h200.llmp: one server, NVSwitch, 450 GB/s per GPU. */
  {"hgx_h200", H200, 8, 1, {{"nvlink", 0, 450 * GB, 3.4 * US, 0, 0, 0}}, 1, NULL},
  /* hw/systems/aws_p6_b200.llmp: NVSwitch, 900 GB/s per GPU; 8 EFA NICs of 400 Gb/s. */
  {"aws_p6_b200", B200, 8, 4,
   {{"nvlink", 0, 900 * GB, 3.4 * US, 0, 0, 0}, {"efa", -1, 400 * GBIT, 5 * US, 8, 0, 0}}, 2, NULL},
  /* hw/systems/mi300x_node.llmp: a mesh, 64 GB/s per GPU pair, 8 GPUs x 7 peers = 56 ports. */
  {"mi300x_node", MI300X, 8, 1, {{"infinity_fabric", 0, 64 * GB, 3.4 * US, 56, 0, 0}}, 1, NULL},
};

const RtCluster *rt_cluster_builtin(const char *name) {
  for (size_t i = 0; name && i < sizeof rt_clusters / sizeof *rt_clusters; i++)
    if (strcmp(rt_clusters[i].name, name) == 0) return &rt_clusters[i];
  return NULL;
}
