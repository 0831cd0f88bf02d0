/* graph.c - building, evaluating and printing the cost graph (see graph.h). */
#include "graph.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

static const char *const gop_names[GN_NOPS] = {"const", "input", "add",   "sub", "mul", "div",    "mod",  "min",
                                               "max",   "ceil",  "floor", "eq",  "ne",  "lt",     "le",   "gt",
                                               "ge",    "and",   "or",    "not", "neg", "select", "call", "result"};

const char *gop_name(GOp op) { return op < GN_NOPS ? gop_names[op] : "?"; }

void graph_init(Graph *g, const void *gpu, const void *cluster) {
  memset(g, 0, sizeof *g);
  g->gpu = gpu;
  g->cluster = cluster;
}

void graph_free(Graph *g) {
  free(g->n);
  free(g->args);
  free(g->hash);
  free(g->out);
  memset(g, 0, sizeof *g);
}

/* --- hash-consing ------------------------------------------------------------------ */

static uint64_t mix(uint64_t h, uint64_t x) {
  h ^= x + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2);
  return h;
}

static uint64_t node_hash(const Graph *g, const GNode *x) {
  uint64_t h = mix(x->op, x->kernel);
  if (x->op == GN_CONST) {
    uint64_t bits;
    memcpy(&bits, &x->k, sizeof bits);
    return mix(h, bits);
  }
  h = mix(mix(mix(h, (uint64_t)x->a), (uint64_t)x->b), (uint64_t)x->c);
  if (x->op == GN_CALL)
    for (int i = 0; i < x->nargs; i++) h = mix(h, (uint64_t)g->args[x->arg0 + i]);
  return h;
}

static bool node_eq(const Graph *g, const GNode *x, const GNode *y) {
  if (x->op != y->op || x->kernel != y->kernel || x->a != y->a || x->b != y->b || x->c != y->c) return false;
  if (x->op == GN_CONST) return memcmp(&x->k, &y->k, sizeof x->k) == 0;
  if (x->op == GN_CALL) {
    if (x->nargs != y->nargs) return false;
    for (int i = 0; i < x->nargs; i++)
      if (g->args[x->arg0 + i] != g->args[y->arg0 + i]) return false;
  }
  return true;
}

static void rehash(Graph *g) {
  unsigned cap = g->hcap ? 2 * g->hcap : 256;
  free(g->hash);
  g->hash = xmalloc(cap * sizeof *g->hash);
  memset(g->hash, 0xff, cap * sizeof *g->hash);
  g->hcap = cap;
  for (int i = 0; i < g->nn; i++) {
    if (g->n[i].op == GN_RESULT) continue;
    unsigned j = (unsigned)node_hash(g, &g->n[i]) & (cap - 1);
    while (g->hash[j] >= 0) j = (j + 1) & (cap - 1);
    g->hash[j] = i;
  }
}

static GId push(Graph *g, GNode x) {
  XGROW(g->n, g->nn + 1, g->capn);
  g->n[g->nn] = x;
  return g->nn++;
}

/* The existing node equal to x, or x appended (with its results for a call). */
static GId intern(Graph *g, GNode x) {
  if (2 * (unsigned)(g->nn + RT_KERNEL_NOUT) >= g->hcap) rehash(g);
  unsigned j = (unsigned)node_hash(g, &x) & (g->hcap - 1);
  for (; g->hash[j] >= 0; j = (j + 1) & (g->hcap - 1))
    if (node_eq(g, &g->n[g->hash[j]], &x)) return g->hash[j];
  GId id = push(g, x);
  g->hash[j] = id;
  if (x.op == GN_CALL)
    for (int i = 1; i < RT_KERNEL_NOUT; i++) push(g, (GNode){.op = GN_RESULT, .a = i, .b = id, .c = -1});
  return id;
}

/* --- constructors ------------------------------------------------------------------ */

GId g_const(Graph *g, double x) { return intern(g, (GNode){.op = GN_CONST, .a = -1, .b = -1, .c = -1, .k = x}); }

GId g_input(Graph *g, int index) {
  if (index >= g->ninputs) g->ninputs = index + 1;
  return intern(g, (GNode){.op = GN_INPUT, .a = index, .b = -1, .c = -1});
}

bool g_is_const(const Graph *g, GId a, double *value) {
  if (a < 0 || a >= g->nn || g->n[a].op != GN_CONST) return false;
  if (value) *value = g->n[a].k;
  return true;
}

static double apply(GOp op, double x, double y, double z) {
  switch (op) {
  case GN_ADD: return x + y;
  case GN_SUB: return x - y;
  case GN_MUL: return x * y;
  case GN_DIV: return x / y;
  case GN_MOD: return fmod(x, y);
  case GN_MIN: return x < y ? x : y;
  case GN_MAX: return x > y ? x : y;
  case GN_CEIL: return ceil(x);
  case GN_FLOOR: return floor(x);
  case GN_EQ: return x == y;
  case GN_NE: return x != y;
  case GN_LT: return x < y;
  case GN_LE: return x <= y;
  case GN_GT: return x > y;
  case GN_GE: return x >= y;
  case GN_AND: return x != 0 && y != 0;
  case GN_OR: return x != 0 || y != 0;
  case GN_NOT: return x == 0;
  case GN_NEG: return -x;
  case GN_SELECT: return x != 0 ? y : z;
  default: return NAN;
  }
}

GId g_bin(Graph *g, GOp op, GId a, GId b) {
  double x = 0, y = 0;
  bool ca = g_is_const(g, a, &x), cb = g_is_const(g, b, &y);
  if (ca && cb) return g_const(g, apply(op, x, y, 0));
  /* Identities that hold for every finite and infinite operand. */
  if ((op == GN_ADD && ca && x == 0) || (op == GN_MUL && ca && x == 1)) return b;
  if (((op == GN_ADD || op == GN_SUB) && cb && y == 0) || ((op == GN_MUL || op == GN_DIV) && cb && y == 1)) return a;
  /* a false conjunct or a true disjunct decides alone, NaN or not (apply's && and ||) */
  if (op == GN_AND && ((ca && x == 0) || (cb && y == 0))) return g_const(g, 0);
  if (op == GN_OR && ((ca && x != 0) || (cb && y != 0))) return g_const(g, 1);
  if ((op == GN_ADD || op == GN_MUL || op == GN_MIN || op == GN_MAX || op == GN_EQ || op == GN_NE || op == GN_AND ||
       op == GN_OR) &&
      a > b) { /* commutative: one canonical order */
    GId t = a;
    a = b;
    b = t;
  }
  return intern(g, (GNode){.op = (unsigned char)op, .a = a, .b = b, .c = -1});
}

GId g_un(Graph *g, GOp op, GId a) {
  double x;
  if (g_is_const(g, a, &x)) return g_const(g, apply(op, x, 0, 0));
  return intern(g, (GNode){.op = (unsigned char)op, .a = a, .b = -1, .c = -1});
}

GId g_select(Graph *g, GId cond, GId a, GId b) {
  double x;
  if (g_is_const(g, cond, &x)) return x != 0 ? a : b;
  if (a == b) return a;
  return intern(g, (GNode){.op = GN_SELECT, .a = cond, .b = a, .c = b});
}

GId g_call(Graph *g, RtKernel k, const GId *args, int nargs, const char *label) {
  XGROW(g->args, g->nargs + nargs, g->capargs);
  int arg0 = g->nargs;
  memcpy(g->args + arg0, args, (size_t)nargs * sizeof *args);
  g->nargs += nargs;
  int before = g->nn;
  /* clang-format off */
  GId id = intern(g, (GNode){.op = GN_CALL, .kernel = (unsigned char)k, .nargs = (unsigned short)nargs, .a = -1,
                             .b = -1, .c = -1, .arg0 = arg0, .label = label});
  if (g->nn == before) g->nargs = arg0;   /* shared with an earlier identical call */
  /* clang-format on */
  return id;
}

void graph_output(Graph *g, const char *name, GId id) {
  for (int i = 0; i < g->nout; i++)
    if (!strcmp(g->out[i].name, name)) {
      g->out[i].id = id;
      return;
    }
  XGROW(g->out, g->nout + 1, g->capout);
  g->out[g->nout++] = (GOutput){name, id};
}

GId graph_find_output(const Graph *g, const char *name) {
  for (int i = 0; i < g->nout; i++)
    if (!strcmp(g->out[i].name, name)) return g->out[i].id;
  return -1;
}

/* --- evaluation -------------------------------------------------------------------- */

static inline void eval_node(const Graph *g, int i, const double *inputs, double *vals) {
  const GNode *x = &g->n[i];
  switch ((GOp)x->op) {
  case GN_CONST: vals[i] = x->k; break;
  case GN_INPUT: vals[i] = inputs[x->a]; break;
  case GN_RESULT: break; /* written by its call */
  case GN_CALL: {
    double args[RT_KERNEL_MAXARGS];
    const RtKernelInfo *ki = &rt_kernels[x->kernel];
    for (int j = 0; j < x->nargs; j++) args[j] = vals[g->args[x->arg0 + j]];
    const void *target = ki->target == 'G' ? g->gpu : ki->target == 'C' ? g->cluster : NULL;
    ki->fn(target, args, vals + i);
    break;
  }
  case GN_SELECT: vals[i] = vals[x->a] != 0 ? vals[x->b] : vals[x->c]; break;
  default: vals[i] = apply((GOp)x->op, vals[x->a], x->b >= 0 ? vals[x->b] : 0, 0); break;
  }
}

void graph_eval(const Graph *g, const double *inputs, double *vals) {
  for (int i = 0; i < g->nn; i++) eval_node(g, i, inputs, vals);
}

int graph_eval_level(const Graph *g, const GLevel *lv, const double *inputs, double *vals) {
  for (int i = 0; i < lv->nguard; i++) eval_node(g, lv->guard[i], inputs, vals);
  for (int i = 0; i < lv->nchecks; i++)
    if (vals[lv->checks[i]] == 0) return 1 + i;
  for (int i = 0; i < lv->nbody; i++) eval_node(g, lv->body[i], inputs, vals);
  return 0;
}

int graph_operands(const Graph *g, GId i, GId *ops) {
  const GNode *x = &g->n[i];
  int n = 0;
  switch ((GOp)x->op) {
  case GN_CONST:
  case GN_INPUT: break;
  case GN_RESULT: ops[n++] = x->b; break;
  case GN_CALL:
    for (int j = 0; j < x->nargs; j++) ops[n++] = g->args[x->arg0 + j];
    break;
  default:
    ops[n++] = x->a;
    if (x->b >= 0) ops[n++] = x->b;
    if (x->c >= 0) ops[n++] = x->c;
    break;
  }
  return n;
}
