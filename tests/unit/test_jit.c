/* test_jit.c - the JIT (compiler/jit/cg_llvm.c, jit.c) against the interpreter (graph.c), bit for
 * bit (architecture.md, decision 1).
 *
 *   random_levels     thousands of seeded random graphs (every GOp, NaN, infinities, -0,
 *                     mod by zero, selects, every kernel with plausible and implausible
 *                     arguments), split into random levels with guards and checks (some
 *                     fail), evaluated level by level as a sweep does, with new inputs for
 *                     the innermost level; with and without JIT_STORE_ALL, chunked small and
 *                     not, compiled in two threads: return codes and every value the JIT
 *                     stores agree
 *   examples          every scenario of examples/ (recursively): graph_eval against one
 *                     level of all nodes
 *   generated         at least 1000 random valid scenarios (jit_gen.h), lowered, compared
 *   stored_nodes      without JIT_STORE_ALL only what is read across functions and the
 *                     outputs are written; constants are immediates
 *   threads           level functions called from several threads at once
 *   ir_text           JIT_IR / JIT_IR_OPT, chunk functions, kernel declarations */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <dirent.h>
#include <math.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clusters.h"
#include "front/diag.h"
#include "lower/graph.h"
#include "lower/hw.h"
#include "jit/jit.h"
#include "llmp_kernels.h"
#include "lower/lower.h"
#include "front/sema.h"
#include "sorted.h"

#include "support.h"
#include "jit_gen.h"

/* The same bits, or both NaN (counted in *nan_bits when their bits differ).  Which
 * operand's NaN an operation returns when both are NaN (+NaN from NAN, -NaN from x86's
 * invalid operations) is left open by C, IEEE 754 and LLVM: gcc's code for `x + y` keeps
 * x's, LLVM's x86 backend may commute the instruction and keep y's.  Every other value, -0
 * and the infinities included, must match to the bit. */
static bool same_value(double a, double b, long *nan_bits) {
  if (memcmp(&a, &b, sizeof a) == 0) return true;
  if (isnan(a) && isnan(b)) {
    ++*nan_bits;
    return true;
  }
  return false;
}

/* Index of the first node whose value differs between a and b among those the JIT stores
 * (all with JIT_STORE_ALL), or -1. */
static int first_difference(const Jit *j, const double *a, const double *b, int nn, long *nan_bits) {
  for (int i = 0; i < nn; i++)
    if (jit_stored(j, i) && !same_value(a[i], b[i], nan_bits)) return i;
  return -1;
}

static double *new_vals(int nn, double fill) {
  double *v = malloc(((size_t)nn + 1) * sizeof *v);
  assert_non_null(v);
  for (int i = 0; i <= nn; i++) v[i] = fill;
  return v;
}

/* --- random graphs ------------------------------------------------------------------------ */

static const double specials[] = {NAN, -NAN,  INFINITY, -INFINITY, 0.0,    -0.0, 1,    -1,  0.5, -2.5,      3,
                                  7,   1e308, -1e308,   5e-324,    1e-300, 2,    4096, 1e9, 0.1, 12345.678, -3};

static double random_value(Rng *r) {
  if (rng_chance(r, 0.5)) return RNG_PICK(r, specials);
  return (double)(int64_t)(rng_next(r) % 2000001) / 1000.0 - 1000.0;
}

/* A plausible argument i of kernel k (dtypes, shapes, group sizes, schedules). */
static double plausible_arg(Rng *r, RtKernel k, int i) {
  static const double sizes[] = {1, 2, 8, 64, 128, 512, 1000, 4096, 12288, 50257, 1 << 20};
  if (k == RTK_PIPELINE || k == RTK_PIPELINE_MAKESPAN) {
    switch (i) {
    case 0: return rng_int(r, 4);                 /* schedule */
    case 1: return 1 + rng_int(r, 8);             /* stages */
    case 2: return 1 + rng_int(r, 2);             /* chunks */
    case 3: return 8 * (1 + rng_int(r, 4));       /* micro-batches */
    case 4: return 8 * (1 + rng_int(r, 6));       /* layers */
    case 5: return rng_int(r, 2);                 /* balanced */
    case 15: return 0;                            /* layout: one layer block */
    default: return 1e-3 * (1 + rng_int(r, 100)); /* seconds */
    }
  }
  if (rt_kernels[k].target == 'C') {
    if (i == 0) return RNG_PICK(r, sizes) * 1024;               /* bytes */
    return RNG_PICK(r, ((const double[]){1, 2, 4, 8, 16, 64})); /* size, stride */
  }
  if (i == 0) return rng_int(r, RT_NDTYPES);
  return RNG_PICK(r, sizes);
}

/* The pipeline's counts (schedule .. balanced) are rejected small integers: large ones
 * would run the simulation for long, and NaN or huge ones overflow in the kernel's
 * conversions (rt_pipeline_of_args: (int)a[1] * (int)a[2] before the range check).  Every
 * other argument may be anything. */
static double implausible_arg(Rng *r, RtKernel k, int i) {
  static const double rejected[] = {-1, -3, 0, -0.0, 0.5};
  if ((k == RTK_PIPELINE || k == RTK_PIPELINE_MAKESPAN) && i <= 5) return RNG_PICK(r, rejected);
  return random_value(r);
}

typedef struct Pool {
  GId *id;
  int n, cap;
} Pool;

static void pool_add(Pool *p, GId id) {
  if (p->n == p->cap) {
    p->cap = p->cap ? 2 * p->cap : 64;
    p->id = realloc(p->id, (size_t)p->cap * sizeof *p->id);
    assert_non_null(p->id);
  }
  p->id[p->n++] = id;
}

/* An operand: mostly a recent node, so chains get deep. */
static GId pick(Rng *r, const Pool *p) {
  int span = p->n < 12 ? p->n : 12;
  return rng_chance(r, 0.6) ? p->id[p->n - 1 - rng_int(r, span)] : p->id[rng_int(r, p->n)];
}

static void random_call(Rng *r, Graph *g, Pool *p) {
  RtKernel k = (RtKernel)rng_int(r, RTK_N);
  GId args[RT_KERNEL_MAXARGS];
  bool wild = rng_chance(r, 0.3);
  for (int i = 0; i < rt_kernels[k].nargs; i++) {
    bool free_arg = !((k == RTK_PIPELINE || k == RTK_PIPELINE_MAKESPAN) && i <= 5);
    if (wild && free_arg && rng_chance(r, 0.5))
      args[i] = pick(r, p);
    else
      args[i] = g_const(g, wild && rng_chance(r, 0.3) ? implausible_arg(r, k, i) : plausible_arg(r, k, i));
  }
  GId id = g_call(g, k, args, rt_kernels[k].nargs, "random");
  for (int s = 0; s < RT_KERNEL_NOUT; s++) pool_add(p, id + s);
}

static const char *const output_names[] = {"o0", "o1", "o2", "o3", "o4", "o5"};

static void random_graph(Rng *r, Graph *g, const RtCluster *cl, int size, int ninputs) {
  graph_init(g, cl->gpu, cl);
  Pool p = {0};
  for (int i = 0; i < ninputs; i++) pool_add(&p, g_input(g, i));
  for (int i = 0; i < 3; i++) pool_add(&p, g_const(g, random_value(r)));
  while (g->nn < size) {
    int what = rng_int(r, 100);
    if (what < 8) {
      random_call(r, g, &p);
    } else if (what < 14) {
      pool_add(&p, rng_chance(r, 0.5) ? g_const(g, random_value(r)) : g_input(g, rng_int(r, ninputs)));
    } else if (what < 22) {
      pool_add(&p, g_select(g, pick(r, &p), pick(r, &p), pick(r, &p)));
    } else if (what < 34) {
      static const GOp un[] = {GN_CEIL, GN_FLOOR, GN_NOT, GN_NEG};
      pool_add(&p, g_un(g, RNG_PICK(r, un), pick(r, &p)));
    } else {
      GOp op = (GOp)(GN_ADD + rng_int(r, GN_OR - GN_ADD + 1));
      if (op == GN_CEIL || op == GN_FLOOR) op = GN_MOD;
      pool_add(&p, g_bin(g, op, pick(r, &p), pick(r, &p)));
    }
  }
  for (int i = 0; i < (int)(sizeof output_names / sizeof *output_names); i++)
    if (rng_chance(r, 0.6)) graph_output(g, output_names[i], p.id[rng_int(r, p.n)]);
  free(p.id);
}

/* --- random levels ------------------------------------------------------------------------ */

enum { MAXLEVELS = 4 };

typedef struct Split {
  GLevel lv[MAXLEVELS];
  int n;
  GId *ids; /* the levels' guard and body lists */
  GId *checks;
} Split;

static int operands(const Graph *g, GId id, GId *ops) {
  const GNode *x = &g->n[id];
  int n = 0;
  if (x->op == GN_CALL) {
    for (int j = 0; j < x->nargs; j++) ops[n++] = g->args[x->arg0 + j];
  } else if (x->op != GN_CONST && x->op != GN_INPUT && x->op != GN_RESULT) {
    GId abc[3] = {x->a, x->b, x->c};
    for (int k = 0; k < 3; k++)
      if (abc[k] >= 0) ops[n++] = abc[k];
  }
  return n;
}

/* Each node goes to a level no earlier than its operands' (a call's results with it); some
 * non-constant nodes to none (both evaluators then read vals as they are).  Arithmetic
 * nodes whose operands are in earlier levels or the guard may form the guard (a constant
 * too: the interpreter reads constants from vals, so one must be evaluated before it is
 * read); checks are guard nodes or nodes of earlier levels. */
static void random_split(Rng *r, const Graph *g, Split *s) {
  int nn = g->nn;
  int *level = malloc((size_t)nn * sizeof *level);
  bool *guard = calloc((size_t)nn, sizeof *guard);
  s->ids = malloc(2 * ((size_t)nn + 1) * sizeof *s->ids);
  s->checks = malloc((size_t)(3 * MAXLEVELS) * sizeof *s->checks);
  assert_true(level && guard && s->ids && s->checks);
  s->n = 1 + rng_int(r, MAXLEVELS);
  for (int i = 0; i < nn; i++) {
    const GNode *x = &g->n[i];
    GId ops[RT_KERNEL_MAXARGS];
    int lvl = 0, nops = operands(g, i, ops);
    for (int k = 0; k < nops; k++)
      if (level[ops[k]] > lvl) lvl = level[ops[k]];
    if (x->op == GN_RESULT)
      lvl = level[x->b];
    else if (rng_chance(r, 0.05) && lvl + 1 < s->n)
      lvl++;
    level[i] = lvl;
    if (x->op == GN_CALL || x->op == GN_RESULT || !rng_chance(r, 0.4)) continue;
    bool ok = true;
    for (int k = 0; k < nops && ok; k++) ok = level[ops[k]] < lvl || guard[ops[k]];
    guard[i] = ok;
  }
  GId *next = s->ids, *check = s->checks;
  for (int k = 0; k < s->n; k++) {
    GLevel *lv = &s->lv[k];
    lv->guard = next;
    for (int i = 0; i < nn; i++)
      if (level[i] == k && guard[i]) *next++ = i;
    lv->nguard = (int)(next - lv->guard);
    lv->checks = check;
    for (int c = rng_int(r, 4); c > 0; c--) {
      GId cand = rng_int(r, nn);
      if ((guard[cand] && level[cand] == k) || level[cand] < k) *check++ = cand;
    }
    lv->nchecks = (int)(check - lv->checks);
    lv->body = next;
    for (int i = 0; i < nn; i++)
      if (level[i] == k && !guard[i] && (g->n[i].op == GN_CONST || !rng_chance(r, 0.02))) *next++ = i;
    lv->nbody = (int)(next - lv->body);
  }
  free(level);
  free(guard);
}

typedef struct Tally {
  int graphs, nodes, evaluations, failed_checks, chunked, store_all;
  int calls[RTK_N]; /* kernel calls compared, per kernel */
  long nan_bits;    /* NaNs whose bits differ (same_value) */
} Tally;

typedef struct Mismatch {
  char msg[200]; /* empty: none */
} Mismatch;

/* Runs levels 0..n-1 as a sweep's first point, then (if no check stopped it) the innermost
 * level again for a second point with a new input, in both evaluators; compares the return
 * codes and the values after every level.  Fills m on the first difference. */
static void compare_levels(Rng *r, const Graph *g, const Split *s, const Jit *j, int ninputs, Tally *t, Mismatch *m) {
  double in_i[8], in_j[8];
  for (int i = 0; i < ninputs; i++) in_i[i] = in_j[i] = random_value(r);
  double *want = new_vals(g->nn, -7.25), *got = new_vals(g->nn, -7.25);
  bool stopped = false;
  for (int point = 0; point < 2 && !stopped && !m->msg[0]; point++) {
    if (point == 1) {
      int x = rng_int(r, ninputs);
      in_i[x] = in_j[x] = random_value(r);
    }
    for (int k = point == 0 ? 0 : s->n - 1; k < s->n; k++) {
      int rw = graph_eval_level(g, &s->lv[k], in_i, want);
      int rg = jit_level(j, k)(in_j, got);
      t->evaluations++;
      int d = rw == rg ? first_difference(j, want, got, g->nn, &t->nan_bits) : -1;
      if (rw != rg) {
        snprintf(m->msg, sizeof m->msg, "level %d of %d: interpreter returns %d, JIT %d", k, s->n, rw, rg);
      } else if (d >= 0) {
        snprintf(m->msg, sizeof m->msg, "level %d of %d: node %d (%s): interpreter %a, JIT %a", k, s->n, d,
                 gop_name((GOp)g->n[d].op), want[d], got[d]);
      }
      if (m->msg[0]) break;
      if (rw) { /* a check failed: the sweep skips this point */
        t->failed_checks++;
        stopped = true;
        break;
      }
    }
  }
  for (int i = 0; i < g->nout && !m->msg[0]; i++)
    if (!jit_stored(j, g->out[i].id)) snprintf(m->msg, sizeof m->msg, "output %s not stored", g->out[i].name);
  free(want);
  free(got);
}

/* One random graph (seeded), split, compiled with random options and compared. */
static void random_case(uint64_t seed, Tally *t, Mismatch *m) {
  static const char *const systems[] = {"perlmutter", "vista", "selene", "eos"};
  static const int chunks[] = {0, 0, 0, 0, 0, 0, 5, 20};
  Rng r = {seed};
  const RtCluster *cl = rt_cluster_builtin(RNG_PICK(&r, systems));
  int ninputs = 1 + rng_int(&r, 8);
  Graph g;
  random_graph(&r, &g, cl, 20 + rng_int(&r, 80), ninputs);
  Split s;
  random_split(&r, &g, &s);
  JitOptions o = {rng_chance(&r, 0.5) ? JIT_STORE_ALL : 0, RNG_PICK(&r, chunks)};
  char *err = NULL;
  Jit *j = jit_compile_opts(&g, s.lv, s.n, &o, &err);
  if (!j) {
    snprintf(m->msg, sizeof m->msg, "%s", err);
    free(err);
  } else {
    compare_levels(&r, &g, &s, j, ninputs, t, m);
    jit_free(j);
  }
  t->graphs++;
  t->nodes += g.nn;
  t->chunked += o.chunk_nodes > 0;
  t->store_all += o.flags & JIT_STORE_ALL;
  for (int i = 0; i < g.nn; i++)
    if (g.n[i].op == GN_CALL) t->calls[g.n[i].kernel]++;
  free(s.ids);
  free(s.checks);
  graph_free(&g);
}

typedef struct Worker {
  int first, step, last; /* seeds first, first+step, ... <= last */
  uint64_t failed_seed;
  Tally t;
  Mismatch m;
} Worker;

static void *random_worker(void *arg) {
  Worker *w = arg;
  for (int seed = w->first; seed <= w->last && !w->m.msg[0]; seed += w->step) {
    w->failed_seed = (uint64_t)seed;
    random_case((uint64_t)seed, &w->t, &w->m);
  }
  return NULL;
}

/* Two threads, each compiling and comparing every other seed: the JIT compiles in several
 * threads at once. */
TEST(random_levels) {
  Worker w[2] = {{.first = 1, .step = 2, .last = 2000}, {.first = 2, .step = 2, .last = 2000}};
  pthread_t th[2];
  for (int i = 0; i < 2; i++) assert_int_equal(pthread_create(&th[i], NULL, random_worker, &w[i]), 0);
  for (int i = 0; i < 2; i++) assert_int_equal(pthread_join(th[i], NULL), 0);
  Tally t = w[0].t;
  for (int i = 0; i < 2; i++) {
    if (w[i].m.msg[0]) fail_msg("random graph of seed %llu: %s", (unsigned long long)w[i].failed_seed, w[i].m.msg);
    if (i == 0) continue;
    t.graphs += w[i].t.graphs, t.nodes += w[i].t.nodes, t.evaluations += w[i].t.evaluations;
    t.failed_checks += w[i].t.failed_checks, t.chunked += w[i].t.chunked, t.store_all += w[i].t.store_all;
    t.nan_bits += w[i].t.nan_bits;
    for (int k = 0; k < RTK_N; k++) t.calls[k] += w[i].t.calls[k];
  }
  printf("random graphs: %d (%d nodes, %d with JIT_STORE_ALL, %d chunked small), %d level evaluations compared, "
         "%d stopped by a check; %ld NaNs of other bits\n",
         t.graphs, t.nodes, t.store_all, t.chunked, t.evaluations, t.failed_checks, t.nan_bits);
  assert_int_equal(t.graphs, 2000);
  assert_true(t.failed_checks > 100);
  for (int k = 0; k < RTK_N; k++)
    if (t.calls[k] < 50) fail_msg("kernel %s called %d times only", rt_kernels[k].name, t.calls[k]);
}

/* --- scenarios ---------------------------------------------------------------------------- */

typedef struct ScTally {
  int tried, lowered, store_all;
  double seconds; /* JIT compile time in all */
  long nan_bits;
} ScTally;

/* graph_eval against the JIT's one level of all nodes: every output, and with JIT_STORE_ALL
 * every node. */
static void compare_scenario(const Lowered *l, int flags, ScTally *t) {
  const Graph *g = &l->g;
  char *err = NULL;
  Jit *j = jit_compile_graph(g, flags, &err);
  if (!j) fail_msg("%s", err);
  t->seconds += jit_compile_seconds(j);
  t->store_all += flags & JIT_STORE_ALL;
  double *want = new_vals(g->nn, 0), *got = new_vals(g->nn, 0);
  graph_eval(g, NULL, want);
  assert_int_equal(jit_level(j, 0)(NULL, got), 0);
  for (int i = 0; i < g->nout; i++) {
    GId o = g->out[i].id;
    if (!same_value(want[o], got[o], &t->nan_bits))
      fail_msg("output %s: interpreter %a, JIT %a", g->out[i].name, want[o], got[o]);
  }
  int d = first_difference(j, want, got, g->nn, &t->nan_bits);
  if (d >= 0) fail_msg("node %d (%s): interpreter %a, JIT %a", d, gop_name((GOp)g->n[d].op), want[d], got[d]);
  free(want);
  free(got);
  jit_free(j);
}

typedef struct Comp {
  Diag d;
  Cap cap;
  SemaOptions so;
  Sema *s;
  HwSet *hw;
} Comp;

/* Checks a file (text == NULL) or a text named path, which must be clean; stdlib/ and hw/
 * come from the source tree. */
static Comp *comp_open(const char *path, const char *text) {
  Comp *u = calloc(1, sizeof *u);
  assert_non_null(u);
  diag_init(&u->d, NULL);
  diag_set_writer(&u->d, cap_write, &u->cap);
  u->d.format = DIAG_SHORT;
  u->d.buffered = true;
  u->so = (SemaOptions){NULL, 0, LLMP_SOURCE_DIR};
  u->s = sema_new(&u->d, &u->so);
  int errors = text ? sema_run_text(u->s, path, text) : sema_run(u->s, path, true);
  diag_flush(&u->d);
  if (errors) fail_msg("%s: %d error(s):\n%s", path, errors, cap_text(&u->cap));
  u->hw = hw_new(u->s, &u->d, &u->so);
  assert_non_null(u->hw);
  return u;
}

static void comp_close(Comp *u) {
  hw_free(u->hw);
  sema_free(u->s);
  diag_free(&u->d);
  free(u->cap.p);
  free(u);
}

/* Lowers every scenario of u and compares those that lower; flags_of(i) gives the JIT's
 * flags for the i-th scenario. */
static void compare_comp(Comp *u, int (*flags_of)(int), ScTally *t) {
  int n = sema_root_decls(u->s, DK_SCENARIO, NULL, 0);
  Decl **sc = calloc((size_t)n + 1, sizeof *sc);
  assert_non_null(sc);
  sema_root_decls(u->s, DK_SCENARIO, sc, n);
  for (int i = 0; i < n; i++) {
    Lowered l;
    int rc = lower_scenario(u->s, u->hw, sc[i], &u->d, &l);
    diag_flush(&u->d);
    if (rc == 0) {
      compare_scenario(&l, flags_of(t->tried), t);
      t->lowered++;
    }
    t->tried++;
    lower_free(&l);
  }
  free(sc);
}

typedef struct Paths {
  char **p;
  int n, cap;
} Paths;

/* The .llmp files under dir, recursively. */
static void find_llmp(const char *dir, Paths *out) {
  DIR *d = opendir(dir);
  assert_non_null(d);
  for (struct dirent *e; (e = readdir(d));) {
    if (e->d_name[0] == '.') continue;
    size_t n = strlen(dir) + strlen(e->d_name) + 2;
    char *path = malloc(n);
    assert_non_null(path);
    snprintf(path, n, "%s/%s", dir, e->d_name);
    DIR *sub = opendir(path);
    if (sub) {
      closedir(sub);
      find_llmp(path, out);
      free(path);
    } else if (strlen(path) > 5 && !strcmp(path + strlen(path) - 5, ".llmp")) {
      if (out->n == out->cap) {
        out->cap = out->cap ? 2 * out->cap : 32;
        out->p = realloc(out->p, (size_t)out->cap * sizeof *out->p);
        assert_non_null(out->p);
      }
      out->p[out->n++] = path;
    } else {
      free(path);
    }
  }
  closedir(d);
}

static int store_all(int i) { return (void)i, JIT_STORE_ALL; }

/* `llmp run`'s evaluation: every node stored, all compared. */
TEST(examples) {
  Paths files = {0};
  find_llmp(LLMP_SOURCE_DIR "/examples", &files);
  qsort(files.p, (size_t)files.n, sizeof *files.p, cmp_cstr);
  ScTally t = {0};
  for (int i = 0; i < files.n; i++) {
    Comp *u = comp_open(files.p[i], NULL);
    compare_comp(u, store_all, &t);
    comp_close(u);
    free(files.p[i]);
  }
  free(files.p);
  printf("examples: %d files, %d scenarios, %d compared (JIT compile %.3f s in all); %ld NaNs of other bits\n", files.n,
         t.tried, t.lowered, t.seconds, t.nan_bits);
  assert_true(t.lowered >= 20);
  assert_int_equal(t.lowered, t.tried);
}

/* A quarter with every node stored (llmp run), the rest with the outputs only (a sweep). */
static int every_fourth_store_all(int i) { return i % 4 ? 0 : JIT_STORE_ALL; }

TEST(generated) {
  enum { BATCH = 50, BATCHES = 21 };
  Rng r = {20261121};
  ScTally t = {0};
  for (int b = 0; b < BATCHES; b++) {
    StrBuf text = {0};
    gen_header(&text);
    for (int i = 0; i < BATCH; i++) gen_scenario(&r, &text, b * BATCH + i);
    Comp *u = comp_open("generated.llmp", text.p);
    compare_comp(u, every_fourth_store_all, &t);
    comp_close(u);
    free(text.p);
  }
  printf("generated scenarios: %d, %d lowered and compared (%d with JIT_STORE_ALL; JIT compile %.3f s in all); "
         "%ld NaNs of other bits\n",
         t.tried, t.lowered, t.store_all, t.seconds, t.nan_bits);
  assert_true(t.lowered >= 1000);
}

/* --- what is stored ------------------------------------------------------------------------ */

/* x0 * 2.5 in level 0, read by level 1, is stored; level 1's sum stays in a register unless
 * every node is its own chunk; the graph's outputs (one a constant) are stored; a call whose
 * results only its own level reads writes nothing, one whose result level 2 reads writes all
 * three; no other slot of vals is touched. */
TEST(stored_nodes) {
  const RtCluster *cl = rt_cluster_builtin("selene");
  Graph g;
  graph_init(&g, cl->gpu, cl);
  GId x0 = g_input(&g, 0), x1 = g_input(&g, 1), c = g_const(&g, 2.5), k7 = g_const(&g, 7);
  GId a = g_mul(&g, x0, c);                      /* level 0 */
  GId b = g_add(&g, a, x1), d = g_mul(&g, b, b); /* level 1 */
  GId args[5] = {g_const(&g, RT_BF16), g_const(&g, 4096), b, g_const(&g, 4096), g_const(&g, 0)};
  GId call1 = g_call(&g, RTK_LINEAR, args, 5, "one");
  GId e = g_add(&g, call1, call1 + 1);
  args[1] = g_const(&g, 2048);
  GId call2 = g_call(&g, RTK_LINEAR, args, 5, "two");
  GId f = g_mul(&g, call2 + 2, e); /* level 2 */
  graph_output(&g, "d", d);
  graph_output(&g, "f", f);
  graph_output(&g, "seven", k7);
  GId l0[] = {x0, c, k7, a}, l2[] = {f};
  GId l1[] = {x1, b, d, args[0], args[3], args[4], call1, call1 + 1, call1 + 2, e, args[1], call2};
  GLevel lv[3] = {{.body = l0, .nbody = 4}, {.body = l1, .nbody = 12}, {.body = l2, .nbody = 1}};
  for (int chunk = 0; chunk <= 1; chunk++) {
    JitOptions o = {0, chunk};
    char *err = NULL;
    Jit *j = jit_compile_opts(&g, lv, 3, &o, &err);
    if (!j) fail_msg("%s", err);
    assert_true(jit_stored(j, a) && jit_stored(j, d) && jit_stored(j, f) && jit_stored(j, k7));
    assert_false(jit_stored(j, c));
    /* with a node per chunk, what the next node reads crosses functions */
    for (int i = 0; i < 4; i++) assert_int_equal(jit_stored(j, ((const GId[]){x0, x1, b, call1})[i]), chunk == 1);
    for (int s = 0; s < RT_KERNEL_NOUT; s++) assert_true(jit_stored(j, call2 + s));
    double in[2] = {3, -0.0}, *want = new_vals(g.nn, 0), *got = new_vals(g.nn, -1);
    for (int k = 0; k < 3; k++) {
      assert_int_equal(graph_eval_level(&g, &lv[k], in, want), 0);
      assert_int_equal(jit_level(j, k)(in, got), 0);
    }
    for (int i = 0; i < g.nn; i++) {
      double expect = jit_stored(j, i) ? want[i] : -1;
      if (memcmp(&got[i], &expect, sizeof expect)) fail_msg("chunk %d, node %d: %a, want %a", chunk, i, got[i], expect);
    }
    assert_true(got[b] == 7.5 || chunk == 0);
    free(want);
    free(got);
    jit_free(j);
  }
  graph_free(&g);
}

/* --- threads ------------------------------------------------------------------------------- */

typedef struct Eval {
  const Graph *g;
  JitLevelFn fn;
  const double *want;
  int mismatches;
} Eval;

static void *eval_thread(void *arg) {
  Eval *e = arg;
  double *v = malloc(((size_t)e->g->nn + 1) * sizeof *v);
  for (int rep = 0; v && rep < 200; rep++) {
    memset(v, 0, ((size_t)e->g->nn + 1) * sizeof *v);
    e->fn(NULL, v);
    e->mismatches += memcmp(v, e->want, (size_t)e->g->nn * sizeof *v) != 0;
  }
  free(v);
  return NULL;
}

/* One compiled scenario evaluated by four threads at once (random_levels compiles in two). */
TEST(threads) {
  Comp *u = comp_open(LLMP_SOURCE_DIR "/examples/quickstart.llmp", NULL);
  Decl *sc;
  assert_int_equal(sema_root_decls(u->s, DK_SCENARIO, &sc, 1), 1);
  Lowered l;
  assert_int_equal(lower_scenario(u->s, u->hw, sc, &u->d, &l), 0);
  char *err = NULL;
  Jit *j = jit_compile_graph(&l.g, JIT_STORE_ALL, &err);
  if (!j) fail_msg("%s", err);
  double *want = new_vals(l.g.nn, 0);
  graph_eval(&l.g, NULL, want);
  Eval ev[4];
  pthread_t th[4];
  for (int i = 0; i < 4; i++) {
    ev[i] = (Eval){&l.g, jit_level(j, 0), want, 0};
    assert_int_equal(pthread_create(&th[i], NULL, eval_thread, &ev[i]), 0);
  }
  for (int i = 0; i < 4; i++) {
    assert_int_equal(pthread_join(th[i], NULL), 0);
    assert_int_equal(ev[i].mismatches, 0);
  }
  free(want);
  jit_free(j);
  lower_free(&l);
  comp_close(u);
}

/* --- IR text -------------------------------------------------------------------------------- */

TEST(ir_text) {
  const RtCluster *cl = rt_cluster_builtin("eos");
  Graph g;
  graph_init(&g, cl->gpu, cl);
  GId x = g_input(&g, 0);
  GId args[5] = {g_const(&g, RT_FP8), x, g_const(&g, 8192), g_const(&g, 8192), g_const(&g, 1)};
  GId call = g_call(&g, RTK_LINEAR, args, 5, "mlp");
  GId y = g_bin(&g, GN_MOD, g_add(&g, call, call + 1), g_un(&g, GN_CEIL, x));
  graph_output(&g, "y", y);
  GId body[] = {x, args[0], args[2], args[4], call, call + 1, call + 2, y - 2, y - 1, y};
  GLevel lv = {.body = body, .nbody = 10};
  JitOptions o = {JIT_IR | JIT_IR_OPT, 3};
  char *err = NULL;
  Jit *j = jit_compile_opts(&g, &lv, 1, &o, &err);
  if (!j) fail_msg("%s", err);
  const char *ir = jit_ir(j, JIT_IR), *opt = jit_ir(j, JIT_IR_OPT);
  assert_non_null(ir);
  assert_non_null(opt);
  static const char *const in_both[] = {"target triple", "i32 @lvl0(ptr", "void @lvl0.b0(ptr",
                                        "declare void @k_linear(ptr, ptr, ptr)", "call void @k_linear(ptr"};
  for (int i = 0; i < 5; i++)
    if (!strstr(ir, in_both[i]) || !strstr(opt, in_both[i]))
      fail_msg("`%s` missing:\n%s\n---\n%s", in_both[i], ir, opt);
  assert_non_null(strstr(ir, "frem double"));
  assert_non_null(strstr(ir, "llvm.ceil.f64"));
  assert_non_null(strstr(ir, "store volatile double"));
  double in = 1000, want[32], got[32];
  graph_eval(&g, &in, want);
  jit_level(j, 0)(&in, got);
  assert_memory_equal(&want[y], &got[y], sizeof(double));
  jit_free(j);

  j = jit_compile(&g, &lv, 1, 0, &err);
  assert_non_null(j);
  assert_null(jit_ir(j, JIT_IR));
  assert_null(jit_ir(j, JIT_IR_OPT));
  assert_null(jit_level(j, 1));
  assert_true(jit_compile_seconds(j) > 0);
  jit_free(j);
  graph_free(&g);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(random_levels), cmocka_unit_test(examples), cmocka_unit_test(generated),
      cmocka_unit_test(stored_nodes),  cmocka_unit_test(threads),  cmocka_unit_test(ir_text),
  };
  int rc = RUN_TESTS(tests);
  jit_shutdown();
  return rc;
}
