/* test_sweep.c - sweeps (compiler/sweep/sweep.c) against their points evaluated one by one.
 *
 * tests/sweep/small.llmp's tiny_search keeps every point that passes (keep 100000), so the
 * sweep's result can be compared with each of its 2304 points lowered alone with its axes as
 * constants and evaluated by the interpreter over the whole graph: the same points kept,
 * with the same objective to the bit, in rank order, and the same drop counts per reason.
 * The JIT and the interpreter, threads and shards must all give that one result. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jit/jit.h"
#include "support.h"
#include "sweep/sweep.h"

#define SMALL LLMP_SOURCE_DIR "/tests/sweep/small.llmp"

typedef struct Fixture {
  Diag d;
  SemaOptions so;
  Sema *s;
  HwSet *hw;
} Fixture;

static Decl *open_sweep(Fixture *f, const char *path, const char *name) {
  setenv("LLMP_DATA", LLMP_SOURCE_DIR, 1);
  diag_init(&f->d, stderr);
  f->so = (SemaOptions){NULL, 0, NULL};
  f->s = sema_new(&f->d, &f->so);
  assert_int_equal(sema_run(f->s, path, true), 0);
  f->hw = hw_new(f->s, &f->d, &f->so);
  assert_non_null(f->hw);
  Decl *list[8];
  int n = sema_root_decls(f->s, DK_SWEEP, list, 8);
  for (int i = 0; i < n; i++)
    if (!strcmp(sema_decl_name(list[i]), name)) return list[i];
  fail_msg("no sweep %s", name);
  return NULL;
}

/* Sweep name of the file at path, opened into f and staged (threads, JIT or interpreter). */
static Sweep *new_sweep(Fixture *f, const char *path, const char *name, int threads, bool jit) {
  Decl *decl = open_sweep(f, path, name);
  SweepOptions o = {threads, jit, 0, 1, false, NULL, false, false, false, 0, NULL};
  Sweep *sw = sweep_new(f->s, f->hw, decl, &f->d, &o);
  assert_non_null(sw);
  return sw;
}

/* Sweep name of the file at path, opened into f and staged twice: with the JIT (*sj) and with
 * the interpreter (*si), one thread each. */
static void new_sweep_pair(Fixture *f, const char *path, const char *name, Sweep **sj, Sweep **si) {
  Decl *decl = open_sweep(f, path, name);
  SweepOptions oj = {1, true, 0, 1, false, NULL, false, false, false, 0, NULL},
               oi = {1, false, 0, 1, false, NULL, false, false, false, 0, NULL};
  *sj = sweep_new(f->s, f->hw, decl, &f->d, &oj), *si = sweep_new(f->s, f->hw, decl, &f->d, &oi);
  assert_non_null(*sj);
  assert_non_null(*si);
}

static void close_fixture(Fixture *f) {
  hw_free(f->hw);
  sema_free(f->s);
  diag_free(&f->d);
}

/* A sweep's result as plain data, to compare runs. */
typedef struct Result {
  uint64_t kept, evaluated;
  int nrows, ndrop;
  uint64_t *point, drops[64];
  double *obj;
} Result;

static void run_pruned(Sweep *sw, int threads, bool jit, int k, int n, bool prune, Result *r) {
  SweepOptions o = {threads, jit, k, n, false, NULL, !prune, false, false, 0, NULL};
  SweepMeta m;
  const SweepRow *rows;
  int nrows;
  assert_int_equal(sweep_run(sw, &o, &m, &rows, &nrows), 0);
  r->kept = m.kept;
  r->evaluated = m.evaluated;
  r->nrows = nrows;
  r->ndrop = m.ndropped;
  assert_true(m.ndropped <= 64);
  for (int i = 0; i < m.ndropped; i++) r->drops[i] = m.dropped[i].count;
  r->point = calloc((size_t)nrows + 1, sizeof *r->point);
  r->obj = calloc((size_t)nrows + 1, sizeof *r->obj);
  for (int i = 0; i < nrows; i++) {
    r->point[i] = rows[i].point;
    r->obj[i] = rows[i].objective;
  }
}

static void run_into(Sweep *sw, int threads, bool jit, int k, int n, Result *r) {
  run_pruned(sw, threads, jit, k, n, true, r);
}

static void result_free(Result *r) {
  free(r->point);
  free(r->obj);
}

static void assert_same(const Result *a, const Result *b) {
  assert_int_equal(a->kept, b->kept);
  assert_int_equal(a->nrows, b->nrows);
  assert_int_equal(a->ndrop, b->ndrop);
  for (int i = 0; i < a->ndrop; i++) assert_int_equal(a->drops[i], b->drops[i]);
  for (int i = 0; i < a->nrows; i++) {
    assert_int_equal(a->point[i], b->point[i]);
    assert_memory_equal(&a->obj[i], &b->obj[i], sizeof(double));
  }
}

static int cmp_dot(const void *x, const void *y) {
  const SweepDot *a = x, *b = y;
  return (a->point > b->point) - (a->point < b->point);
}

static int cmp_obj(const void *x, const void *y) {
  const double *a = x, *b = y;
  return a[0] < b[0] ? -1 : a[0] > b[0] ? 1 : a[1] < b[1] ? -1 : a[1] > b[1];
}

/* Every point alone: kept ones in rank order with the same bits, dropped ones per reason. */
static void every_point_alone(void **state) {
  (void)state;
  Fixture f;
  Sweep *sw = new_sweep(&f, SMALL, "tiny_search", 1, true);
  /* the sweep evaluates only what its objective, requires and checks need: its pipeline
   * runs without the second simulation (free sends) that a report's breakdown needs */
  const Graph *g = sweep_graph(sw);
  int full = 0, makespan = 0;
  for (int i = 0; i < g->nn; i++)
    if (g->n[i].op == GN_CALL)
      full += g->n[i].kernel == RTK_PIPELINE, makespan += g->n[i].kernel == RTK_PIPELINE_MAKESPAN;
  assert_int_equal(full, 0);
  assert_int_equal(makespan, 1);
  Result r;
  run_into(sw, 1, true, 0, 1, &r);
  uint64_t P = sweep_points(sw);
  assert_int_equal(P, 2304);
  assert_int_equal(r.evaluated, P);
  double *alone = calloc(2 * P, sizeof *alone);
  uint64_t drops[64] = {0}, kept = 0;
  for (uint64_t p = 0; p < P; p++) {
    int reason;
    double obj = sweep_point_objective(sw, p, &reason);
    assert_true(reason >= -1 && reason < r.ndrop);
    if (reason >= 0) {
      drops[reason]++;
      continue;
    }
    alone[2 * kept] = obj;
    alone[2 * kept + 1] = (double)p;
    kept++;
  }
  assert_int_equal(kept, r.kept);
  assert_int_equal(r.nrows, (int)kept); /* keep 100000: every kept point is a row */
  for (int i = 0; i < r.ndrop; i++) assert_int_equal(drops[i], r.drops[i]);
  qsort(alone, kept, 2 * sizeof(double), cmp_obj);
  for (uint64_t i = 0; i < kept; i++) {
    assert_int_equal((uint64_t)alone[2 * i + 1], r.point[i]);
    assert_memory_equal(&alone[2 * i], &r.obj[i], sizeof(double));
  }
  printf("tiny_search: %llu points, %llu kept, each equal to the point evaluated alone\n", (unsigned long long)P,
         (unsigned long long)kept);
  free(alone);
  result_free(&r);
  sweep_free(sw);
  close_fixture(&f);
}

/* The JIT and the interpreter, on 1 to 4 threads: one result. */
static void jit_interpreter_threads_agree(void **state) {
  (void)state;
  Fixture f;
  Sweep *sj, *si;
  new_sweep_pair(&f, SMALL, "tiny_search", &sj, &si);
  Result ref;
  run_into(sj, 1, true, 0, 1, &ref);
  for (int t = 1; t <= 4; t++) {
    Result a, b;
    run_into(sj, t, true, 0, 1, &a);
    run_into(si, t, false, 0, 1, &b);
    assert_same(&ref, &a);
    assert_same(&ref, &b);
    result_free(&a);
    result_free(&b);
  }
  result_free(&ref);
  sweep_free(sj);
  sweep_free(si);
  close_fixture(&f);
}

/* Shards: their counts add up to the whole, and the best of their rows are the whole's. */
static void shards_add_up(void **state) {
  (void)state;
  Fixture f;
  Sweep *sw = new_sweep(&f, SMALL, "tiny_search", 2, true);
  Result whole;
  run_into(sw, 2, true, 0, 1, &whole);
  for (int n = 2; n <= 7; n += 5) {
    uint64_t evaluated = 0, kept = 0, drops[64] = {0};
    int rows = 0;
    for (int k = 0; k < n; k++) {
      Result s;
      run_into(sw, 2, true, k, n, &s);
      evaluated += s.evaluated;
      kept += s.kept;
      rows += s.nrows;
      for (int i = 0; i < s.ndrop; i++) drops[i] += s.drops[i];
      for (int i = 0; i < s.nrows; i++) { /* each shard row is a row of the whole, same bits */
        int j = 0;
        while (j < whole.nrows && whole.point[j] != s.point[i]) j++;
        assert_true(j < whole.nrows);
        assert_memory_equal(&whole.obj[j], &s.obj[i], sizeof(double));
      }
      result_free(&s);
    }
    assert_int_equal(evaluated, sweep_points(sw));
    assert_int_equal(kept, whole.kept);
    assert_int_equal(rows, whole.nrows);
    for (int i = 0; i < whole.ndrop; i++) assert_int_equal(drops[i], whole.drops[i]);
  }
  result_free(&whole);
  sweep_free(sw);
  close_fixture(&f);
}

/* Pruning (a point whose objective's lower bound is worse than the worst kept skips its
 * pipeline simulation) keeps the same points, bit for bit, with the JIT and the interpreter
 * on 1 and 3 threads; it skips simulations where the objective is monotone in the makespan
 * (a sum, a quotient by it, by an axis, a negation) and none where it is not. */
static void pruning_keeps_the_same_points(void **state) {
  (void)state;
  static const struct {
    const char *name;
    bool prunable;
  } sweeps[] = {{"fastest", true}, {"best_mfu", true}, {"per_tp", true}, {"negated", true}, {"squared", false}};
  for (size_t i = 0; i < sizeof sweeps / sizeof *sweeps; i++) {
    Fixture f;
    Sweep *sj, *si;
    new_sweep_pair(&f, LLMP_SOURCE_DIR "/tests/sweep/prune.llmp", sweeps[i].name, &sj, &si);
    Result ref;
    run_pruned(si, 1, false, 0, 1, false, &ref);
    assert_int_equal(sweep_pruned(si), 0);
    assert_true(ref.nrows >= 3 && ref.kept > 100);
    for (int t = 1; t <= 3; t += 2)
      for (int jit = 0; jit < 2; jit++) {
        Sweep *sw = jit ? sj : si;
        Result a;
        run_pruned(sw, t, jit, 0, 1, true, &a);
        assert_same(&ref, &a);
        uint64_t pruned = sweep_pruned(sw);
        if (sweeps[i].prunable)
          assert_true(pruned > 0 && pruned < a.kept);
        else
          assert_int_equal(pruned, 0);
        if (t == 1 && jit)
          printf("%s: %llu points pass, %llu skip their simulation, %d kept\n", sweeps[i].name,
                 (unsigned long long)a.kept, (unsigned long long)pruned, a.nrows);
        result_free(&a);
      }
    result_free(&ref);
    sweep_free(sj);
    sweep_free(si);
    close_fixture(&f);
  }
}

/* A model of several layer kinds, whose end devices' layers per kind are kernel calls of the
 * layout (layers_on) over pp and virtual_stages: the JIT and the interpreter, on 1 and 3
 * threads, with and without pruning, keep the same points, bit for bit; each kept point's
 * objective is its whole graph's evaluated alone, from a cold memo. */
static void layout_sweep_agrees(void **state) {
  (void)state;
  Fixture f;
  Sweep *sj, *si;
  new_sweep_pair(&f, LLMP_SOURCE_DIR "/examples/sweeps/deepseek_v3_gb200.llmp", "deepseek_v3_gb200_search", &sj, &si);
  Result ref;
  run_pruned(si, 1, false, 0, 1, false, &ref);
  assert_true(ref.nrows == 20 && ref.kept > 1000);
  for (int t = 1; t <= 3; t += 2)
    for (int jit = 0; jit < 2; jit++)
      for (int prune = 0; prune < 2; prune++) {
        Result a;
        run_pruned(jit ? sj : si, t, jit, 0, 1, prune, &a);
        assert_same(&ref, &a);
        result_free(&a);
      }
  for (int i = 0; i < ref.nrows; i++) {
    int reason;
    rt_pipeline_memo_clear();
    double obj = sweep_point_objective(si, ref.point[i], &reason);
    assert_int_equal(reason, -1);
    assert_memory_equal(&obj, &ref.obj[i], sizeof obj);
  }
  result_free(&ref);
  sweep_free(sj);
  sweep_free(si);
  close_fixture(&f);
}

/* Fields that change the graph (cluster.nodes, plan.dtype): one graph per structure, the
 * structures that cannot run (fp8 on an A100) dropped whole under sema's reason, equal graphs
 * (two placements that lay the ranks out alike) compiled once; every point equal to itself
 * lowered alone, and shards adding up to the whole, as for one graph. */
static void structural_axes(void **state) {
  (void)state;
  Fixture f;
  Sweep *sw = new_sweep(&f, SMALL, "tiny_scaling", 2, true);
  int compiled;
  double lowering;
  assert_int_equal(sweep_structures(sw, &compiled, &lowering), 12);
  assert_int_equal(compiled, 3);
  Result r;
  run_into(sw, 2, true, 0, 1, &r);
  uint64_t P = sweep_points(sw), kept = 0, drops[64] = {0};
  assert_int_equal(P, 72);
  for (uint64_t p = 0; p < P; p++) {
    int reason;
    double obj = sweep_point_objective(sw, p, &reason);
    assert_true(reason >= -1 && reason < r.ndrop);
    if (reason >= 0) {
      drops[reason]++;
      continue;
    }
    kept++;
    int j = 0;
    while (j < r.nrows && r.point[j] != p) j++;
    assert_true(j < r.nrows);
    assert_memory_equal(&obj, &r.obj[j], sizeof obj);
  }
  assert_int_equal(kept, r.kept);
  for (int i = 0; i < r.ndrop; i++) assert_int_equal(drops[i], r.drops[i]);
  const SweepRow *best;
  const char *axes;
  assert_int_equal(sweep_best(sw, &best, &axes), 4); /* 3 nodes divide no split of the batch */
  assert_string_equal(axes, "cluster.nodes, plan.dtype, plan.placement");
  for (int n = 2; n <= 7; n += 5) {
    uint64_t evaluated = 0, skept = 0, sdrops[64] = {0};
    for (int k = 0; k < n; k++) {
      Result s;
      run_into(sw, 1, k % 2 == 0, k, n, &s);
      evaluated += s.evaluated, skept += s.kept;
      for (int i = 0; i < s.ndrop; i++) sdrops[i] += s.drops[i];
      result_free(&s);
    }
    assert_int_equal(evaluated, P);
    assert_int_equal(skept, r.kept);
    for (int i = 0; i < r.ndrop; i++) assert_int_equal(sdrops[i], r.drops[i]);
  }
  result_free(&r);
  sweep_free(sw);
  close_fixture(&f);
}

/* The hash of sweep NAME of the file at path, and with out, its JSON Lines (the caller frees). */
static char *hash_of(const char *path, const char *name, char **json) {
  Fixture f;
  Sweep *sw = new_sweep(&f, path, name, 1, false);
  char *h = strdup(sweep_hash_text(sw));
  assert_int_equal(strlen(h), 16);
  if (json) {
    SweepMeta m;
    const SweepRow *rows;
    int n;
    SweepOptions o = {1, false, 0, 1, false, NULL, false, false, false, 0, NULL};
    assert_int_equal(sweep_run(sw, &o, &m, &rows, &n), 0);
    assert_string_equal(m.hash, h);
    Mem mem;
    assert_int_equal(sweep_write(mem_open(&mem), SWEEP_JSONL, &m, rows, n), 0);
    *json = mem_take(&mem);
  }
  sweep_free(sw);
  close_fixture(&f);
  return h;
}

/* Valid UTF-8 (RFC 3629), for the JSON a sweep writes. */
static bool utf8_valid(const unsigned char *p) {
  while (*p) {
    int n = *p < 0x80                  ? 1
            : *p >= 0xc2 && *p <= 0xdf ? 2
            : *p >= 0xe0 && *p <= 0xef ? 3
            : *p >= 0xf0 && *p <= 0xf4 ? 4
                                       : 0;
    if (!n) return false;
    for (int i = 1; i < n; i++)
      if ((p[i] & 0xc0) != 0x80) return false;
    p += n;
  }
  return true;
}

/* A sweep's hash (its identity for llmp merge) is of what it evaluates: the same text under
 * another name and folder has the same; another sweep of the file, or an import changed, has
 * another.  A file name that is not UTF-8 comes out in JSON as valid UTF-8 (U+FFFD). */
static void hash_is_of_what_is_evaluated(void **state) {
  (void)state;
  size_t len;
  char *text = read_file(SMALL, &len), *json;
  char *h = hash_of(SMALL, "tiny_fastest_tokens", NULL), *h2 = hash_of(SMALL, "tiny_search", NULL);
  assert_string_not_equal(h, h2);
  TmpDir td;
  tmp_open(&td, "sweep_hash");
  const char *copy = tmp_file(&td, "a/sm\377\376all.llmp", text, len);
  char *h3 = hash_of(copy, "tiny_fastest_tokens", &json);
  assert_string_equal(h3, h);
  assert_true(utf8_valid((const unsigned char *)json));
  assert_non_null(strstr(json, "sm\357\277\275\357\277\275all.llmp\",\"hash\":\""));
  /* an import of the copy's own folder is found before the data folder's: one comment more */
  size_t tlen;
  char *t = read_file(LLMP_SOURCE_DIR "/stdlib/transformer.llmp", &tlen);
  static const char more[] = "\n# one comment more\n";
  char *t2 = malloc(tlen + sizeof more);
  memcpy(t2, t, tlen);
  memcpy(t2 + tlen, more, sizeof more);
  tmp_file(&td, "a/stdlib/transformer.llmp", t, tlen);
  char *h4 = hash_of(copy, "tiny_fastest_tokens", NULL);
  assert_string_equal(h4, h); /* the same text */
  tmp_file(&td, "a/stdlib/transformer.llmp", t2, tlen + sizeof more - 1);
  char *h5 = hash_of(copy, "tiny_fastest_tokens", NULL);
  assert_string_not_equal(h5, h);
  tmp_close(&td);
  free(text);
  free(json);
  free(t);
  free(t2);
  free(h);
  free(h2);
  free(h3);
  free(h4);
  free(h5);
}


/* The sample of the points evaluated (--html): a copy of its dots, and how many of each reason. */
typedef struct Dots {
  int n;
  SweepDot *d;
} Dots;

static Dots sample_run(Sweep *sw, int threads, bool jit, int k, int n) {
  Result r;
  run_into(sw, threads, jit, k, n, &r);
  result_free(&r);
  const SweepSample *s = sweep_sample(sw);
  assert_non_null(s);
  Dots d = {s->n, calloc((size_t)s->n + 1, sizeof(SweepDot))};
  memcpy(d.d, s->dot, (size_t)s->n * sizeof(SweepDot));
  return d;
}

/* The samples of n shards (the JIT on threads), one after another; room: the whole's count. */
static Dots sample_shards(Sweep *sw, int threads, int n, int room) {
  Dots all = {0, calloc((size_t)room + 1, sizeof(SweepDot))};
  for (int k = 0; k < n; k++) {
    Dots part = sample_run(sw, threads, true, k, n);
    memcpy(all.d + all.n, part.d, (size_t)part.n * sizeof(SweepDot));
    all.n += part.n;
    free(part.d);
  }
  return all;
}

static void assert_same_dots(const Dots *a, const Dots *b) {
  assert_int_equal(a->n, b->n);
  for (int i = 0; i < a->n; i++) { /* figure for figure, the bits */
    assert_int_equal(a->d[i].point, b->d[i].point);
    assert_int_equal(a->d[i].reason, b->d[i].reason);
    assert_int_equal(a->d[i].kind, b->d[i].kind);
    assert_memory_equal(&a->d[i].iteration, &b->d[i].iteration, sizeof(double));
    assert_memory_equal(&a->d[i].peak, &b->d[i].peak, sizeof(double));
  }
}

static const SweepField *row_field(const SweepRow *r, const char *key) {
  for (int i = 0; i < r->nfields; i++)
    if (!strcmp(r->fields[i].key, key)) return &r->fields[i];
  fail_msg("no field %s", key);
  return NULL;
}

/* The sample of the points evaluated: none unless asked; with room for every point, every
 * point that has figures, each with its reason (the checks' none: no kernel ran for them), the
 * ranked ones the kept points with their rows' iteration time and peak memory; with less room,
 * at most that many of each, the points of smallest key among the whole sample's; one result
 * on 1 and 3 threads, JIT and interpreter; shards' samples together the whole's. */
static void sample_of_points_evaluated(void **state) {
  (void)state;
  Fixture f;
  Sweep *sj, *si;
  new_sweep_pair(&f, SMALL, "tiny_search", &sj, &si);
  Result r;
  run_into(sj, 1, true, 0, 1, &r);
  assert_null(sweep_sample(sj));
  result_free(&r);
  sweep_keep_sample(sj, 100000);
  SweepMeta m;
  const SweepRow *rows;
  int nrows;
  SweepOptions o2 = {2, true, 0, 1, false, NULL, false, false, false, 0, NULL};
  assert_int_equal(sweep_run(sj, &o2, &m, &rows, &nrows), 0);
  const SweepSample *s = sweep_sample(sj);
  assert_non_null(s);
  uint64_t per[65] = {0};
  int kinds[4] = {0};
  for (int i = 0; i < s->n; i++) {
    const SweepDot *d = &s->dot[i];
    assert_true(d->reason >= -1 && d->reason < m.ndropped);
    per[d->reason < 0 ? 64 : d->reason]++;
    kinds[d->kind]++;
    assert_true(d->kind == SWEEP_DOT_RANKED ? d->reason < 0 : d->reason >= 0);
    assert_true(isfinite(d->iteration) && d->iteration > 0 && d->peak > 0);
    if (i) /* by reason, the ranked last, then by point */
      assert_true((unsigned)s->dot[i - 1].reason < (unsigned)d->reason ||
                  (s->dot[i - 1].reason == d->reason && s->dot[i - 1].point < d->point));
  }
  assert_int_equal(per[64], m.kept);
  uint64_t with = 0, without = 0;
  int first = 0; /* the reasons are the checks' (no figures), then the requires', fit's, equivalence's */
  while (first < m.ndropped && !per[first]) first++;
  for (int i = 0; i < m.ndropped; i++) {
    if (per[i]) assert_int_equal(per[i], m.dropped[i].count);
    else if (m.dropped[i].count) assert_true(i < first);
    *(per[i] ? &with : &without) += m.dropped[i].count;
  }
  assert_true(with > 0 && without > 0);
  assert_true(kinds[SWEEP_DOT_EQUIVALENT] > 0);
  for (int j = 0; j < nrows; j++) { /* the kept rows: the report's figures, lowered alone */
    int i = 0;
    while (i < s->n && !(s->dot[i].reason < 0 && s->dot[i].point == rows[j].point)) i++;
    assert_true(i < s->n);
    double t = row_field(&rows[j], "iteration_s")->num, p = row_field(&rows[j], "memory.peak")->num;
    assert_true(fabs(s->dot[i].iteration - t) <= 1e-12 * t && fabs(s->dot[i].peak - p) <= 1e-12 * p);
    assert_true(s->dot[i].fits);
  }
  printf("tiny_search: %d points sampled: %d ranked, %d failed a require, %d do not fit, %d equivalent; "
         "%llu without figures\n", s->n, kinds[0], kinds[1], kinds[2], kinds[3], (unsigned long long)without);
  Dots whole = sample_run(sj, 1, true, 0, 1), sharded = sample_shards(sj, 2, 3, whole.n);
  assert_int_equal(sharded.n, whole.n);
  qsort(whole.d, (size_t)whole.n, sizeof(SweepDot), cmp_dot);
  qsort(sharded.d, (size_t)sharded.n, sizeof(SweepDot), cmp_dot);
  assert_same_dots(&whole, &sharded);
  sweep_keep_sample(sj, 40);
  sweep_keep_sample(si, 40);
  Dots few = sample_run(sj, 1, true, 0, 1);
  Dots a = sample_run(sj, 3, true, 0, 1), b = sample_run(si, 1, false, 0, 1);
  assert_same_dots(&few, &a);
  assert_same_dots(&few, &b);
  free(a.d);
  free(b.d);
  int at = 0;
  for (int i = 0; i < few.n; i++) {
    at = i && few.d[i].reason == few.d[i - 1].reason ? at + 1 : 1;
    assert_true(at <= 40);
    const SweepDot *d = bsearch(&few.d[i], whole.d, (size_t)whole.n, sizeof(SweepDot), cmp_dot);
    assert_non_null(d);
    assert_memory_equal(&d->iteration, &few.d[i].iteration, sizeof(double));
  }
  assert_true(few.n > 40 && few.n < whole.n);
  free(few.d);
  free(whole.d);
  free(sharded.d);
  sweep_free(sj);
  sweep_free(si);
  close_fixture(&f);
}

/* The same over fields that change the graph: each structure's points in the whole sweep's
 * numbering, the points of structures that could not be lowered never sampled; threads and
 * shards change nothing. */
static void sample_of_structures(void **state) {
  (void)state;
  Fixture f;
  Sweep *sw = new_sweep(&f, SMALL, "tiny_scaling", 2, true);
  sweep_keep_sample(sw, 1000);
  Result r;
  run_into(sw, 2, true, 0, 1, &r);
  Dots a = sample_run(sw, 1, true, 0, 1), b = sample_run(sw, 3, false, 0, 1);
  assert_same_dots(&a, &b);
  uint64_t ranked = 0, dropped = 0;
  for (int i = 0; i < a.n; i++) {
    if (a.d[i].reason >= 0) {
      dropped++;
      continue;
    }
    int reason;
    double obj = sweep_point_objective(sw, a.d[i].point, &reason);
    assert_int_equal(reason, -1);
    assert_true(isfinite(obj));
    ranked++;
  }
  assert_int_equal(ranked, r.kept);
  assert_int_equal(dropped, 0); /* its drops: a check, and the structures that could not be lowered */
  assert_int_equal(r.evaluated - r.kept, 48);
  Dots sharded = sample_shards(sw, 1, 2, a.n);
  qsort(a.d, (size_t)a.n, sizeof(SweepDot), cmp_dot);
  qsort(sharded.d, (size_t)sharded.n, sizeof(SweepDot), cmp_dot);
  assert_same_dots(&a, &sharded);
  free(a.d);
  free(b.d);
  free(sharded.d);
  result_free(&r);
  sweep_free(sw);
  close_fixture(&f);
}

/* Chunks are sized by time: from one point, each about SWEEP_CHUNK_SECONDS' worth, growing at
 * most 8 times a chunk, shrinking at once, within [1, max]. */
static void chunks_take_a_fraction_of_a_second(void **state) {
  (void)state;
  const uint64_t big = UINT64_C(1) << 62;
  assert_int_equal(sweep_chunk_next(1, 0, big), 8); /* too fast to time: grow */
  assert_int_equal(sweep_chunk_next(64, NAN, big), 512);
  assert_int_equal(sweep_chunk_next(1000, SWEEP_CHUNK_SECONDS, big), 1000);
  assert_int_equal(sweep_chunk_next(1000, 10 * SWEEP_CHUNK_SECONDS, big), 100);
  assert_int_equal(sweep_chunk_next(1000, 4 * SWEEP_CHUNK_SECONDS, big), 250);
  assert_int_equal(sweep_chunk_next(1000, 1e6, big), 1);
  assert_int_equal(sweep_chunk_next(1000, 1e-9, 5000), 5000);
  assert_int_equal(sweep_chunk_next(0, 1, big), 1);
  /* 10^12 points on one thread at rates from 100 to 10^8 points a second: the first chunk
   * ends at once, and then one ends at least every second (the bar moves and has a rate to
   * give its time left from); the steady chunk takes about SWEEP_CHUNK_SECONDS */
  static const double rates[] = {100, 1e4, 1e6, 1e8};
  for (size_t r = 0; r < sizeof rates / sizeof rates[0]; r++) {
    uint64_t P = UINT64_C(1000000000000), chunk = 1, done = 0, max = P / 32;
    double t = 0, longest = 0;
    while (t < 60 && done < P) {
      double dt = (double)chunk / rates[r];
      if (dt > longest) longest = dt;
      if (!done) assert_true(dt < 0.1);
      t += dt;
      done += chunk;
      chunk = sweep_chunk_next(chunk, dt, max);
    }
    assert_true(longest <= 8 * SWEEP_CHUNK_SECONDS);
    assert_true((double)chunk / rates[r] > SWEEP_CHUNK_SECONDS / 2 && (double)chunk / rates[r] <= SWEEP_CHUNK_SECONDS);
    assert_true(done > 0 && done < P);
  }
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_point_alone),
      cmocka_unit_test(jit_interpreter_threads_agree),
      cmocka_unit_test(shards_add_up),
      cmocka_unit_test(pruning_keeps_the_same_points),
      cmocka_unit_test(layout_sweep_agrees),
      cmocka_unit_test(structural_axes),
      cmocka_unit_test(sample_of_points_evaluated),
      cmocka_unit_test(sample_of_structures),
      cmocka_unit_test(chunks_take_a_fraction_of_a_second),
      cmocka_unit_test(hash_is_of_what_is_evaluated),
  };
  int rc = RUN_TESTS(tests);
  jit_shutdown();
  return rc;
}
