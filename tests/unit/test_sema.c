/* test_sema.c - unit tests of the semantic pass (compiler/front/sema.c, compiler/front/load.c,
 * compiler/front/schema.c): each rule of docs/language.md on a small file written to a temporary
 * folder, checking the number of errors and the text of the message.  The data folder is an
 * empty temporary folder and LLMP_PATH / LLMP_DATA are cleared, so nothing installed is read. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "front/sema.h"

#include "support.h"

/* --- temporary folders ---------------------------------------------------------------- */

static void remove_at(const char *dir, const char *rel) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, rel);
  assert_int_equal(remove(path), 0);
}

/* --- one check ------------------------------------------------------------------------ */

typedef struct S {
  char tmp[64]; /* holds src/ and data/ and whatever a test adds */
  char src[96], data[96];
  const char *incs[4];
  int nincs;
  Diag d;
  Cap cap;
  int errors;
} S;

/* Temporary folders still in use: a failing test skips its free_s(), so the group teardown
 * removes what is left. */
static char *live[64];
static int nlive;

static int remove_leftovers(void **state) {
  (void)state;
  for (int i = 0; i < nlive; i++) {
    rm_rf(live[i]);
    free(live[i]);
  }
  nlive = 0;
  return 0;
}

static S *new_s(void) {
  S *x = calloc(1, sizeof *x);
  assert_non_null(x);
  strcpy(x->tmp, "/tmp/llmp_sema_XXXXXX");
  assert_non_null(mkdtemp(x->tmp));
  if (nlive < 64) live[nlive++] = strdup(x->tmp);
  snprintf(x->src, sizeof x->src, "%s/src", x->tmp);
  snprintf(x->data, sizeof x->data, "%s/data", x->tmp);
  mkdirs(x->src);
  mkdirs(x->data);
  unsetenv("LLMP_PATH");
  unsetenv("LLMP_DATA");
  return x;
}

static void free_s(S *x) {
  for (int i = 0; i < nlive; i++)
    if (strcmp(live[i], x->tmp) == 0) {
      free(live[i]);
      live[i] = live[--nlive];
      break;
    }
  free(x->cap.p);
  rm_rf(x->tmp);
  free(x);
}

static const char *out(S *x) { return cap_text(&x->cap); }

/* Checks the file at path (absolute); the diagnostics go to x->cap, short format, in
 * source order as the command line prints them. */
static int run_path(S *x, const char *path) {
  free(x->cap.p);
  memset(&x->cap, 0, sizeof x->cap);
  diag_init(&x->d, NULL);
  diag_set_writer(&x->d, cap_write, &x->cap);
  x->d.format = DIAG_SHORT;
  x->d.buffered = true;
  SemaOptions opt = {x->incs, x->nincs, x->data};
  Sema *s = sema_new(&x->d, &opt);
  assert_non_null(s);
  x->errors = sema_run(s, path, true);
  diag_flush(&x->d);
  int total = x->d.errors;
  sema_free(s);
  diag_free(&x->d);
  if (total != x->errors) fail_msg("sema_run returned %d, the Diag counted %d", x->errors, total);
  return x->errors;
}

/* Writes src/main.llmp with text and checks it. */
static int check(S *x, const char *text) {
  write_at(x->src, "main.llmp", text);
  char path[512];
  snprintf(path, sizeof path, "%s/main.llmp", x->src);
  return run_path(x, path);
}

static void expect_errors(S *x, int n) {
  if (x->errors != n) fail_msg("expected %d error(s), got %d:\n%s", n, x->errors, out(x));
}

/* --- a complete scenario, with parts to vary ---------------------------------------- */

#define GPU "gpu g { memory = 80 GiB; memory_bandwidth = 2039 GB/s; sms = 108; peak_fp16 = 312 TFLOP/s }\n"
#define CLUSTER \
  "cluster c {\n  gpu = g\n  gpus_per_node = 4\n  nodes = 2\n" \
  "  tier nv { span = node; bandwidth = 300 GB/s; latency = 2 us }\n}\n"
#define MODEL "layers = 8; hidden = 1024; heads = 16; seq = 2048; vocab = 50000; ffn = 4 * hidden"
#define PLAN "tp = 2; pp = 2; dp = 2; micro_batch = 1; global_batch = 8"

/* A file with the gpu, the 8-GPU cluster, model m, plan p and scenario s. */
static int scenario(S *x, const char *model, const char *plan) {
  char text[4096];
  snprintf(text, sizeof text,
           GPU CLUSTER "model m { %s }\nplan p { %s }\nscenario s { model = m; cluster = c; plan = p }\n", model, plan);
  return check(x, text);
}

/* Exactly one error, containing msg. */
static void divides(const char *model, const char *plan, const char *msg) {
  S *x = new_s();
  scenario(x, model, plan);
  expect_errors(x, 1);
  assert_contains(out(x), msg);
  free_s(x);
}

/* --- tests ------------------------------------------------------------------------------ */

/* --- what an editor asks (sema_run_buffer, sema_query.c) ---------------------------- */

/* The editor's text replaces the file's, and its imports resolve beside the file. */
TEST(buffer_replaces_the_file_beside_its_imports) {
  S *x = new_s();
  write_at(x->src, "lib.llmp", GPU);
  write_at(x->src, "main.llmp", "gpu broken { nonsense = 1 }\n");
  char path[512];
  snprintf(path, sizeof path, "%s/main.llmp", x->src);
  const char *text = "import \"lib\"\n" CLUSTER;
  diag_init(&x->d, NULL);
  diag_set_writer(&x->d, cap_write, &x->cap);
  SemaOptions opt = {NULL, 0, x->data};
  Sema *s = sema_new(&x->d, &opt);
  int errors = sema_run_buffer(s, path, text, strlen(text));
  if (errors) fail_msg("%d error(s):\n%s", errors, out(x));
  assert_int_equal(sema_nfiles(s), 2);
  AstNode *root = sema_file_root(s, 0);
  AstNode *decl = root->u.list.first->next; /* after the import */
  assert_int_equal(decl->kind, AST_DECL);
  Decl *c = sema_decl_of(decl);
  assert_ptr_equal(c, sema_decl_named(s, decl->name));
  assert_int_equal(sema_decl_kind(c), DK_CLUSTER);
  sema_free(s);
  diag_free(&x->d);
  free_s(x);
}

/* A field's statement, owner and value through extends, with late binding. */
TEST(query_reads_fields_through_extends) {
  S *x = new_s();
  check(x, GPU "model m1 { " MODEL " }\nmodel m2 extends m1 { hidden = 2048 }\n");
  expect_errors(x, 0);
  diag_init(&x->d, NULL);
  diag_set_writer(&x->d, cap_write, &x->cap);
  SemaOptions opt = {NULL, 0, x->data};
  Sema *s = sema_new(&x->d, &opt);
  char path[512];
  snprintf(path, sizeof path, "%s/main.llmp", x->src);
  assert_int_equal(sema_run(s, path, true), 0);
  Decl *m1 = sema_find(s, "m1", DK_MODEL), *m2 = sema_find(s, "m2", DK_MODEL), *owner = NULL;
  const Schema *sc = sema_decl_schema(m2);
  int hidden = schema_field_index(sc, schema_field(sc, "hidden")),
      ffn = schema_field_index(sc, schema_field(sc, "ffn"));
  assert_non_null(sema_field_stmt(m2, hidden, &owner));
  assert_ptr_equal(owner, m2);
  assert_non_null(sema_field_stmt(m2, ffn, &owner));
  assert_ptr_equal(owner, m1);
  SemaValue v = sema_field_value(s, m2, ffn);
  assert_int_equal(v.kind, SV_NUMBER);
  assert_true(v.num == 8192 && dim_is_none(v.dim)); /* m1's 4 * hidden with m2's hidden */
  Decl *g = sema_find(s, "g", DK_GPU);
  const Schema *gs = sema_decl_schema(g);
  v = sema_field_value(s, g, schema_field_index(gs, schema_field(gs, "memory")));
  assert_true(v.kind == SV_NUMBER && v.num == 80.0 * 1073741824.0 && dim_eq(v.dim, dim_make(1, 0, 0)));
  v = sema_field_value(s, g, schema_field_index(gs, schema_field(gs, "l2_cache")));
  assert_int_equal(v.kind, SV_UNKNOWN); /* unset */
  sema_free(s);
  diag_free(&x->d);
  free_s(x);
}

TEST(complete_scenario_is_clean) {
  S *x = new_s();
  scenario(x, MODEL, PLAN);
  expect_errors(x, 0);
  assert_string_equal(out(x), "");
  free_s(x);
}

TEST(unknown_field_with_suggestion) {
  S *x = new_s();
  check(x, "gpu g { memory = 80 GiB; memroy = 3 }\n");
  expect_errors(x, 1);
  assert_contains(out(x), "main.llmp:1:26: error: unknown field `memroy` in gpu; did you mean `memory`?");
  check(x, "gpu g { zzzzzzzz = 3 }\n");
  expect_errors(x, 1);
  assert_contains(out(x), "unknown field `zzzzzzzz` in gpu");
  assert_not_contains(out(x), "did you mean");
  /* nested blocks are offered too */
  check(x, "cluster c { tierr nv { span = node } }\n");
  assert_contains(out(x), "did you mean `tier`?");
  free_s(x);
}

TEST(unknown_declaration_kind_with_suggestion) {
  S *x = new_s();
  check(x, "modle m {}\n");
  expect_errors(x, 1);
  assert_contains(out(x), "main.llmp:1:1: error: unknown declaration kind `modle` (did you mean `model`?)");
  free_s(x);
}

TEST(missing_required_field_at_use) {
  S *x = new_s();
  scenario(x, "layers = 8; hidden = 1024; heads = 16; seq = 2048; ffn = 4096", PLAN);
  expect_errors(x, 1);
  assert_contains(out(x), "error: model `m` is missing required field `vocab`");
  assert_contains(out(x), "note: needed by scenario `s`");
  /* the note follows its error */
  assert_true(strstr(out(x), "note: needed by") > strstr(out(x), "missing required field"));
  free_s(x);
}

TEST(template_is_not_an_error) {
  S *x = new_s();
  /* partial declarations that nothing uses */
  check(x, "model base { norm = layernorm; ffn = 4 * hidden }\nplan half { tp = 2 }\ngpu g { sms = 1 }\n"
           "cluster c { nodes = 1 }\n");
  expect_errors(x, 0);
  /* a partial base, completed by the child that a scenario uses */
  scenario(x, MODEL, PLAN); /* baseline */
  expect_errors(x, 0);
  check(x, GPU CLUSTER "model base { hidden = 1024; heads = 16; ffn = 4 * hidden }\n"
                       "model m extends base { layers = 8; seq = 2048; vocab = 50000 }\n"
                       "plan p { " PLAN " }\nscenario s { model = m; cluster = c; plan = p }\n");
  expect_errors(x, 0);
  free_s(x);
}

TEST(extends_cycle) {
  S *x = new_s();
  check(x, "model a extends b {}\nmodel b extends a {}\n");
  if (x->errors < 1) fail_msg("no error for an extends cycle");
  assert_contains(out(x), "`extends` cycle");
  check(x, "model a extends a {}\n");
  if (x->errors < 1) fail_msg("no error for a declaration extending itself");
  assert_contains(out(x), "`extends` cycle");
  check(x, "plan a extends c {}\nplan b extends a {}\nplan c extends b {}\n");
  if (x->errors < 1) fail_msg("no error for a cycle of three");
  assert_contains(out(x), "`extends` cycle");
  free_s(x);
}

TEST(extends_of_another_kind) {
  S *x = new_s();
  check(x, "model m {}\nplan p extends m {}\n");
  expect_errors(x, 1);
  assert_contains(out(x),
                  "main.llmp:2:16: error: plan `p` cannot extend model `m`: a declaration extends one of its own kind");
  assert_contains(out(x), "main.llmp:1:7: note: `m` is declared here");
  free_s(x);
}

TEST(sweep_extends_scenario) {
  S *x = new_s();
  check(x, GPU CLUSTER "model m { " MODEL " }\nplan p { " PLAN " }\n"
                       "scenario s { model = m; cluster = c; plan = p }\n"
                       "sweep w extends s {\n  vary plan.tp in [1, 2]\n  minimize iteration\n  keep 3\n}\n");
  expect_errors(x, 0);
  free_s(x);
}

TEST(extends_undeclared_with_suggestion) {
  S *x = new_s();
  check(x, "model base {}\nmodel b extends bsae {}\n");
  expect_errors(x, 1);
  assert_contains(out(x), "model `b` extends `bsae`, which is not declared; did you mean `base`?");
  free_s(x);
}

TEST(duplicate_declaration_with_note) {
  S *x = new_s();
  check(x, "plan p { tp = 1 }\nmodel p {}\n");
  expect_errors(x, 1);
  assert_contains(out(x), "main.llmp:2:7: error: `p` is declared twice\n");
  assert_contains(out(x), "main.llmp:1:6: note: first declared here as plan `p`\n");
  assert_true(strstr(out(x), "note: first declared") > strstr(out(x), "declared twice"));
  free_s(x);
}

TEST(field_set_twice_with_note) {
  S *x = new_s();
  check(x, "model m {\n  layers = 2\n  layers = 3\n}\n");
  expect_errors(x, 1);
  assert_contains(out(x), "main.llmp:3:3: error: field `layers` is set twice\n");
  assert_contains(out(x), "main.llmp:2:3: note: first set here\n");
  assert_true(strstr(out(x), "note: first set here") > strstr(out(x), "set twice"));
  free_s(x);
}

TEST(enum_with_suggestion) {
  S *x = new_s();
  check(x, "plan p { schedule = interleavd }\n");
  expect_errors(x, 1);
  assert_contains(out(x), "`interleavd` is not a valid schedule: expected `gpipe`, `1f1b`, `interleaved` or "
                          "`zero_bubble` (did you mean `interleaved`?)");
  check(x, "plan p { schedule = 1f1b; dtype = bf16; recompute = selective; placement = [tp, dp, pp] }\n");
  expect_errors(x, 0);
  check(x, "plan p { placement = [tp, dp, tp] }\n");
  expect_errors(x, 1);
  assert_contains(out(x), "`tp` appears twice in `placement`");
  free_s(x);
}

TEST(dimension_mismatch_names_both) {
  S *x = new_s();
  check(x, "gpu g { memory_bandwidth = 80 GiB }\n");
  expect_errors(x, 1);
  assert_contains(out(x), "`memory_bandwidth` expects bytes/second (bandwidth), found bytes (size)");
  check(x, "gpu g { memory = 1 GB + 1 s }\n");
  expect_errors(x, 1);
  assert_contains(out(x), "`+` needs operands of the same dimension: bytes (size) and seconds (time)");
  check(x, "gpu g { memory = 80 }\n");
  expect_errors(x, 1);
  assert_contains(out(x), "`memory` needs a unit: expected bytes (size), found a plain number");
  /* units that agree: GiB, bits per second, a product of bandwidth and time */
  check(x, "gpu g { memory = 2 * 40 GiB; memory_bandwidth = 25 Gb/s; l2_cache = 2 GB/s * 3 s }\n");
  expect_errors(x, 0);
  free_s(x);
}

TEST(count_with_unit) {
  S *x = new_s();
  check(x, "model m { layers = 44 GB }\n");
  expect_errors(x, 1);
  assert_contains(out(x), "main.llmp:1:20: error: `layers` is a count, with no unit; found bytes (size)");
  free_s(x);
}

TEST(count_must_be_whole) {
  S *x = new_s();
  check(x, "model m { layers = 2.5 }\n");
  expect_errors(x, 1);
  assert_contains(out(x), "`layers` must be a whole number, found 2.5");
  check(x, "model m { hidden = 1000; heads = hidden / 3 }\n");
  expect_errors(x, 1);
  assert_contains(out(x), "`heads` must be a whole number, but this division gives 333.333");
  /* a real that is whole is accepted where a count is expected */
  check(x, "plan p { dp_bucket_elements = 1.26e9 }\n");
  expect_errors(x, 0);
  free_s(x);
}

TEST(range_checks) {
  S *x = new_s();
  check(x, "cluster c { nodes = -4 }\n");
  expect_errors(x, 1);
  assert_contains(out(x), "`nodes` must be at least 1, found -4");
  check(x, "plan p { zero = 4 }\n");
  expect_errors(x, 1);
  assert_contains(out(x), "`zero` must be at least 0 and at most 3, found 4");
  check(x, "plan p { zero = 0 }\n");
  expect_errors(x, 0);
  check(x, "cluster c { tier t { span = node; bandwidth = 1 GB/s; latency = 1 us; efficiency = 0 } }\n");
  expect_errors(x, 1);
  assert_contains(out(x), "`efficiency` must be more than 0 and at most 1, found 0");
  check(x, "model m { rotary_fraction = 1.5 }\n");
  expect_errors(x, 1);
  assert_contains(out(x), "`rotary_fraction` must be at least 0 and at most 1, found 1.5");
  free_s(x);
}

TEST(derived_field_cannot_be_set) {
  S *x = new_s();
  check(x, "cluster c { gpus = 8 }\n");
  expect_errors(x, 1);
  assert_contains(out(x), "`gpus` is computed from other fields and cannot be set");
  free_s(x);
}

TEST(unknown_name_with_suggestion) {
  S *x = new_s();
  check(x, "model m { hidden = 1024; ffn = 4 * hiden }\n");
  expect_errors(x, 1);
  assert_contains(out(x), "unknown name `hiden`; did you mean `hidden`?");
  free_s(x);
}

TEST(field_depends_on_itself) {
  S *x = new_s();
  check(x, "model m { hidden = ffn / 4; ffn = 4 * hidden }\n");
  if (x->errors < 1) fail_msg("no error for fields that depend on each other");
  assert_contains(out(x), "depends on its own value");
  free_s(x);
}

TEST(division_by_zero) {
  S *x = new_s();
  check(x, "model m { hidden = 1024 / 0 }\n");
  expect_errors(x, 1);
  assert_contains(out(x), "division by zero");
  free_s(x);
}

TEST(cluster_needs_a_tier_where_used) {
  S *x = new_s();
  check(x, GPU "cluster c { gpu = g; gpus_per_node = 4; nodes = 2 }\nmodel m { " MODEL " }\nplan p { " PLAN " }\n"
               "scenario s { model = m; cluster = c; plan = p }\n");
  expect_errors(x, 1);
  assert_contains(out(x), "cluster `c` has no network `tier`");
  check(x, "cluster c { tier nv { span = node; bandwidth = 1 GB/s } }\n");
  expect_errors(x, 1);
  assert_contains(out(x), "`tier nv` is missing required field `latency`");
  free_s(x);
}

/* --- divisibility ------------------------------------------------------------------ */

TEST(divides_heads_by_tp) {
  divides("layers = 8; hidden = 1536; heads = 12; seq = 2048; vocab = 50000; ffn = 4096",
          "tp = 8; pp = 1; dp = 1; micro_batch = 1; global_batch = 8",
          "main.llmp:10:38: error: scenario `s`: model.heads = 12 does not divide by plan.tp = 8");
}

TEST(divides_kv_heads_by_tp) {
  /* heads 24 divide by kv_heads 12 and by tp 8; only kv_heads by tp fails */
  divides("layers = 8; hidden = 1536; heads = 24; kv_heads = 12; seq = 2048; vocab = 50000; ffn = 4096",
          "tp = 8; pp = 1; dp = 1; micro_batch = 1; global_batch = 8",
          "scenario `s`: model.kv_heads = 12 does not divide by plan.tp = 8");
}

TEST(divides_heads_by_kv_heads) {
  divides("layers = 8; hidden = 1024; heads = 16; kv_heads = 6; seq = 2048; vocab = 50000; ffn = 4096",
          "tp = 2; pp = 1; dp = 4; micro_batch = 1; global_batch = 8",
          "scenario `s`: model.heads = 16 does not divide by model.kv_heads = 6");
}

/* docs/language.md: "the checker verifies ... `model.kv_heads % plan.tp == 0`", with no
 * exception for fewer key/value heads than tp. */
TEST(divides_kv_heads_fewer_than_tp) {
  divides("layers = 8; hidden = 1024; heads = 16; kv_heads = 4; seq = 2048; vocab = 50000; ffn = 4096",
          "tp = 8; pp = 1; dp = 1; micro_batch = 1; global_batch = 8",
          "scenario `s`: model.kv_heads = 4 does not divide by plan.tp = 8");
}

TEST(divides_layers_by_pipeline_stages) {
  divides("layers = 10; hidden = 1024; heads = 16; seq = 2048; vocab = 50000; ffn = 4096",
          "tp = 2; pp = 4; dp = 1; micro_batch = 1; global_batch = 8",
          "scenario `s`: model.layers = 10 does not divide by plan.pp * plan.virtual_stages = 4*1 = 4");
  divides("layers = 12; hidden = 1024; heads = 16; seq = 2048; vocab = 50000; ffn = 4096",
          "tp = 2; pp = 4; dp = 1; virtual_stages = 2; schedule = interleaved; micro_batch = 1; global_batch = 8",
          "scenario `s`: model.layers = 12 does not divide by plan.pp * plan.virtual_stages = 4*2 = 8");
}

TEST(layer_partition_balanced) {
  S *x = new_s();
  scenario(x, "layers = 10; hidden = 1024; heads = 16; seq = 2048; vocab = 50000; ffn = 4096",
           "tp = 2; pp = 4; dp = 1; layer_partition = balanced; micro_batch = 1; global_batch = 8");
  expect_errors(x, 0);
  scenario(x, "layers = 3; hidden = 1024; heads = 16; seq = 2048; vocab = 50000; ffn = 4096",
           "tp = 2; pp = 4; dp = 1; layer_partition = balanced; micro_batch = 1; global_batch = 8");
  expect_errors(x, 1);
  assert_contains(out(x), "model.layers = 3 is fewer than the 4 pipeline stages");
  free_s(x);
}

TEST(divides_global_batch) {
  divides(MODEL, "tp = 2; pp = 2; dp = 2; micro_batch = 4; global_batch = 12",
          "scenario `s`: plan.global_batch = 12 does not divide by micro_batch * dp = 4*2 = 8");
}

TEST(divides_gpus_by_product) {
  divides(MODEL, "tp = 2; pp = 2; dp = 3; micro_batch = 1; global_batch = 12",
          "scenario `s`: the plan uses tp*pp*dp*cp = 2*2*3*1 = 12 GPUs, but the cluster has 8");
}

TEST(divides_gpus_without_dp) {
  divides(MODEL, "tp = 3; pp = 1; micro_batch = 1; global_batch = 8",
          "scenario `s`: the cluster's 8 GPUs do not divide by tp*pp*cp = 3*1*1 = 3");
  /* without dp, dp is the cluster's GPUs over tp*pp*cp: 8 / (2*2) = 2 */
  S *x = new_s();
  scenario(x, MODEL, "tp = 2; pp = 2; micro_batch = 1; global_batch = 6");
  expect_errors(x, 0);
  scenario(x, MODEL, "tp = 2; pp = 2; micro_batch = 2; global_batch = 6");
  expect_errors(x, 1);
  assert_contains(out(x), "plan.global_batch = 6 does not divide by micro_batch * dp = 2*2 = 4");
  free_s(x);
}

TEST(divides_seq_by_cp) {
  divides("layers = 8; hidden = 1024; heads = 16; seq = 2049; vocab = 50000; ffn = 4096",
          "tp = 1; pp = 1; cp = 2; dp = 4; micro_batch = 1; global_batch = 8",
          "scenario `s`: model.seq = 2049 does not divide by 2 * plan.cp = 2*2 = 4 (2 cp chunks a sequence)");
  divides("layers = 8; hidden = 1024; heads = 16; seq = 2050; vocab = 50000; ffn = 4096",
          "tp = 1; pp = 1; cp = 2; dp = 4; micro_batch = 1; global_batch = 8",
          "scenario `s`: model.seq = 2050 does not divide by 2 * plan.cp = 2*2 = 4 (2 cp chunks a sequence)");
}

TEST(divides_experts_by_ep) {
  divides("layers = 8; hidden = 1024; heads = 16; seq = 2048; vocab = 50000; ffn = 4096; experts = 6; top_k = 2",
          "tp = 2; pp = 2; dp = 2; ep = 4; micro_batch = 1; global_batch = 8",
          "scenario `s`: model.experts = 6 does not divide by plan.ep = 4");
  divides(MODEL, "tp = 2; pp = 2; dp = 2; ep = 2; micro_batch = 1; global_batch = 8",
          "scenario `s`: plan.ep = 2 but the model has no experts");
}

TEST(divides_hidden_by_heads) {
  divides("layers = 8; hidden = 1000; heads = 16; seq = 2048; vocab = 50000; ffn = 4096", PLAN,
          "scenario `s`: model.hidden = 1000 does not divide by model.heads = 16; set `head_dim`");
  S *x = new_s();
  scenario(x, "layers = 8; hidden = 1000; heads = 16; head_dim = 64; seq = 2048; vocab = 50000; ffn = 4096", PLAN);
  expect_errors(x, 0);
  free_s(x);
}

TEST(virtual_stages_need_interleaved) {
  divides(MODEL, "tp = 2; pp = 2; dp = 2; virtual_stages = 2; schedule = 1f1b; micro_batch = 1; global_batch = 8",
          "scenario `s`: plan.virtual_stages = 2 needs schedule = interleaved, not 1f1b");
  S *x = new_s();
  scenario(x, MODEL,
           "tp = 2; pp = 2; dp = 2; virtual_stages = 2; schedule = interleaved; micro_batch = 1; global_batch = 8");
  expect_errors(x, 0);
  free_s(x);
}

/* docs/language.md: the checker verifies "that `virtual_stages > 1` comes with
 * `schedule = interleaved`": a plan that sets virtual stages and no schedule does not. */
TEST(virtual_stages_without_schedule) {
  S *x = new_s();
  scenario(x, MODEL, "tp = 2; pp = 2; dp = 2; virtual_stages = 2; micro_batch = 1; global_batch = 8");
  expect_errors(x, 1);
  assert_contains(out(x), "virtual_stages = 2");
  assert_contains(out(x), "interleaved");
  free_s(x);
}

TEST(divisibility_with_inline_extension) {
  S *x = new_s();
  /* 4 nodes of 4: 16 GPUs, and the plan's 2*2*2 = 8 no longer matches */
  check(x, GPU CLUSTER "model m { " MODEL " }\nplan p { " PLAN " }\n"
                       "scenario s { model = m; cluster = c { nodes = 4 }; plan = p }\n");
  expect_errors(x, 1);
  assert_contains(out(x), "the plan uses tp*pp*dp*cp = 2*2*2*1 = 8 GPUs, but the cluster has 16");
  check(x, GPU CLUSTER "model m { " MODEL " }\nplan p { " PLAN " }\n"
                       "scenario s { model = m; cluster = c { nodes = 4 }; plan = p { dp = 4 } }\n");
  expect_errors(x, 0);
  free_s(x);
}

/* `heads = hidden / 64` in a base model follows each child's hidden. */
TEST(late_bound_field_divisibility) {
  S *x = new_s();
  check(x, GPU CLUSTER
        "model base { layers = 8; hidden = 768; heads = hidden / 64; seq = 2048; vocab = 50000; ffn = 4 * hidden }\n"
        "model big extends base { hidden = 1024 }\n"
        "model odd extends base { hidden = 640 }\n"
        "plan p { tp = 4; pp = 1; dp = 2; micro_batch = 1; global_batch = 8 }\n"
        "scenario s0 { model = base; cluster = c; plan = p }\n"
        "scenario s1 { model = big; cluster = c; plan = p }\n"
        "scenario s2 { model = odd; cluster = c; plan = p }\n");
  expect_errors(x, 1);
  assert_contains(out(x), "scenario `s2`: model.heads = 10 does not divide by plan.tp = 4");
  free_s(x);
}

TEST(late_bound_field_error_names_the_child) {
  S *x = new_s();
  check(x, "model base { hidden = 768; ffn = hidden / 3 }\nmodel odd extends base { hidden = 1000 }\n");
  expect_errors(x, 1);
  assert_contains(out(x), "main.llmp:1:34: error: `ffn` must be a whole number, but this division gives 333.333");
  assert_contains(out(x), "(in model `odd`, which inherits this field)");
  free_s(x);
}

TEST(child_overrides_parent_field) {
  S *x = new_s();
  check(x, GPU CLUSTER "model base { " MODEL " }\nmodel m extends base { heads = 12; hidden = 1536 }\n"
                       "plan p { tp = 8; pp = 1; dp = 1; micro_batch = 1; global_batch = 8 }\n"
                       "scenario s { model = m; cluster = c; plan = p }\n");
  expect_errors(x, 1);
  assert_contains(out(x), "model.heads = 12 does not divide by plan.tp = 8");
  free_s(x);
}

TEST(block_lets_and_ops) {
  S *x = new_s();
  check(x, "block b {\n  let t = plan.micro_batch * model.seq\n"
           "  op up = linear(t, model.hidden, model.ffn, split = column)\n  op sum = add(t * model.hidden)\n}\n");
  expect_errors(x, 0);
  check(x, "block b {\n  op up = linaer(1, 2, 3)\n}\n");
  expect_errors(x, 1);
  assert_contains(out(x), "unknown operator `linaer`; did you mean `linear`?");
  check(x, "block b {\n  op up = linear(1, 2)\n}\n");
  expect_errors(x, 1);
  assert_contains(out(x), "`linear` is missing argument `out`");
  check(x, "block b {\n  let a = c + 1\n  let c = a + 1\n  op s = add(a)\n}\n");
  if (x->errors < 1) fail_msg("no error for lets that depend on each other");
  assert_contains(out(x), "depends on its own value");
  check(x, "block b {\n  op s = add(model.hiden)\n}\n");
  expect_errors(x, 1);
  assert_contains(out(x), "unknown field `hiden` in model; did you mean `hidden`?");
  free_s(x);
}

TEST(sweep_rules) {
  S *x = new_s();
  const char *base = GPU CLUSTER "model m { " MODEL " }\nplan p { " PLAN " }\n"
                                 "scenario s { model = m; cluster = c; plan = p }\n";
  char text[4096];
  snprintf(text, sizeof text, "%ssweep w extends s { keep 3 }\n", base);
  check(x, text);
  expect_errors(x, 1);
  assert_contains(out(x), "sweep `w` varies nothing");
  snprintf(text, sizeof text, "%ssweep w extends s {\n  vary plan.tpp in [1, 2]\n}\n", base);
  check(x, text);
  expect_errors(x, 1);
  assert_contains(out(x), "unknown field `tpp` in plan; did you mean `tp`?");
  snprintf(text, sizeof text, "%ssweep w extends s {\n  vary plan.tp in [1, 2 GB]\n}\n", base);
  check(x, text);
  expect_errors(x, 1);
  assert_contains(out(x), "`tp` is a count, with no unit; found bytes (size)");
  snprintf(text, sizeof text,
           "%ssweep w extends s {\n  vary plan.tp in [1, 2]\n  minimize iteration\n  maximize mfu\n}\n", base);
  check(x, text);
  expect_errors(x, 1);
  assert_contains(out(x), "a sweep has one objective");
  free_s(x);
}

TEST(empty_file_declares_nothing) {
  S *x = new_s();
  check(x, "");
  expect_errors(x, 1);
  assert_contains(out(x), "the file declares nothing (it is empty)");
  check(x, "# just a comment\n\n");
  expect_errors(x, 1);
  assert_contains(out(x), "the file declares nothing (it holds only comments and blank lines)");
  free_s(x);
}

TEST(missing_root_file) {
  S *x = new_s();
  char path[512];
  snprintf(path, sizeof path, "%s/nothere.llmp", x->src);
  run_path(x, path);
  expect_errors(x, 1);
  assert_contains(out(x), "nothere.llmp: error: cannot read file");
  free_s(x);
}

TEST(syntax_errors_stop_before_checks) {
  S *x = new_s();
  check(x, "model m { layers = 44 GB\n  x = = 1\n}\n");
  expect_errors(x, 1); /* the syntax error; the count-with-unit is not checked */
  assert_not_contains(out(x), "count");
  free_s(x);
}

TEST(functions_min_max_ceil_floor) {
  S *x = new_s();
  check(x, "model m { hidden = 1000; ffn = max(hidden, 4096); heads = ceil(hidden / 3); seq = floor(2048.5); "
           "layers = min(2, 3, 1) }\n");
  expect_errors(x, 0);
  check(x, "model m { ffn = max(1 GB, 2) }\n");
  expect_errors(x, 1);
  assert_contains(out(x), "`max` needs arguments of one dimension: bytes (size) and a plain number");
  check(x, "model m { ffn = sqrt(4) }\n");
  expect_errors(x, 1);
  assert_contains(out(x), "unknown function `sqrt`: the functions are min, max, ceil and floor");
  free_s(x);
}

static char *big_text(size_t n) {
  char *s = malloc(n);
  assert_non_null(s);
  s[0] = '\0';
  return s;
}

/* A long extends chain must not crash, and whether it is accepted cannot depend on the
 * order the declarations are written in (declarations share one namespace; order is free). */
TEST(long_extends_chain_same_in_any_order) {
  S *x = new_s();
  enum { N = 2000 };
  char *t = big_text(N * 48 + 64);
  size_t k = (size_t)sprintf(t, "model m0 { layers = 1 }\n");
  for (int i = 1; i < N; i++) k += (size_t)sprintf(t + k, "model m%d extends m%d {}\n", i, i - 1);
  check(x, t);
  int forward = x->errors;
  char *fwd_out = strdup(out(x));
  k = (size_t)sprintf(t, "model m0 { layers = 1 }\n");
  for (int i = N - 1; i >= 1; i--) k += (size_t)sprintf(t + k, "model m%d extends m%d {}\n", i, i - 1);
  check(x, t);
  if (x->errors != forward)
    fail_msg("an extends chain of %d gives %d error(s) written parent first, %d written child first:\n%s---\n%s", N,
             forward, x->errors, fwd_out, out(x));
  /* a chain within the limit is fine in any order */
  k = (size_t)sprintf(t, "model m0 { layers = 1 }\n");
  for (int i = 199; i >= 1; i--) k += (size_t)sprintf(t + k, "model m%d extends m%d {}\n", i, i - 1);
  check(x, t);
  expect_errors(x, 0);
  free(fwd_out);
  free(t);
  free_s(x);
}

/* Long chains of references (lets in a block, fields through other declarations) must
 * not crash, and give the same result whichever end of the chain is written first. */
TEST(long_reference_chains_same_in_any_order) {
  S *x = new_s();
  enum { N = 3000 };
  char *t = big_text(N * 64 + 64);
  int errs[2][2];
  char *outs[2][2];
  for (int rev = 0; rev < 2; rev++) {
    /* lets in a block: a0 = a1 + 1, ..., a(N-1) = 1 */
    size_t k = (size_t)sprintf(t, "block b {\n");
    if (rev) k += (size_t)sprintf(t + k, "  let a%d = 1\n", N - 1);
    for (int n = 0; n < N - 1; n++) {
      int i = rev ? N - 2 - n : n;
      k += (size_t)sprintf(t + k, "  let a%d = a%d + 1\n", i, i + 1);
    }
    if (!rev) k += (size_t)sprintf(t + k, "  let a%d = 1\n", N - 1);
    sprintf(t + k, "  op s = add(a0)\n}\n");
    check(x, t);
    errs[0][rev] = x->errors;
    outs[0][rev] = strdup(out(x));
    /* fields through other declarations: m0.layers = m1.layers, ..., m(N-1).layers = 1 */
    k = 0;
    if (rev) k += (size_t)sprintf(t + k, "model m%d { layers = 1 }\n", N - 1);
    for (int n = 0; n < N - 1; n++) {
      int i = rev ? N - 2 - n : n;
      k += (size_t)sprintf(t + k, "model m%d { layers = m%d.layers }\n", i, i + 1);
    }
    if (!rev) sprintf(t + k, "model m%d { layers = 1 }\n", N - 1);
    check(x, t);
    errs[1][rev] = x->errors;
    outs[1][rev] = strdup(out(x));
  }
  static const char *const what[] = {"lets", "field references"};
  for (int w = 0; w < 2; w++)
    if (errs[w][0] != errs[w][1])
      fail_msg("a chain of %d %s gives %d error(s) written from the top, %d written from the end:\n%s---\n%s", N,
               what[w], errs[w][0], errs[w][1], outs[w][0], outs[w][1]);
  for (int w = 0; w < 2; w++) {
    free(outs[w][0]);
    free(outs[w][1]);
  }
  free(t);
  free_s(x);
}

TEST(deep_import_chain_is_an_error) {
  S *x = new_s();
  enum { N = 200 };
  for (int i = 0; i < N; i++) {
    char name[32], text[64];
    snprintf(name, sizeof name, "f%d.llmp", i);
    if (i + 1 < N)
      snprintf(text, sizeof text, "import \"f%d\"\nmodel m%d {}\n", i + 1, i);
    else
      snprintf(text, sizeof text, "model m%d {}\n", i);
    write_at(x->src, name, text);
  }
  check(x, "import \"f0\"\nmodel m extends m10 {}\n");
  if (x->errors < 1) fail_msg("no error for imports %d deep", N);
  assert_contains(out(x), "imports nested more than 128 files deep");
  /* 100 deep is fine */
  write_at(x->src, "f100.llmp", "model m100 {}\n");
  check(x, "import \"f0\"\nmodel m extends m100 {}\n");
  expect_errors(x, 0);
  free_s(x);
}

TEST(numbers_out_of_range) {
  S *x = new_s();
  check(x, "model m { layers = 1e400 }\n");
  expect_errors(x, 1);
  assert_contains(out(x), "number out of range");
  check(x, "model m { layers = 99999999999999999999 }\n");
  expect_errors(x, 1);
  assert_contains(out(x), "integer too large to be exact");
  free_s(x);
}

TEST(dump_shows_assembled_fields) {
  S *x = new_s();
  write_at(x->src, "main.llmp",
           "model base { hidden = 768; ffn = 4 * hidden }\nmodel big extends base { hidden = 1024 }\n");
  char path[512];
  snprintf(path, sizeof path, "%s/main.llmp", x->src);
  Diag d;
  diag_init(&d, NULL);
  diag_set_writer(&d, cap_write, &x->cap);
  SemaOptions opt = {NULL, 0, x->data};
  Sema *s = sema_new(&d, &opt);
  assert_int_equal(sema_run(s, path, true), 0);
  assert_int_equal(sema_ndecls(s), 2);
  char *buf = NULL;
  size_t n = 0;
  FILE *m = open_memstream(&buf, &n);
  sema_dump(s, m);
  fclose(m);
  assert_contains(buf, "model big extends base\n");
  assert_contains(buf, "  hidden = 1024\n");
  assert_contains(buf, "  ffn = 4096  (from base)\n");
  free(buf);
  sema_free(s);
  diag_free(&d);
  free_s(x);
}

/* --- imports ---------------------------------------------------------------------------- */

TEST(import_resolution_order_paths) {
  S *x = new_s();
  char from[256], inc1[256], inc2[256], env1[256], env2[256];
  snprintf(from, sizeof from, "%s/from", x->tmp);
  snprintf(inc1, sizeof inc1, "%s/inc1", x->tmp);
  snprintf(inc2, sizeof inc2, "%s/inc2", x->tmp);
  snprintf(env1, sizeof env1, "%s/env1", x->tmp);
  snprintf(env2, sizeof env2, "%s/env2", x->tmp);
  const char *dirs[] = {from, inc1, inc2, env1, env2, x->data};
  for (int i = 0; i < 6; i++) write_at(dirs[i], "lib.llmp", "model lib {}\n");
  char envv[600];
  snprintf(envv, sizeof envv, "::%s:%s:", env1, env2); /* empty entries are skipped */
  setenv("LLMP_PATH", envv, 1);
  const char *incs[] = {inc1, inc2};
  SemaOptions opt = {incs, 2, x->data};
  for (int i = 0; i < 6; i++) {
    char *p = sema_resolve_import(&opt, from, "lib");
    if (!p) fail_msg("round %d: lib not found", i);
    char want[300];
    snprintf(want, sizeof want, "%s/lib.llmp", dirs[i]);
    if (strcmp(p, want) != 0) fail_msg("round %d: resolved to %s, expected %s", i, p, want);
    free(p);
    remove_at(dirs[i], "lib.llmp");
  }
  assert_null(sema_resolve_import(&opt, from, "lib"));
  unsetenv("LLMP_PATH");
  free_s(x);
}

TEST(import_extension_rules) {
  S *x = new_s();
  write_at(x->src, "a.llmp", "model a {}\n");
  write_at(x->src, "b.txt", "model b {}\n");
  write_at(x->src, "sub/c.llmp", "model c {}\n");
  write_at(x->src, "v1.2/d.llmp", "model d {}\n");
  SemaOptions opt = {NULL, 0, x->data};
  static const struct {
    const char *import, *file;
  } cases[] = {
      {"a", "a.llmp"}, {"a.llmp", "a.llmp"}, {"b.txt", "b.txt"}, {"sub/c", "sub/c.llmp"}, {"v1.2/d", "v1.2/d.llmp"}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    char *p = sema_resolve_import(&opt, x->src, cases[i].import);
    char want[300];
    snprintf(want, sizeof want, "%s/%s", x->src, cases[i].file);
    if (!p || strcmp(p, want) != 0)
      fail_msg("import \"%s\": got %s, expected %s", cases[i].import, p ? p : "NULL", want);
    free(p);
  }
  assert_null(sema_resolve_import(&opt, x->src, "b")); /* b.llmp does not exist */
  /* an absolute path is used as it is */
  char abs[300];
  snprintf(abs, sizeof abs, "%s/sub/c", x->src);
  char *p = sema_resolve_import(&opt, "/nonexistent", abs);
  assert_non_null(p);
  assert_contains(p, "/sub/c.llmp");
  free(p);
  free_s(x);
}

/* The same file name in the importing file's folder, an -I folder, LLMP_PATH and the data
 * folder, each declaring a different model: which one is loaded? */
TEST(import_resolution_order_in_sema) {
  S *x = new_s();
  char inc[256], env[256];
  snprintf(inc, sizeof inc, "%s/inc", x->tmp);
  snprintf(env, sizeof env, "%s/env", x->tmp);
  write_at(x->src, "lib.llmp", "model from_local {}\n");
  write_at(inc, "lib.llmp", "model from_include {}\n");
  write_at(env, "lib.llmp", "model from_path {}\n");
  write_at(x->data, "lib.llmp", "model from_data {}\n");
  setenv("LLMP_PATH", env, 1);
  x->incs[0] = inc;
  x->nincs = 1;
  static const char *const order[] = {"from_local", "from_include", "from_path", "from_data"};
  const char *dirs[] = {x->src, inc, env, x->data};
  for (int i = 0; i < 4; i++) {
    char text[256];
    snprintf(text, sizeof text, "import \"lib\"\nmodel probe extends %s {}\n", order[i]);
    check(x, text);
    if (x->errors) fail_msg("expected lib.llmp with `%s` to be imported:\n%s", order[i], out(x));
    /* the others are not loaded */
    for (int j = i + 1; j < 4; j++) {
      snprintf(text, sizeof text, "import \"lib\"\nmodel probe extends %s {}\n", order[j]);
      check(x, text);
      if (x->errors != 1) fail_msg("`%s` should not be visible while `%s` wins:\n%s", order[j], order[i], out(x));
    }
    remove_at(dirs[i], "lib.llmp");
  }
  check(x, "import \"lib\"\nmodel probe {}\n");
  expect_errors(x, 1);
  assert_contains(out(x), "cannot find import \"lib\"");
  unsetenv("LLMP_PATH");
  free_s(x);
}

/* An imported file's imports are looked up from its own folder first. */
TEST(import_relative_to_importing_file) {
  S *x = new_s();
  write_at(x->src, "sub/a.llmp", "import \"b\"\nmodel a extends from_sub {}\n");
  write_at(x->src, "sub/b.llmp", "model from_sub {}\n");
  write_at(x->src, "b.llmp", "model from_root {}\n");
  check(x, "import \"sub/a\"\nmodel m extends a {}\n");
  expect_errors(x, 0);
  free_s(x);
}

TEST(import_cycle) {
  S *x = new_s();
  write_at(x->src, "a.llmp", "import \"b\"\nmodel a {}\n");
  write_at(x->src, "b.llmp", "import \"a\"\nmodel b {}\n");
  check(x, "import \"a\"\nmodel m {}\n");
  if (x->errors < 1) fail_msg("no error for an import cycle");
  assert_contains(out(x), "import cycle: \"a\" is already being imported");
  assert_contains(out(x), "note: the cycle starts in this file");
  /* a file that imports itself */
  check(x, "import \"main\"\nmodel m {}\n");
  expect_errors(x, 1);
  assert_contains(out(x), "main.llmp:1:1: error: file imports itself");
  /* the root imported back from a file it imports */
  write_at(x->src, "c.llmp", "import \"main\"\nmodel c {}\n");
  check(x, "import \"c\"\nmodel m {}\n");
  if (x->errors < 1) fail_msg("no error for a cycle through the root");
  assert_contains(out(x), "import cycle");
  free_s(x);
}

TEST(import_diamond_is_not_a_cycle) {
  S *x = new_s();
  write_at(x->src, "a.llmp", "import \"c\"\nmodel a {}\n");
  write_at(x->src, "b.llmp", "import \"c\"\nmodel b {}\n");
  write_at(x->src, "c.llmp", "model c {}\n");
  check(x, "import \"a\"\nimport \"b\"\nimport \"./c\"\nmodel m extends c {}\n");
  expect_errors(x, 0);
  free_s(x);
}

TEST(missing_import) {
  S *x = new_s();
  check(x, "import \"nothere\"\nmodel m {}\n");
  expect_errors(x, 1);
  assert_contains(out(x), "main.llmp:1:1: error: cannot find import \"nothere\"");
  free_s(x);
}

TEST(name_from_file_not_imported) {
  S *x = new_s();
  write_at(x->src, "a.llmp", "model ma extends mb {}\n");
  write_at(x->src, "b.llmp", "model mb {}\n");
  check(x, "import \"a\"\nimport \"b\"\nmodel m extends ma {}\n");
  expect_errors(x, 1);
  assert_contains(out(x), "a.llmp:1:18: error: `mb` is declared in ");
  assert_contains(out(x), "b.llmp, which this file does not import");
  /* through another import, a name is visible */
  write_at(x->src, "a.llmp", "import \"b\"\nmodel ma extends mb {}\n");
  check(x, "import \"a\"\nmodel m extends mb {}\n");
  expect_errors(x, 0);
  free_s(x);
}

TEST(duplicate_across_files) {
  S *x = new_s();
  write_at(x->src, "a.llmp", "model m {}\n");
  check(x, "import \"a\"\nplan m {}\n");
  expect_errors(x, 1);
  assert_contains(out(x), "`m` is declared twice");
  assert_contains(out(x), "note: first declared here as ");
  free_s(x);
}

TEST(errors_in_imported_file_are_reported_there) {
  S *x = new_s();
  write_at(x->src, "lib/gpu.llmp", "gpu g { memroy = 1 GB }\n");
  check(x, "import \"lib/gpu\"\nmodel m {}\n");
  expect_errors(x, 1);
  assert_contains(out(x), "lib/gpu.llmp:1:9: error: unknown field `memroy` in gpu");
  free_s(x);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(complete_scenario_is_clean),
      cmocka_unit_test(buffer_replaces_the_file_beside_its_imports),
      cmocka_unit_test(query_reads_fields_through_extends),
      cmocka_unit_test(unknown_field_with_suggestion),
      cmocka_unit_test(unknown_declaration_kind_with_suggestion),
      cmocka_unit_test(missing_required_field_at_use),
      cmocka_unit_test(template_is_not_an_error),
      cmocka_unit_test(extends_cycle),
      cmocka_unit_test(extends_of_another_kind),
      cmocka_unit_test(sweep_extends_scenario),
      cmocka_unit_test(extends_undeclared_with_suggestion),
      cmocka_unit_test(duplicate_declaration_with_note),
      cmocka_unit_test(field_set_twice_with_note),
      cmocka_unit_test(enum_with_suggestion),
      cmocka_unit_test(dimension_mismatch_names_both),
      cmocka_unit_test(count_with_unit),
      cmocka_unit_test(count_must_be_whole),
      cmocka_unit_test(range_checks),
      cmocka_unit_test(derived_field_cannot_be_set),
      cmocka_unit_test(unknown_name_with_suggestion),
      cmocka_unit_test(field_depends_on_itself),
      cmocka_unit_test(division_by_zero),
      cmocka_unit_test(cluster_needs_a_tier_where_used),
      cmocka_unit_test(divides_heads_by_tp),
      cmocka_unit_test(divides_kv_heads_by_tp),
      cmocka_unit_test(divides_heads_by_kv_heads),
      cmocka_unit_test(divides_kv_heads_fewer_than_tp),
      cmocka_unit_test(divides_layers_by_pipeline_stages),
      cmocka_unit_test(layer_partition_balanced),
      cmocka_unit_test(divides_global_batch),
      cmocka_unit_test(divides_gpus_by_product),
      cmocka_unit_test(divides_gpus_without_dp),
      cmocka_unit_test(divides_seq_by_cp),
      cmocka_unit_test(divides_experts_by_ep),
      cmocka_unit_test(divides_hidden_by_heads),
      cmocka_unit_test(virtual_stages_need_interleaved),
      cmocka_unit_test(virtual_stages_without_schedule),
      cmocka_unit_test(divisibility_with_inline_extension),
      cmocka_unit_test(late_bound_field_divisibility),
      cmocka_unit_test(late_bound_field_error_names_the_child),
      cmocka_unit_test(child_overrides_parent_field),
      cmocka_unit_test(block_lets_and_ops),
      cmocka_unit_test(sweep_rules),
      cmocka_unit_test(empty_file_declares_nothing),
      cmocka_unit_test(missing_root_file),
      cmocka_unit_test(syntax_errors_stop_before_checks),
      cmocka_unit_test(functions_min_max_ceil_floor),
      cmocka_unit_test(long_extends_chain_same_in_any_order),
      cmocka_unit_test(long_reference_chains_same_in_any_order),
      cmocka_unit_test(deep_import_chain_is_an_error),
      cmocka_unit_test(numbers_out_of_range),
      cmocka_unit_test(dump_shows_assembled_fields),
      cmocka_unit_test(import_resolution_order_paths),
      cmocka_unit_test(import_extension_rules),
      cmocka_unit_test(import_resolution_order_in_sema),
      cmocka_unit_test(import_relative_to_importing_file),
      cmocka_unit_test(import_cycle),
      cmocka_unit_test(import_diamond_is_not_a_cycle),
      cmocka_unit_test(missing_import),
      cmocka_unit_test(name_from_file_not_imported),
      cmocka_unit_test(duplicate_across_files),
      cmocka_unit_test(errors_in_imported_file_are_reported_there),
  };
  return llmp_run_tests(argc, argv, tests, sizeof tests / sizeof tests[0], remove_leftovers);
}
