/* clusters.h - the clusters of hw/systems/ as RtCluster structs, for tests, validation and the
 * fitter, which run without the compiler (builtin.c; `llmp op` builds its own from the same
 * files through compiler/lower/hw.c).  Internal header: runtime/ and its tests. */
#ifndef LLMP_RT_CLUSTERS_H
#define LLMP_RT_CLUSTERS_H

#include "llmp_rt.h"

/* A cluster of hw/systems/ by name (perlmutter, vista, selene, eos, hgx_h200, aws_p6_b200,
 * mi300x_node); NULL for another name.  calib is NULL: callers copy the struct and set it. */
const RtCluster *rt_cluster_builtin(const char *name);

#endif
