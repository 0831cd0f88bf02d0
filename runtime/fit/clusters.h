/* clusters.h - the clusters of hw/systems/ as RtCluster structs, for tests, validation and the
 * fitter (the runtime does not read .llmp files; `llmp op` will build these from them).
 * Internal header: runtime/ and its tests. */
#ifndef LLMP_RT_CLUSTERS_H
#define LLMP_RT_CLUSTERS_H

#include "llmp_rt.h"

/* perlmutter, vista, selene or eos; NULL for another name.  calib is NULL: callers copy the
 * struct and set it. */
const RtCluster *rt_cluster_builtin(const char *name);

#endif
