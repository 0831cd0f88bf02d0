/* calib.h - calibration tables inside the runtime (internal header: runtime/ and its tests).
 *
 * A table corrects one kernel for one dtype (and optional key=value qualifiers, e.g. a
 * collective's layout): a grid over up to RT_MAX_AXES axes whose nodes hold
 * log(measured time / physics-model time), one grid for the forward time and optionally one
 * for the backward time (without it, the forward's grid corrects the backward too).
 * rt_table_eval() interpolates multilinearly in (log axis, log correction) space and clamps at
 * the grid's edges, so a correction is always a positive factor and is piecewise power-law
 * between nodes; at a sampled shape the table holds (a point), that point's correction
 * multiplies the grid's.  The file format is in docs/calibration.md.
 *
 * Kernels never search tables by name when they run: rt_calib_load() resolves, once, the
 * table of every (RtOp, dtype) pair into RtCalib.op[][] and every collective layout table into
 * RtCalib.layout[] (rt_layout_table() finds one by binary search). */
#ifndef LLMP_RT_CALIB_H
#define LLMP_RT_CALIB_H

#include <stdio.h>

#include "llmp_rt.h"

/* RT_MAX_POINTS: points on one axis (a collective's table has a point per few samples, an
 * operator's grid a few dozen per axis); RT_MAX_VALUES: nodes in one grid, the product of its
 * axes' points.  RT_BUCKETS: the fewest slices of an axis's bucket index (RtTable.bucket). */
enum { RT_MAX_AXES = 4, RT_MAX_POINTS = 4096, RT_NAME_MAX = 32, RT_KEYS_MAX = 96, RT_BUCKETS = 128 };
enum { RT_MAX_VALUES = 1 << 24 };

/* The operator kernels a table can correct: see ops.def. */
typedef enum {
#define RT_OP(e, kernel, keys, naxes, a0, a1, a2, a3) RT_OP_##e,
#include "ops.def"
#undef RT_OP
  RT_NOPS
} RtOp;

typedef struct RtOpInfo {
  const char *kernel, *keys; /* as a table names them */
  int naxes;
  const char *axis[RT_MAX_AXES];
} RtOpInfo;
extern const RtOpInfo rt_op_info[RT_NOPS]; /* ORDER ops.def */

/* A sampled shape's own correction, on top of the grid's (docs/calibration.md, "Points"):
 * GEMM-backed kernels in particular run some shapes faster or slower than any smooth surface
 * through their neighbours says (the library's kernel choice), and a shape that was measured
 * is then predicted by its measurements.  A slot of RtTable.point; empty: lx[0] is NaN. */
typedef struct RtPoint {
  double lx[RT_MAX_AXES]; /* rt_log of its coordinates: the key, compared exactly */
  double c[2];            /* log corrections added to the grid's, fwd and bwd */
} RtPoint;

typedef struct RtTable {
  char kernel[RT_NAME_MAX];
  RtDtype dtype;
  char keys[RT_KEYS_MAX];                    /* canonical: key=value words sorted, one space apart */
  char name[RT_NAME_MAX + RT_KEYS_MAX + 16]; /* "linear fp16 nodes=2", for reports */
  int naxes;
  char axis_name[RT_MAX_AXES][RT_NAME_MAX];
  int npts[RT_MAX_AXES];
  /* Per axis one allocation (axis_alloc() in calib.c, freed by rt_table_release()) holds:
   * logx[a], the log of the grid points, strictly increasing (rt_log), of max(npts, 2) (an
   * axis of one point repeats it in [1] for the lookup); inv_width[a], 1 / (logx[a][i+1] -
   * logx[a][i]); x[a], the grid points as given, which the writer writes exactly; and
   * bucket[a], an index for finding a point's cell without a binary search: nbuckets[a]
   * equal slices of [logx[0], logx[n-1]] (RT_BUCKETS, or more for an axis of more points),
   * each holding a lower bound of the cell of its lower edge, and [nbuckets] the last
   * point's. */
  double *logx[RT_MAX_AXES];
  double *inv_width[RT_MAX_AXES];
  unsigned short *bucket[RT_MAX_AXES];
  int nbuckets[RT_MAX_AXES];
  double bucket_scale[RT_MAX_AXES];             /* nbuckets / (last - first) */
  double first[RT_MAX_AXES], last[RT_MAX_AXES]; /* logx[a][0], logx[a][npts - 1] */
  int nvals;                                    /* product of npts */
  int stride[RT_MAX_AXES];                      /* values between neighbours along axis a: the product of the
                                * later axes' npts (table_strides() in calib.c) */
  int upper[RT_MAX_AXES];                       /* a cell's upper corner's offset along a: stride, 0 if npts 1 */
  double *logc[2];                              /* [0] fwd (always there), [1] bwd (NULL: fwd's grid) */
  /* Points: a hash table (open addressing on the bits of lx) of point_mask + 1 slots, a power
   * of two at least twice npoints; point_x[slot] the coordinates as written.  npoints 0:
   * none (point NULL).  point_filter: 8 (point_mask + 1) bits, one set per point at other
   * bits of its hash, so that most calls at a shape that is no point skip the probe (a
   * branch that predicts well, where the probe's do not). */
  int npoints;
  unsigned point_mask;
  RtPoint *point;
  double (*point_x)[RT_MAX_AXES];
  unsigned char *point_filter;
  double *x[RT_MAX_AXES]; /* in logx[a]'s allocation (above); last: the lookups do not read it */
} RtTable;

/* The collective kernels whose tables are per layout (`KERNEL fp16 gpus_per_node=G nodes=N`,
 * one axis), in rt_coll_kernels' order. */
typedef enum { RT_COLL_ALLREDUCE, RT_COLL_ALLGATHER, RT_COLL_REDUCESCATTER, RT_COLL_ALLTOALL, RT_COLL_P2P } RtColl;
enum { RT_NCOLLS = RT_COLL_P2P + 1 };
extern const char *const rt_coll_kernels[RT_NCOLLS];
/* The index in rt_coll_kernels of a collective's table name, or -1. */
int rt_coll_index(const char *kernel);

/* bmm's tables by shape class.  A batched GEMM's time depends on how the thinner of its inner
 * and output extents (k or n: an attention head's dimension in Q K^T and in P V) divides into
 * the kernels' 16- to 64-wide tiles: on the paper's GH200 samples a head dimension of 72 takes
 * 20 % longer than one of 64 and one of 96 about as long, which no interpolation between
 * head dimensions can follow.  So besides the `bmm DTYPE` table, one table per class
 * `bmm DTYPE align=A thin=T` may correct bmm: T is k when k <= n, else n, and A the largest of
 * 8, 16, 32, 64 dividing that extent (no class when 8 does not).  A bmm uses its class's table
 * where there is one, else the `bmm DTYPE` table (docs/calibration.md). */
enum { RT_BMM_CLASSES = 8 };
/* The class of a bmm with inner extent k and output extent n, 0..RT_BMM_CLASSES-1, or -1. */
int rt_bmm_class(double k, double n);
/* A class's table keys, canonical ("align=16 thin=k"); NULL out of range. */
const char *rt_bmm_class_keys(int cls);
/* The table correcting a bmm of extents k, n in dtype dt: its class's, else bmm's, else NULL. */
const RtTable *rt_bmm_table(const RtCalib *c, RtDtype dt, double k, double n);

typedef struct RtLayoutTable {
  int kernel, nodes, gpn; /* kernel: index into rt_coll_kernels */
  const RtTable *t;
} RtLayoutTable;

struct RtCalib {
  int ntables;
  RtTable *tables;
  const RtTable *op[RT_NOPS][RT_NDTYPES];         /* resolved at load; NULL: physics only */
  const RtTable *bmm[RT_BMM_CLASSES][RT_NDTYPES]; /* bmm's class tables, likewise */
  /* Set by rt_calib_load(): layout[] holds every collective layout table, sorted by
   * (kernel, nodes, gpn).  A hand-built RtCalib (resolved == 0) is searched linearly. */
  int resolved, nlayout;
  RtLayoutTable *layout;
};

/* The table for kernel/dtype/keys (keys: "" or space-separated key=value words, any order),
 * or NULL.  Linear in the number of tables: call it once, not per evaluation. */
const RtTable *rt_table_find(const RtCalib *c, const char *kernel, RtDtype dt, const char *keys);

/* The table of collective `kernel` (index into rt_coll_kernels) for a layout, or NULL: the
 * fp16, one-axis table whose keys are exactly `gpus_per_node=G nodes=N`.  A binary search
 * over the tables resolved at load time. */
const RtTable *rt_layout_table(const RtCalib *c, int kernel, int nodes, int gpn);

/* The correction factor of grid `which` (0 fwd, 1 bwd) at x (t->naxes coordinates, in the
 * axes' units, > 0).  Sets RT_EXTRAPOLATED in *flags when x lies outside the grid on some
 * axis (the value is then the edge's).  A table without a bwd grid corrects the backward time
 * by its forward grid: the same implementation on the same GPU (docs/calibration.md). */
double rt_table_eval(const RtTable *t, int which, const double *x, unsigned *flags);

/* Writes one table in the text format: grid points and point coordinates exactly (an integer
 * as its digits), corrections to 4 decimals (4 significant digits below 0.1).  header:
 * provenance lines written as `# ` comments (may be NULL or contain several '\n'-separated
 * lines).  Returns 0, or -1 on a write error. */
int rt_table_write(FILE *f, const RtTable *t, const char *header);

/* Writes table t to path as rt_table_write() does, once the text is known to load back as t
 * (the loader's rules, the same grid exactly, the values within the digits written), through
 * a temporary file beside path renamed over it: path is never half written, nor a table that
 * llmp would refuse.  Returns 0, or -1 with "PATH:LINE: message" in err (path untouched). */
int rt_table_save(const RtTable *t, const char *path, const char *header, char *err, size_t errlen);
/* rt_table_save()'s check alone, writing nothing: 0 if t's text loads back as t, else -1
 * with the message (path names the table in it). */
int rt_table_check(const RtTable *t, const char *path, char *err, size_t errlen);

/* Builds a table in place (for the fitter and tests): names, axes; the value arrays are
 * allocated (zero: factor 1) and owned by the table; rt_table_release() frees them.
 * Returns 0, or -1 on bad sizes / allocation failure. */
int rt_table_init(RtTable *t, const char *kernel, RtDtype dt, const char *keys, int naxes,
                  const char *const *axis_names, const int *npts, const double *const *points, int with_bwd);
void rt_table_release(RtTable *t);

/* Adds the point at coordinates x (t->naxes of them, > 0) with log corrections c[0] (fwd) and
 * c[1] (bwd; unused without a bwd grid) to t.  0, 1 if t has that point already (unchanged),
 * -1 on allocation failure or when t would have more than RT_MAX_TABLE_POINTS. */
enum { RT_MAX_TABLE_POINTS = 1 << 20 };
int rt_table_add_point(RtTable *t, const double *x, const double *c);

/* The point of t whose coordinates' logs are lx, or NULL. */
const RtPoint *rt_table_point(const RtTable *t, const double *lx);

/* rt_calibrate() for a table already found and the logs of its coordinates. */
void rt_calibrate_log(const RtTable *t, const double *lx, RtCost *cost);

/* Applies the table of op (if any) to a physics cost: multiplies fwd/bwd by the corrections
 * at x and sets RT_CALIBRATED (and RT_EXTRAPOLATED). */
void rt_calibrate(const RtGpu *g, RtOp op, RtDtype dt, const double *x, RtCost *cost);

/* Collective `kernel` by its table name ("allreduce" ... "p2p"), as rt_allreduce and the
 * others compute it (calibrated when c has the table); RT_BAD_ARGS and NaN for an unknown name. */
RtCost rt_collective_named(const char *kernel, const RtCluster *c, double bytes, int nodes, int gpus_per_node);
/* The same by index into rt_coll_kernels, for a group whose nodes are node_stride apart (a
 * strided group, one GPU a node: what matters is the nodes it spans, against the tiers' spans
 * and the NVLink domain). */
RtCost rt_collective_strided(RtColl kernel, const RtCluster *c, double bytes, int nodes, int gpus_per_node,
                             int node_stride);

/* A deduplicating expert dispatch or combine (DeepEP under Megatron-Core's flex dispatcher)
 * of `bytes` (one copy of a rank's tokens) over an expert-parallel group of nodes x
 * gpus_per_node ranks node_stride nodes apart, the experts routed top_k of `experts`, limited
 * to group_top_k of `groups` groups (collectives.c).  Uncalibrated. */
RtCost rt_dispatch(const RtCluster *c, double bytes, int experts, int top_k, int groups, int group_top_k, int nodes,
                   int gpus_per_node, int node_stride);
/* The chance a token's experts miss a unit of u consecutive experts under that routing. */
double rt_dispatch_miss(int experts, int top_k, int groups, int group_top_k, int u);

/* The collectives' physics without a table, for the fitter (collectives.c): the time of one
 * call (seconds) with no table applied; NaN for bad arguments or an unknown kernel name. */
double rt_collective_physics(const char *kernel, const RtCluster *c, double bytes, int nodes, int gpus_per_node);

/* A time no call can beat (seconds): the bytes a rank must receive or send over the sum of
 * its links' declared rates (collectives.c has the derivation); below the physics for every
 * layout.  0 for one rank or 0 bytes; NaN for bad arguments or an unknown kernel name. */
double rt_collective_min_time(const char *kernel, const RtCluster *c, double bytes, int nodes, int gpus_per_node);

/* strtod(s, end), bit for bit and errno included, fast for the plain decimals the tables are
 * written in (`1.2083`, `-0.0123`, `24576`, `3.5e-05`): up to 19 significant digits whose
 * integer is below 2^53, scaled by at most 10^22, is the one correctly rounded product or
 * quotient of two exact doubles (Clinger's fast path), which is what strtod returns.  Any
 * other string (more digits, larger exponents, hex, inf, spaces) goes to strtod. */
double rt_strtod(const char *s, char **end);

/* A duration for messages: "118 us", "3.7 ms" or "1.2 s" (in buf, which it returns). */
const char *rt_time_str(double sec, char *buf, size_t len);

#endif
