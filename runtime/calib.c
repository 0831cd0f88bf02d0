/* calib.c - calibration tables: the text loader, lookup, interpolation and the writer.
 *
 * Format (docs/calibration.md has the full description): '#' starts a comment; a file holds
 * one or more tables, each
 *   table KERNEL DTYPE [key=value...]
 *   axis NAME v1 v2 ...          (1..RT_MAX_AXES lines, points > 0, strictly increasing)
 *   fwd c c c ...                (row-major over the axes, last axis fastest; may span lines)
 *   bwd c c c ...                (optional)
 *   point x1 .. xN c [c]         (optional, any number, after the values: a sampled shape's
 *                                 own fwd [and bwd] correction on top of the grid's)
 * Each c is a multiplicative correction, measured / physics-model time, > 0.  The loader
 * stores log(c) and log(point) because interpolation happens in log-log space: kernel time
 * is close to a power law of size between nearby grid nodes, so that is where linear
 * interpolation is most accurate. */
#include "alloc.h"
#include "calib.h"
#include "fileio.h"
#include "fastmath.h"
#include "sorted.h"
#include "strbuf.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

const RtOpInfo rt_op_info[RT_NOPS] = {
/* clang-format off */
#define RT_OP(e, kernel, keys, naxes, a0, a1, a2, a3) {kernel, keys, naxes, {a0, a1, a2, a3}},
/* clang-format on */
#include "ops.def"
#undef RT_OP
};

/* --- keys ------------------------------------------------------------------------- */

/* Canonicalises a key string (sorts the words, single spaces) into out; 0 on success, -1 if
 * a word is not key=value or it does not fit. */
static int keys_canonical(const char *keys, char *out, size_t outlen) {
  char buf[RT_KEYS_MAX];
  char *words[RT_KEYS_MAX / 2];
  int n = 0;
  if (!keys) keys = "";
  if (strlen(keys) >= sizeof buf || outlen == 0) return -1;
  strcpy(buf, keys);
  for (char *p = strtok(buf, " \t"); p; p = strtok(NULL, " \t")) {
    char *eq = strchr(p, '=');
    if (!eq || eq == p || eq[1] == '\0') return -1;
    words[n++] = p;
  }
  qsort(words, (size_t)n, sizeof words[0], cmp_cstr);
  size_t len = 0;
  out[0] = '\0';
  for (int i = 0; i < n; i++) {
    size_t w = strlen(words[i]);
    if (len + w + (i > 0) + 1 > outlen) return -1;
    if (i > 0) out[len++] = ' ';
    memcpy(out + len, words[i], w + 1);
    len += w;
  }
  return 0;
}

/* --- building, releasing ---------------------------------------------------------- */

/* Room for axis a of n points (RtTable.logx): one block of logx, inv_width, x and the bucket
 * index, RT_BUCKETS slices or the power of two at or above n.  0, or -1 out of memory. */
static int axis_alloc(RtTable *t, int a, int n) {
  int n2 = n < 2 ? 2 : n, nb = RT_BUCKETS;
  while (nb < n) nb *= 2;
  free(t->logx[a]);
  double *m = malloc(3 * (size_t)n2 * sizeof *m + ((size_t)nb + 1) * sizeof *t->bucket[a]);
  t->logx[a] = m;
  if (!m) return -1;
  t->inv_width[a] = m + n2;
  t->x[a] = m + 2 * n2;
  t->bucket[a] = (unsigned short *)(m + 3 * n2);
  t->nbuckets[a] = nb;
  return 0;
}

/* Axis a's bucket index (RtTable.bucket): slice b of nbuckets starts at logx[0] + b / scale;
 * its entry is the number of inner points below that edge, less a millionth of a slice so
 * that it stays a lower bound for a point that rounding puts in the slice.  axis_cell()
 * starts there and steps up to the exact cell. */
static void index_axis(RtTable *t, int a) {
  const double *p = t->logx[a];
  int n = t->npts[a], nb = t->nbuckets[a];
  t->bucket_scale[a] = n > 1 ? nb / (p[n - 1] - p[0]) : 0;
  for (int i = 0; i + 1 < n; i++) t->inv_width[a][i] = 1 / (p[i + 1] - p[i]);
  if (n == 1) t->logx[a][1] = p[0], t->inv_width[a][0] = 0; /* axis_cell()'s one-point axis */
  t->first[a] = p[0], t->last[a] = p[n - 1];
  for (int b = 0, i = 0; b <= nb; b++) { /* c = last can reach slice nb */
    double edge = n > 1 ? p[0] + (b - 1e-6) / t->bucket_scale[a] : p[0];
    while (i < n - 2 && p[i + 1] < edge) i++;
    t->bucket[a][b] = (unsigned short)i;
  }
}

/* The grid's value count and each axis's stride in the row-major values; -1 (nvals 0) when
 * the grid would hold more than RT_MAX_VALUES nodes. */
static int table_strides(RtTable *t) {
  long long nv = 1;
  for (int a = t->naxes - 1; a >= 0; a--) {
    t->stride[a] = (int)nv, nv *= t->npts[a];
    t->upper[a] = t->npts[a] > 1 ? t->stride[a] : 0;
    if (nv > RT_MAX_VALUES) return t->nvals = 0, -1;
  }
  t->nvals = (int)nv;
  return 0;
}

static void table_set_name(RtTable *t) {
  snprintf(t->name, sizeof t->name, "%s %s%s%s", t->kernel, rt_dtype_name(t->dtype), t->keys[0] ? " " : "", t->keys);
}

int rt_table_init(RtTable *t, const char *kernel, RtDtype dt, const char *keys, int naxes,
                  const char *const *axis_names, const int *npts, const double *const *points, int with_bwd) {
  memset(t, 0, sizeof *t);
  if (strlen(kernel) >= RT_NAME_MAX || naxes < 1 || naxes > RT_MAX_AXES) return -1;
  if (keys_canonical(keys, t->keys, sizeof t->keys) != 0) return -1;
  strcpy(t->kernel, kernel);
  t->dtype = dt;
  t->naxes = naxes;
  for (int a = 0; a < naxes; a++) {
    if (npts[a] < 1 || npts[a] > RT_MAX_POINTS || strlen(axis_names[a]) >= RT_NAME_MAX) return -1;
    snprintf(t->axis_name[a], RT_NAME_MAX, "%s", axis_names[a]);
    t->npts[a] = npts[a];
    if (axis_alloc(t, a, npts[a]) != 0) return rt_table_release(t), -1;
    for (int i = 0; i < npts[a]; i++) {
      if (!(points[a][i] > 0 && points[a][i] < INFINITY) || (i > 0 && !(points[a][i] > points[a][i - 1])))
        return rt_table_release(t), -1;
      t->logx[a][i] = rt_log(points[a][i]), t->x[a][i] = points[a][i];
    }
    index_axis(t, a);
  }
  if (table_strides(t) != 0) return rt_table_release(t), -1;
  table_set_name(t);
  for (int w = 0; w <= with_bwd; w++) {
    t->logc[w] = calloc((size_t)t->nvals, sizeof(double));
    if (!t->logc[w]) {
      rt_table_release(t);
      return -1;
    }
  }
  return 0;
}

void rt_table_release(RtTable *t) {
  for (int a = 0; a < RT_MAX_AXES; a++) {
    free(t->logx[a]);
    t->logx[a] = t->inv_width[a] = t->x[a] = NULL, t->bucket[a] = NULL;
  }
  free(t->logc[0]);
  free(t->logc[1]);
  free(t->point);
  free(t->point_x);
  free(t->point_filter);
  t->logc[0] = t->logc[1] = NULL;
  t->point = NULL, t->point_x = NULL, t->point_filter = NULL, t->npoints = 0, t->point_mask = 0;
}

/* --- points ----------------------------------------------------------------------- */

/* A hash of the bits of a point's coordinates' logs: bits 16 up pick the slot, bits 40 up
 * the filter's bit (RtTable.point_filter). */
static inline uint64_t point_hash(const double *lx, int naxes) {
  uint64_t h = 0;
  for (int a = 0; a < naxes; a++) {
    uint64_t b;
    memcpy(&b, &lx[a], sizeof b);
    h = (h ^ b) * 0x9E3779B97F4A7C15ull;
    h ^= h >> 29;
  }
  return h;
}

/* The filter's bit for hash h, of 8 (point_mask + 1): 24 bits of the hash, enough for the
 * filters of up to 2^21 slots (past that, the same bits are set and tested: fewer skips). */
static inline unsigned filter_bit(const RtTable *t, uint64_t h) {
  return (unsigned)(h >> 40) & (8 * t->point_mask + 7);
}

/* Sets the filter's bit of hash h, a point's. */
static inline void filter_set(RtTable *t, uint64_t h) {
  unsigned b = filter_bit(t, h);
  t->point_filter[b >> 3] |= (unsigned char)(1u << (b & 7));
}

/* The slot of lx (hash h) in t: its point's, or the empty one where it would go. */
static inline unsigned point_slot(const RtTable *t, const double *lx, uint64_t h) {
  unsigned i = (unsigned)(h >> 16) & t->point_mask;
  for (;; i = (i + 1) & t->point_mask) {
    const RtPoint *p = &t->point[i];
    if (isnan(p->lx[0])) return i;
    int a = 0;
    while (a < t->naxes && p->lx[a] == lx[a]) a++;
    if (a == t->naxes) return i;
  }
}

const RtPoint *rt_table_point(const RtTable *t, const double *lx) {
  if (!t->npoints) return NULL;
  uint64_t h = point_hash(lx, t->naxes);
  unsigned b = filter_bit(t, h);
  if (!(t->point_filter[b >> 3] >> (b & 7) & 1)) return NULL;
  const RtPoint *p = &t->point[point_slot(t, lx, h)];
  return isnan(p->lx[0]) ? NULL : p;
}

/* Doubles t's slots (16 at first), placing its points again, and rebuilds the filter. */
static int points_grow(RtTable *t) {
  unsigned cap = t->point ? 2 * (t->point_mask + 1) : 16;
  RtPoint *np = malloc(cap * sizeof *np);
  double(*nx)[RT_MAX_AXES] = malloc(cap * sizeof *nx);
  unsigned char *nf = calloc(cap, 1);
  if (!np || !nx || !nf) {
    free(np), free(nx), free(nf);
    return -1;
  }
  for (unsigned i = 0; i < cap; i++) np[i].lx[0] = NAN;
  RtTable old = *t;
  t->point = np, t->point_x = nx, t->point_filter = nf, t->point_mask = cap - 1;
  for (unsigned i = 0; old.point && i <= old.point_mask; i++) {
    if (isnan(old.point[i].lx[0])) continue;
    uint64_t h = point_hash(old.point[i].lx, t->naxes);
    unsigned j = point_slot(t, old.point[i].lx, h);
    np[j] = old.point[i];
    memcpy(nx[j], old.point_x[i], sizeof nx[j]);
    filter_set(t, h);
  }
  free(old.point), free(old.point_x), free(old.point_filter);
  return 0;
}

int rt_table_add_point(RtTable *t, const double *x, const double *c) {
  double lx[RT_MAX_AXES] = {0};
  for (int a = 0; a < t->naxes; a++) lx[a] = rt_log(x[a]);
  if (rt_table_point(t, lx)) return 1;
  if (t->npoints >= RT_MAX_TABLE_POINTS) return -1;
  if ((!t->point || 2u * ((unsigned)t->npoints + 1) > t->point_mask + 1) && points_grow(t) != 0) return -1;
  uint64_t h = point_hash(lx, t->naxes);
  unsigned i = point_slot(t, lx, h);
  filter_set(t, h);
  RtPoint *p = &t->point[i];
  memcpy(p->lx, lx, sizeof p->lx);
  p->c[0] = c[0], p->c[1] = t->logc[1] ? c[1] : 0;
  memset(t->point_x[i], 0, sizeof t->point_x[i]);
  memcpy(t->point_x[i], x, (size_t)t->naxes * sizeof *x);
  t->npoints++;
  return 0;
}

/* --- evaluation ------------------------------------------------------------------- */

/* Interpolation: multilinear in the logs, one axis at a time.  Per axis, the point clamped
 * to the grid, its cell's lower index i (the number of inner grid points below it, found from
 * the axis's bucket index), the fraction f = (l - p[i]) / (p[i+1] - p[i]) and the offsets of
 * the cell's lower and upper points in the values.  An axis of one point takes the same path:
 * index_axis() pads it to two equal points with f 0, and its upper offset (RtTable.upper 0) is
 * its lower one.  The value is then the nested blend (1 - f) lower + f upper along each axis,
 * axis 0 outermost: exactly the node's value at a grid point, 2^naxes - 1 blends in all.  Each
 * table shape gets its own straight-line code (interp1..interp4), in registers. */
typedef struct Cell {
  int lo, up;  /* offsets of the cell's lower and upper points along the axis */
  double f, g; /* the fraction and 1 - f */
} Cell;

/* Branch-free but for the cell search's steps, which the buckets make rare: a sweep's calls
 * fall inside and outside the grid, on and off nodes, in no order a predictor learns. */
static inline Cell axis_cell(const RtTable *t, int a, double l, unsigned *out) {
  const double *p = t->logx[a];
  double first = t->first[a], last = t->last[a];
  *out |= (l < first - 1e-9) | (l > last + 1e-9);
  double c = l > last ? last : l; /* clamped: two selects (minsd, maxsd) */
  c = c < first ? first : c;
  /* The first i with p[i + 1] >= c: the number of the inner points p[1..n-2] below c (0 at
   * c = first: f 0; n - 2 at c = last: f 1), from the bucket of c, corrected by the steps to
   * the exact cell, which the bucket's nearness makes few (none in most calls, so a loop whose
   * test predicts well beats a fixed number of steps that always run). */
  int b = (int)((c - first) * t->bucket_scale[a]);
  int i = t->bucket[a][b];                        /* b <= nbuckets[a]: (last - first) scale rounds to at most that */
  if (__builtin_expect((p[i] >= c) & (i > 0), 0)) /* a guard: the index is a lower bound */
    while (i > 0 && p[i] >= c) i--;
  while (p[i + 1] < c) i++; /* p[n - 1] < c never holds: in bounds */
  Cell k;
  k.lo = i * t->stride[a], k.up = k.lo + t->upper[a];
  k.f = c == p[i + 1] ? 1 : (c - p[i]) * t->inv_width[a][i]; /* 1 exactly at a node */
  k.g = 1 - k.f;
  return k;
}

/* The blend along the last axis (index n - 1, the values' stride 1) and, nested, the others. */
static inline double interp1(const double *v, const Cell *k) { return k[0].g * v[k[0].lo] + k[0].f * v[k[0].up]; }
static inline double interp2(const double *v, const Cell *k) {
  return k[0].g * interp1(v + k[0].lo, k + 1) + k[0].f * interp1(v + k[0].up, k + 1);
}
static inline double interp3(const double *v, const Cell *k) {
  return k[0].g * interp2(v + k[0].lo, k + 1) + k[0].f * interp2(v + k[0].up, k + 1);
}
static inline double interp4(const double *v, const Cell *k) {
  return k[0].g * interp3(v + k[0].lo, k + 1) + k[0].f * interp3(v + k[0].up, k + 1);
}

/* The interpolated log corrections of grid v0 and, unless v1 is NULL, of grid v1 (else *s1
 * is 0), at the point whose coordinates' logs are lx.  NAXES is a constant at every call. */
static inline void table_sums(const RtTable *t, int naxes, const double *lx, const double *v0, const double *v1,
                              double *s0, double *s1, unsigned *flags) {
  Cell k[RT_MAX_AXES];
  unsigned out = 0;
#pragma GCC unroll 4 /* straight-line code per shape: the cells stay in registers */
  for (int a = 0; a < naxes; a++) k[a] = axis_cell(t, a, lx[a], &out);
  *flags |= -out & RT_EXTRAPOLATED; /* out is 0 or 1 */
#define INTERP(v) (naxes == 1 ? interp1(v, k) : naxes == 2 ? interp2(v, k) : naxes == 3 ? interp3(v, k) : interp4(v, k))
  *s0 = INTERP(v0);
  *s1 = v1 ? INTERP(v1) : 0;
#undef INTERP
}

static void table_sums_n(const RtTable *t, const double *lx, const double *v0, const double *v1, double *s0, double *s1,
                         unsigned *flags) {
  switch (t->naxes) {
  case 1: table_sums(t, 1, lx, v0, v1, s0, s1, flags); break;
  case 2: table_sums(t, 2, lx, v0, v1, s0, s1, flags); break;
  case 3: table_sums(t, 3, lx, v0, v1, s0, s1, flags); break;
  default: table_sums(t, 4, lx, v0, v1, s0, s1, flags); break;
  }
}

double rt_table_eval(const RtTable *t, int which, const double *x, unsigned *flags) {
  double lx[RT_MAX_AXES];
  for (int a = 0; a < t->naxes; a++) lx[a] = rt_log(x[a]);
  const double *v = t->logc[which] ? t->logc[which] : t->logc[0];
  double s, unused;
  table_sums_n(t, lx, v, NULL, &s, &unused, flags);
  const RtPoint *p = rt_table_point(t, lx);
  if (p) s += p->c[which && t->logc[1]];
  return rt_exp(s);
}

void rt_calibrate_log(const RtTable *t, const double *lx, RtCost *cost) {
  double s0, s1;
  table_sums_n(t, lx, t->logc[0], t->logc[1], &s0, &s1, &cost->flags);
  if (t->npoints) {
    const RtPoint *p = rt_table_point(t, lx);
    if (p) s0 += p->c[0], s1 += p->c[1];
  }
  double f, fb; /* without a bwd grid, the fwd grid's correction serves both */
  rt_exp2(s0, t->logc[1] ? s1 : s0, &f, &fb);
  cost->fwd *= f;
  if (cost->bwd > 0) cost->bwd *= fb;
  cost->flags |= RT_CALIBRATED;
}

static const char *const bmm_class_keys[RT_BMM_CLASSES] = {"align=8 thin=k",  "align=16 thin=k", "align=32 thin=k",
                                                           "align=64 thin=k", "align=8 thin=n",  "align=16 thin=n",
                                                           "align=32 thin=n", "align=64 thin=n"};

int rt_bmm_class(double k, double n) {
  double thin = k <= n ? k : n;
  if (!(thin >= 8 && thin < 9007199254740992.0)) return -1; /* 2^53: exact as an integer */
  unsigned long long t = (unsigned long long)thin;
  if ((double)t != thin || (t & 7) != 0) return -1;
  int a = 0;
  while (a < 3 && (t & ((16ull << a) - 1)) == 0) a++;
  return (k <= n ? 0 : 4) + a;
}

const char *rt_bmm_class_keys(int cls) { return cls >= 0 && cls < RT_BMM_CLASSES ? bmm_class_keys[cls] : NULL; }

const RtTable *rt_bmm_table(const RtCalib *c, RtDtype dt, double k, double n) {
  if (!c) return NULL;
  int cls = rt_bmm_class(k, n);
  return cls >= 0 && c->bmm[cls][dt] ? c->bmm[cls][dt] : c->op[RT_OP_BMM][dt];
}

void rt_calibrate(const RtGpu *g, RtOp op, RtDtype dt, const double *x, RtCost *cost) {
  if (!g->calib) return;
  const RtTable *t = op == RT_OP_BMM ? rt_bmm_table(g->calib, dt, x[2], x[3]) : g->calib->op[op][dt];
  if (!t) return;
  double lx[RT_MAX_AXES];
  int a = 0;
  for (; a + 1 < t->naxes; a += 2) rt_log2(x[a], x[a + 1], &lx[a], &lx[a + 1]);
  if (a < t->naxes) lx[a] = rt_log(x[a]);
  rt_calibrate_log(t, lx, cost);
}

/* --- lookup ----------------------------------------------------------------------- */

const RtTable *rt_table_find(const RtCalib *c, const char *kernel, RtDtype dt, const char *keys) {
  char canon[RT_KEYS_MAX];
  if (!c || keys_canonical(keys, canon, sizeof canon) != 0) return NULL;
  for (int i = 0; i < c->ntables; i++) {
    const RtTable *t = &c->tables[i];
    if (t->dtype == dt && strcmp(t->kernel, kernel) == 0 && strcmp(t->keys, canon) == 0) return t;
  }
  return NULL;
}

const char *const rt_coll_kernels[RT_NCOLLS] = {"allreduce", "allgather", "reducescatter", "alltoall", "p2p"};

int rt_coll_index(const char *kernel) {
  for (int k = 0; k < RT_NCOLLS; k++)
    if (strcmp(rt_coll_kernels[k], kernel) == 0) return k;
  return -1;
}

/* 1 if t is collective kernel k's table for that layout: the keys compare as the string
 * "gpus_per_node=G nodes=N" written with %d (so `nodes=02` is no layout's table). */
static int layout_match(const RtTable *t, int k, int nodes, int gpn) {
  char keys[64];
  snprintf(keys, sizeof keys, "gpus_per_node=%d nodes=%d", gpn, nodes);
  return t->dtype == RT_FP16 && t->naxes == 1 && strcmp(t->kernel, rt_coll_kernels[k]) == 0 &&
         strcmp(t->keys, keys) == 0;
}

static int layout_cmp(const RtLayoutTable *a, int k, int nodes, int gpn) {
  if (a->kernel != k) return a->kernel < k ? -1 : 1;
  if (a->nodes != nodes) return a->nodes < nodes ? -1 : 1;
  if (a->gpn != gpn) return a->gpn < gpn ? -1 : 1;
  return 0;
}

static int layout_qsort_cmp(const void *a, const void *b) {
  const RtLayoutTable *y = b;
  return layout_cmp(a, y->kernel, y->nodes, y->gpn);
}

const RtTable *rt_layout_table(const RtCalib *c, int k, int nodes, int gpn) {
  if (!c || k < 0 || k >= RT_NCOLLS) return NULL;
  if (!c->resolved) { /* a hand-built table set: search it */
    for (int i = 0; i < c->ntables; i++)
      if (layout_match(&c->tables[i], k, nodes, gpn)) return &c->tables[i];
    return NULL;
  }
  int lo = 0, hi = c->nlayout;
  while (lo < hi) {
    int mid = (lo + hi) / 2;
    int r = layout_cmp(&c->layout[mid], k, nodes, gpn);
    if (r == 0) return c->layout[mid].t;
    if (r < 0)
      lo = mid + 1;
    else
      hi = mid;
  }
  return NULL;
}

/* Indexes the collective layout tables: the tables layout_match() accepts for some layout. */
static int resolve_layouts(RtCalib *c) {
  c->layout = malloc((size_t)c->ntables * sizeof *c->layout);
  if (!c->layout) return -1;
  for (int i = 0; i < c->ntables; i++) {
    const RtTable *t = &c->tables[i];
    const char *s = t->keys;
    char *end;
    if (strncmp(s, "gpus_per_node=", 14) != 0) continue;
    long gpn = strtol(s + 14, &end, 10);
    if (strncmp(end, " nodes=", 7) != 0 || gpn < 1 || gpn > INT_MAX) continue;
    long nodes = strtol(end + 7, &end, 10);
    if (*end != '\0' || nodes < 1 || nodes > INT_MAX) continue;
    for (int k = 0; k < RT_NCOLLS; k++)
      if (layout_match(t, k, (int)nodes, (int)gpn))
        c->layout[c->nlayout++] = (RtLayoutTable){k, (int)nodes, (int)gpn, t};
  }
  qsort(c->layout, (size_t)c->nlayout, sizeof *c->layout, layout_qsort_cmp);
  c->resolved = 1;
  return 0;
}

int rt_calib_ntables(const RtCalib *c) { return c ? c->ntables : 0; }

const char *rt_calib_table_name(const RtCalib *c, int i) {
  return c && i >= 0 && i < c->ntables ? c->tables[i].name : NULL;
}

/* --- writer ----------------------------------------------------------------------- */

/* A correction (log c): 4 decimals, or 4 significant digits below 0.1, so that a small one is
 * not written as 0. */
static void write_correction(FILE *f, double logc) {
  double c = exp(logc);
  fprintf(f, c >= 0.1 ? " %.4f" : " %.4g", c);
}

static void write_values(FILE *f, const char *word, const RtTable *t, const double *v) {
  int row = t->npts[t->naxes - 1];
  for (int i = 0; i < t->nvals; i += row) {
    fprintf(f, "%s", word);
    for (int j = 0; j < row; j++) write_correction(f, v[i + j]);
    fputc('\n', f);
  }
}

/* A coordinate, exactly: an integer as its digits. */
static void write_coord(FILE *f, double x) {
  char buf[STR_NUM_MAX];
  fprintf(f, " %s", str_number(buf, sizeof buf, x));
}

/* The points in the order of their coordinates, the first axis's first (the unused ones are
 * 0): files that differ only where the samples do. */
static int point_x_cmp(const void *a, const void *b) {
  const double *x = a, *y = b;
  for (int i = 0; i < RT_MAX_AXES; i++)
    if (x[i] != y[i]) return x[i] < y[i] ? -1 : 1;
  return 0;
}

static int write_points(FILE *f, const RtTable *t) {
  if (!t->npoints) return 0;
  /* each row: the coordinates, then the two corrections */
  double(*row)[RT_MAX_AXES + 2] = malloc((size_t)t->npoints * sizeof *row);
  if (!row) return -1;
  int n = 0;
  for (unsigned i = 0; i <= t->point_mask; i++) {
    if (isnan(t->point[i].lx[0])) continue;
    memcpy(row[n], t->point_x[i], sizeof t->point_x[i]);
    row[n][RT_MAX_AXES] = t->point[i].c[0], row[n][RT_MAX_AXES + 1] = t->point[i].c[1];
    n++;
  }
  qsort(row, (size_t)n, sizeof *row, point_x_cmp);
  for (int i = 0; i < n; i++) {
    fprintf(f, "point");
    for (int a = 0; a < t->naxes; a++) write_coord(f, row[i][a]);
    write_correction(f, row[i][RT_MAX_AXES]);
    if (t->logc[1]) write_correction(f, row[i][RT_MAX_AXES + 1]);
    fputc('\n', f);
  }
  free(row);
  return 0;
}

int rt_table_write(FILE *f, const RtTable *t, const char *header) {
  for (const char *p = header; p && *p;) {
    const char *nl = strchr(p, '\n');
    int len = nl ? (int)(nl - p) : (int)strlen(p);
    fprintf(f, "# %.*s\n", len, p);
    p += len + (nl != NULL);
  }
  fprintf(f, "table %s\n", t->name);
  for (int a = 0; a < t->naxes; a++) {
    fprintf(f, "axis %s", t->axis_name[a]);
    for (int i = 0; i < t->npts[a]; i++) write_coord(f, t->x[a][i]);
    fputc('\n', f);
  }
  write_values(f, "fwd", t, t->logc[0]);
  if (t->logc[1]) write_values(f, "bwd", t, t->logc[1]);
  return write_points(f, t) != 0 || ferror(f) ? -1 : 0;
}

/* --- loader ----------------------------------------------------------------------- */

typedef struct Loader {
  const char *file;
  int line;
  char *err;
  size_t errlen;
  RtCalib *c;
  size_t tables_cap; /* c->tables has room for */
  RtTable *cur;      /* table being read, or NULL */
  int cur_line;      /* its `table` line */
  int nv[2];         /* values read so far, fwd and bwd */
} Loader;

static int fail(Loader *L, int line, const char *fmt, ...) {
  int n = snprintf(L->err, L->errlen, "%s:%d: ", L->file, line);
  if (n >= 0 && (size_t)n < L->errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(L->err + n, L->errlen - (size_t)n, fmt, ap);
    va_end(ap);
  }
  return -1;
}

double rt_strtod(const char *s, char **end) {
#if FLT_EVAL_METHOD == 0 /* one rounding per operation (not x87's extended registers) */
  static const double pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const char *p = s;
  int neg = *p == '-', digits = 0, sig = 0, e10 = 0;
  uint64_t m = 0;
  if (*p == '-' || *p == '+') p++;
  if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) return strtod(s, end); /* hex */
  for (; *p >= '0' && *p <= '9' && digits < 64; p++, digits++)
    if (sig || *p != '0') m = 10 * m + (uint64_t)(*p - '0'), sig++; /* wraps past 19: unused */
  if (*p == '.')
    for (p++; *p >= '0' && *p <= '9' && digits < 64; p++, digits++, e10--)
      if (sig || *p != '0') m = 10 * m + (uint64_t)(*p - '0'), sig++;
  if (digits > 0 && digits < 64 && sig <= 19 && m <= (1ull << 53)) {
    int ok = 1;
    if (*p == 'e' || *p == 'E') {
      const char *q = p + 1;
      int eneg = *q == '-', ex = 0, nd = 0;
      if (*q == '-' || *q == '+') q++;
      for (; *q >= '0' && *q <= '9' && nd < 6; q++, nd++) ex = 10 * ex + (*q - '0');
      ok = nd > 0 && nd < 6 && !(*q >= '0' && *q <= '9');
      e10 += eneg ? -ex : ex;
      p = q;
    }
    if (ok && e10 >= -22 && e10 <= 22) {
      double v = (double)m; /* exact: m <= 2^53 */
      v = e10 < 0 ? v / pow10[-e10] : v * pow10[e10];
      if (end) *end = (char *)p;
      return neg ? -v : v;
    }
  }
#endif
  return strtod(s, end);
}

static int parse_pos(const char *s, double *v) {
  char *end;
  errno = 0;
  *v = rt_strtod(s, &end);
  return *end == '\0' && errno == 0 && isfinite(*v) && *v > 0 ? 0 : -1;
}

/* Closes the current table: every declared grid must be complete, and an operator kernel's
 * table must have that kernel's axes. */
static int finish_table(Loader *L) {
  RtTable *t = L->cur;
  if (!t) return 0;
  L->cur = NULL;
  if (t->naxes == 0) return fail(L, L->cur_line, "table %s has no axis", t->name);
  if (!t->logc[0]) return fail(L, L->cur_line, "table %s has no fwd values", t->name);
  for (int w = 0; w < 2; w++)
    if (t->logc[w] && L->nv[w] != t->nvals)
      return fail(L, L->cur_line, "table %s has %d %s values; its axes need %d", t->name, L->nv[w], w ? "bwd" : "fwd",
                  t->nvals);
  int bmm_class = 0;
  if (strcmp(t->kernel, "bmm") == 0 && t->keys[0]) {
    bmm_class = 1;
    int k = 0;
    while (k < RT_BMM_CLASSES && strcmp(t->keys, bmm_class_keys[k]) != 0) k++;
    if (k == RT_BMM_CLASSES)
      return fail(L, L->cur_line, "table %s: bmm's qualifiers are `align=8|16|32|64 thin=k|n`, or none", t->name);
  }
  for (int op = 0; op < RT_NOPS; op++) {
    const RtOpInfo *o = &rt_op_info[op];
    if (strcmp(o->kernel, t->kernel) != 0 || (strcmp(o->keys, t->keys) != 0 && !(bmm_class && op == RT_OP_BMM)))
      continue;
    int ok = o->naxes == t->naxes;
    for (int a = 0; ok && a < t->naxes; a++) ok = strcmp(o->axis[a], t->axis_name[a]) == 0;
    if (!ok) {
      char want[128] = "";
      for (int a = 0; a < o->naxes; a++) {
        strcat(want, " ");
        strcat(want, o->axis[a]);
      }
      return fail(L, L->cur_line, "table %s: kernel %s takes the axes%s, in that order", t->name, t->kernel, want);
    }
  }
  return 0;
}

/* An operator kernel of ops.def or a collective. */
static int known_kernel(const char *k) {
  for (int op = 0; op < RT_NOPS; op++)
    if (strcmp(rt_op_info[op].kernel, k) == 0) return 1;
  return rt_coll_index(k) >= 0;
}

static int start_table(Loader *L, char **w, int nw) {
  if (finish_table(L) != 0) return -1;
  if (nw < 3) return fail(L, L->line, "expected `table KERNEL DTYPE [key=value...]`");
  int dt = rt_dtype_lookup(w[2]);
  if (dt < 0) return fail(L, L->line, "unknown dtype `%s` (fp32, tf32, fp16, bf16, fp8, mxfp8, nvfp4)", w[2]);
  if (strlen(w[1]) >= RT_NAME_MAX) return fail(L, L->line, "kernel name too long");
  if (!known_kernel(w[1])) return fail(L, L->line, "unknown kernel `%s`", w[1]);
  char keys[RT_KEYS_MAX] = "";
  for (int i = 3; i < nw; i++) {
    if (strlen(keys) + strlen(w[i]) + 2 > sizeof keys) return fail(L, L->line, "keys too long");
    if (i > 3) strcat(keys, " ");
    strcat(keys, w[i]);
  }
  if (!mem_grow((void **)&L->c->tables, &L->tables_cap, (size_t)L->c->ntables + 1, sizeof *L->c->tables))
    return fail(L, L->line, "out of memory");
  RtTable *t = &L->c->tables[L->c->ntables];
  memset(t, 0, sizeof *t);
  if (keys_canonical(keys, t->keys, sizeof t->keys) != 0) return fail(L, L->line, "qualifiers must be key=value words");
  strcpy(t->kernel, w[1]);
  t->dtype = (RtDtype)dt;
  table_set_name(t);
  if (rt_table_find(L->c, t->kernel, t->dtype, t->keys))
    return fail(L, L->line, "second table %s in this folder", t->name);
  L->c->ntables++;
  L->cur = t;
  L->cur_line = L->line;
  L->nv[0] = L->nv[1] = 0;
  return 0;
}

static int read_axis(Loader *L, char **w, int nw) {
  RtTable *t = L->cur;
  if (!t) return fail(L, L->line, "`axis` before any `table` line");
  if (t->logc[0] || t->logc[1]) return fail(L, L->line, "`axis` after the values");
  if (t->naxes == RT_MAX_AXES) return fail(L, L->line, "more than %d axes", RT_MAX_AXES);
  if (nw < 3) return fail(L, L->line, "expected `axis NAME v1 v2 ...`");
  if (nw - 2 > RT_MAX_POINTS) return fail(L, L->line, "more than %d points", RT_MAX_POINTS);
  if (strlen(w[1]) >= RT_NAME_MAX) return fail(L, L->line, "axis name too long");
  for (int a = 0; a < t->naxes; a++)
    if (strcmp(t->axis_name[a], w[1]) == 0) return fail(L, L->line, "axis `%s` twice", w[1]);
  int a = t->naxes;
  strcpy(t->axis_name[a], w[1]);
  if (axis_alloc(t, a, nw - 2) != 0) return fail(L, L->line, "out of memory");
  for (int i = 2; i < nw; i++) {
    double v;
    if (parse_pos(w[i], &v) != 0) return fail(L, L->line, "axis point `%s` is not a positive number", w[i]);
    t->logx[a][i - 2] = rt_log(v), t->x[a][i - 2] = v;
    if (i > 2 && !(t->logx[a][i - 2] > t->logx[a][i - 3]))
      return fail(L, L->line, "axis points must increase (`%s`)", w[i]);
  }
  t->npts[a] = nw - 2;
  index_axis(t, a);
  t->naxes++;
  return 0;
}

static int read_values(Loader *L, int which, char **w, int nw) {
  RtTable *t = L->cur;
  if (!t) return fail(L, L->line, "`%s` before any `table` line", w[0]);
  if (t->naxes == 0) return fail(L, L->line, "`%s` before any `axis` line", w[0]);
  if (t->npoints) return fail(L, L->line, "`%s` after `point` lines", w[0]);
  if (!t->logc[which]) {
    if (table_strides(t) != 0)
      return fail(L, L->line, "table %s: its axes make more than %d values", t->name, RT_MAX_VALUES);
    t->logc[which] = malloc((size_t)t->nvals * sizeof(double));
    if (!t->logc[which]) return fail(L, L->line, "out of memory");
  }
  for (int i = 1; i < nw; i++) {
    double v;
    if (parse_pos(w[i], &v) != 0) return fail(L, L->line, "correction `%s` is not a positive number", w[i]);
    if (L->nv[which] == t->nvals) return fail(L, L->line, "more %s values than the axes' %d", w[0], t->nvals);
    t->logc[which][L->nv[which]++] = rt_log(v);
  }
  return 0;
}

/* `point x1 .. xN c [c]`: after the values, which tell whether it has a bwd correction. */
static int read_point(Loader *L, char **w, int nw) {
  RtTable *t = L->cur;
  if (!t) return fail(L, L->line, "`point` before any `table` line");
  if (!t->logc[0]) return fail(L, L->line, "`point` before the values");
  int nc = 1 + (t->logc[1] != NULL);
  if (nw - 1 != t->naxes + nc)
    return fail(L, L->line, "a point of table %s is %d coordinates and %d correction%s, not %d numbers", t->name,
                t->naxes, nc, nc > 1 ? "s" : "", nw - 1);
  double x[RT_MAX_AXES], c[2] = {0, 0};
  for (int i = 1; i < nw; i++) {
    double v;
    if (parse_pos(w[i], &v) != 0)
      return fail(L, L->line, "%s `%s` is not a positive number", i <= t->naxes ? "point coordinate" : "correction",
                  w[i]);
    if (i <= t->naxes)
      x[i - 1] = v;
    else
      c[i - 1 - t->naxes] = rt_log(v);
  }
  int rc = rt_table_add_point(t, x, c);
  if (rc == 1) return fail(L, L->line, "point `%s ...` twice in table %s", w[1], t->name);
  if (rc != 0)
    return fail(L, L->line, "out of memory, or more than %d points in table %s", RT_MAX_TABLE_POINTS, t->name);
  return 0;
}

static int load_line(Loader *L, char *s) {
  char *hash = strchr(s, '#');
  if (hash) *hash = '\0';
  char *w[RT_MAX_POINTS + 3];
  int nw = 0;
  for (char *p = s;;) { /* words split at spaces, tabs and line ends, as strtok would */
    while (*p == ' ' || *p == '\t' || *p == '\r' || *p == '\n') p++;
    if (!*p) break;
    if (nw == (int)(sizeof w / sizeof w[0])) return fail(L, L->line, "too many words on a line");
    w[nw++] = p;
    while (*p && *p != ' ' && *p != '\t' && *p != '\r' && *p != '\n') p++;
    if (*p) *p++ = '\0';
  }
  if (nw == 0) return 0;
  if (strcmp(w[0], "table") == 0) return start_table(L, w, nw);
  if (strcmp(w[0], "axis") == 0) return read_axis(L, w, nw);
  if (strcmp(w[0], "fwd") == 0) return read_values(L, 0, w, nw);
  if (strcmp(w[0], "bwd") == 0) return read_values(L, 1, w, nw);
  if (strcmp(w[0], "point") == 0) return read_point(L, w, nw);
  return fail(L, L->line, "unknown line `%s` (table, axis, fwd, bwd, point)", w[0]);
}

/* The tables of f, which messages call path. */
static int load_stream(Loader *L, FILE *f, const char *path) {
  L->file = path;
  L->line = 0;
  L->cur = NULL;
  int before = L->c->ntables;
  char *buf = NULL;
  size_t cap = 0;
  int rc = 0;
  while (rc == 0 && getline(&buf, &cap, f) >= 0) {
    L->line++;
    rc = load_line(L, buf);
  }
  free(buf);
  if (rc == 0) rc = finish_table(L);
  if (rc == 0 && L->c->ntables == before) rc = fail(L, L->line, "no table in this file");
  return rc;
}

static int load_file(Loader *L, const char *path) {
  FILE *f = fopen(path, "r");
  if (!f) return L->file = path, fail(L, 0, "cannot open: %s", strerror(errno));
  int rc = load_stream(L, f, path);
  fclose(f);
  return rc;
}

void rt_calib_free(RtCalib *c) {
  if (!c) return;
  for (int i = 0; i < c->ntables; i++) rt_table_release(&c->tables[i]);
  free(c->tables);
  free(c->layout);
  free(c);
}

/* Resolves every operator's table once, so that kernels index instead of searching.  A bf16
 * operator without a bf16 table uses the fp16 one: the tables correct the physics model's
 * efficiency, and bf16 and fp16 run on the same tensor cores at the same rate with the same
 * element size on every GPU that has tables (A100, H100, GH200: peak_bf16 == peak_fp16). */
static void resolve_ops(RtCalib *c) {
  for (int op = 0; op < RT_NOPS; op++)
    for (int dt = 0; dt < RT_NDTYPES; dt++)
      c->op[op][dt] = rt_table_find(c, rt_op_info[op].kernel, (RtDtype)dt, rt_op_info[op].keys);
  for (int op = 0; op < RT_NOPS; op++)
    if (!c->op[op][RT_BF16]) c->op[op][RT_BF16] = c->op[op][RT_FP16];
  for (int k = 0; k < RT_BMM_CLASSES; k++) {
    for (int dt = 0; dt < RT_NDTYPES; dt++) c->bmm[k][dt] = rt_table_find(c, "bmm", (RtDtype)dt, bmm_class_keys[k]);
    /* A bf16 bmm in a folder with no bf16 bmm tables at all uses the fp16 ones, as above;
     * one with a bf16 `bmm` table keeps it for every class fp16 has and bf16 has not. */
    if (!c->bmm[k][RT_BF16] && c->op[RT_OP_BMM][RT_BF16] == c->op[RT_OP_BMM][RT_FP16])
      c->bmm[k][RT_BF16] = c->bmm[k][RT_FP16];
  }
}

RtCalib *rt_calib_load(const char *dir, char *err, size_t errlen) {
  char dummy[1];
  if (!err || errlen == 0) err = dummy, errlen = sizeof dummy;
  err[0] = '\0';
  if (!dir) {
    snprintf(err, errlen, "(null):0: no folder given");
    return NULL;
  }
  /* The names sorted: the load order (and so a duplicate's message) must not depend on the
   * file system. */
  char **names;
  int n = dir_list(dir, ".tbl", &names);
  if (n == -1) {
    snprintf(err, errlen, "%s:0: cannot open folder: %s", dir, strerror(errno));
    return NULL;
  }
  RtCalib *c = n >= 0 ? calloc(1, sizeof *c) : NULL;
  if (!c) snprintf(err, errlen, "%s:0: out of memory", dir);
  Loader L = {.err = err, .errlen = errlen, .c = c};
  for (int i = 0; c && i < n; i++) {
    char *path = malloc(strlen(dir) + strlen(names[i]) + 2);
    if (path)
      sprintf(path, "%s/%s", dir, names[i]);
    else
      snprintf(err, errlen, "%s:0: out of memory", dir);
    if (!path || load_file(&L, path) != 0) {
      rt_calib_free(c);
      c = NULL;
    }
    free(path);
  }
  dir_list_free(names, n);
  if (c && c->ntables == 0) {
    snprintf(err, errlen, "%s:0: no .tbl file in this folder", dir);
    rt_calib_free(c);
    return NULL;
  }
  if (c) resolve_ops(c);
  if (c && resolve_layouts(c) != 0) {
    snprintf(err, errlen, "%s:0: out of memory", dir);
    rt_calib_free(c);
    return NULL;
  }
  return c;
}

/* --- saving ----------------------------------------------------------------------- */

/* Whether u, loaded from the text written for t, is t: the same grid exactly, the same
 * points, and values within the 4 digits written (relatively). */
static int same_table(const RtTable *u, const RtTable *t) {
  if (strcmp(u->name, t->name) != 0 || u->naxes != t->naxes || u->nvals != t->nvals || !u->logc[1] != !t->logc[1] ||
      u->npoints != t->npoints)
    return 0;
  for (int a = 0; a < t->naxes; a++) {
    if (strcmp(u->axis_name[a], t->axis_name[a]) != 0 || u->npts[a] != t->npts[a]) return 0;
    for (int i = 0; i < t->npts[a]; i++)
      if (u->x[a][i] != t->x[a][i]) return 0;
  }
  for (int w = 0; w < 2 && t->logc[w]; w++)
    for (int i = 0; i < t->nvals; i++)
      if (!(fabs(u->logc[w][i] - t->logc[w][i]) < 1e-3)) return 0;
  return 1;
}

/* The text of t as rt_table_write() writes it, into *text (malloc'ed, n bytes), once it has
 * loaded back as t; 0, or -1 with "PATH:LINE: message" in err (*text NULL). */
static int checked_text(const RtTable *t, const char *path, const char *header, char **text, size_t *n, char *err,
                        size_t errlen) {
  char msg[1024] = "";
  *text = NULL, *n = 0;
  FILE *f = open_memstream(text, n);
  int rc = f ? rt_table_write(f, t, header) : -1;
  if (f && fclose(f) != 0) rc = -1;
  RtCalib *c = rc == 0 ? calloc(1, sizeof *c) : NULL;
  FILE *in = c ? fmemopen(*text, *n, "r") : NULL;
  if (!in) {
    snprintf(err, errlen, "%s:0: cannot write: out of memory", path);
    rc = -1;
  } else {
    Loader L = {.err = msg, .errlen = sizeof msg, .c = c};
    rc = load_stream(&L, in, path);
    fclose(in);
    if (rc == 0 && (c->ntables != 1 || !same_table(&c->tables[0], t)))
      rc = -1,
      snprintf(msg, sizeof msg, "%s:0: the text written for table %s reads back as another table", path, t->name);
    if (rc != 0) snprintf(err, errlen, "%s; the table is not written", msg);
  }
  rt_calib_free(c);
  if (rc != 0) free(*text), *text = NULL;
  return rc;
}

int rt_table_check(const RtTable *t, const char *path, char *err, size_t errlen) {
  char *text;
  size_t n;
  int rc = checked_text(t, path, NULL, &text, &n, err, errlen);
  free(text);
  return rc;
}

int rt_table_save(const RtTable *t, const char *path, const char *header, char *err, size_t errlen) {
  char *text;
  size_t n;
  const char *why;
  if (checked_text(t, path, header, &text, &n, err, errlen) != 0) return -1;
  int rc = atomic_write(path, text, n, &why);
  if (rc != 0) snprintf(err, errlen, "%s:0: cannot write: %s", path, why);
  free(text);
  return rc;
}

const char *rt_time_str(double sec, char *buf, size_t len) {
  if (sec < 1e-3)
    snprintf(buf, len, "%.3g us", sec * 1e6);
  else if (sec < 1)
    snprintf(buf, len, "%.3g ms", sec * 1e3);
  else
    snprintf(buf, len, "%.3g s", sec);
  return buf;
}
