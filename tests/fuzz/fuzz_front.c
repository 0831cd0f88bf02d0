/* fuzz_front.c - libFuzzer harness for the whole front end.
 *
 * Each input is one .llmp file.  It is written to input.llmp in a temporary folder made
 * once per process (sema_run takes a path), then:
 *   1. sema_new / sema_run(check = true) / sema_free, with diagnostics discarded: the
 *      scanner, parser, import loader and checker must not crash, leak, hang or trip a
 *      sanitizer on any input;
 *   2. when it checks clean, every scenario of the input is lowered to its cost graph and
 *      evaluated (lower_scenario, graph_eval, lower_report), and every sweep is lowered
 *      with its axes as inputs and staged, and when it has at most 512 points evaluated by
 *      the interpreter (sweep_new, sweep_run; where the pruning skipped simulations, again
 *      without it, and the harness aborts unless the kept rows are the same bits): lowering
 *      and the kernels must not crash, leak or hang on any checked input either;
 *   3. when the input parses without errors, the formatter runs on it and the harness
 *      aborts unless
 *        - fmt(x) parses without errors,
 *        - fmt(fmt(x)) == fmt(x)                       (formatting is idempotent),
 *        - x checks clean  =>  fmt(x) checks clean, with the same number of declarations;
 *   4. when the input starts with `{`, it is also taken as the shards of a sweep for
 *      `llmp merge` (JSON Lines, the sweep reader's input): split at form feeds into up to 8
 *      files, merged (sweep_merge_load) and written in every format, and the harness aborts
 *      unless a merge that succeeds writes JSON Lines that read back (sweep_read) and are
 *      written again byte for byte: what merge writes, merge reads.
 *
 * Imports must not reach outside the temporary folder, so that a run reads nothing but the
 * input and its results do not depend on the machine:
 *   - LLMP_PATH and LLMP_DATA are unset, no -I folders are given, and SemaOptions.data_dir
 *     is the temporary folder;
 *   - the folder holds only input.llmp (formatted.llmp exists only during step 2's check);
 *   - before writing, every string literal whose value (after escapes) starts with `/` or
 *     holds `..` gets its `/` and `.` bytes replaced by `_`: absolute paths and `..` cannot
 *     name another folder.  The string scanner below follows grammar/lexer.l: strings and
 *     comments end at a newline, `#` outside a string starts a comment, and `\` with any
 *     character but a newline is one escape (an unknown escape keeps its character).
 *
 * Build: tests/fuzz/CMakeLists.txt (LLMP_FUZZ=ON, clang); long runs: tests/fuzz/run.sh.
 * As a plain program, `fuzz_front FILE...` runs each FILE once (libFuzzer's driver). */
#include <errno.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "front/fmt.h"
#include "lower/hw.h"
#include "lower/lower.h"
#include "sweep/sweep.h"
#include "sweep/sweep_io.h"
#include "front/parse.h"
#include "front/sema.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

enum { MERGE_FILES = 8 };

static char tmp_dir[4096];
static char input_path[4200];
static char formatted_path[4200];
static char shard_paths[MERGE_FILES][4200];

static void cleanup(void) {
  if (!tmp_dir[0]) return;
  unlink(formatted_path);
  unlink(input_path);
  for (int k = 0; k < MERGE_FILES; k++) unlink(shard_paths[k]);
  rmdir(tmp_dir);
}

static void setup(void) {
  if (tmp_dir[0]) return;
  /* Imports resolve against the input's folder, -I, LLMP_PATH, then the data folder. */
  unsetenv("LLMP_PATH");
  unsetenv("LLMP_DATA");
  const char *base = getenv("TMPDIR");
  if (!base || !*base) base = "/tmp";
  int n = snprintf(tmp_dir, sizeof tmp_dir, "%s/llmp-fuzz-XXXXXX", base);
  if (n < 0 || (size_t)n >= sizeof tmp_dir || !mkdtemp(tmp_dir)) {
    fprintf(stderr, "fuzz_front: cannot make a temporary folder under %s: %s\n", base, strerror(errno));
    abort();
  }
  snprintf(input_path, sizeof input_path, "%s/input.llmp", tmp_dir);
  snprintf(formatted_path, sizeof formatted_path, "%s/formatted.llmp", tmp_dir);
  for (int k = 0; k < MERGE_FILES; k++) snprintf(shard_paths[k], sizeof shard_paths[k], "%s/shard%d.jsonl", tmp_dir, k);
  atexit(cleanup);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  setup();
  return 0;
}

static void discard(void *user, const char *text, size_t len) {
  (void)user;
  (void)text;
  (void)len;
}

static void write_file(const char *path, const char *text, size_t n) {
  FILE *fp = fopen(path, "wb");
  if (!fp || fwrite(text, 1, n, fp) != n || fclose(fp) != 0) {
    fprintf(stderr, "fuzz_front: cannot write %s: %s\n", path, strerror(errno));
    abort();
  }
}

/* Neutralises string literals that could name a file outside the temporary folder. */
static void confine_imports(char *t, size_t n) {
  size_t i = 0;
  while (i < n) {
    if (t[i] == '#') { /* comment: to the end of the line */
      while (i < n && t[i] != '\n') i++;
      continue;
    }
    if (t[i] != '"') {
      i++;
      continue;
    }
    size_t start = ++i; /* first byte inside the quotes */
    char prev = 0;
    bool first = true, bad = false;
    while (i < n && t[i] != '"' && t[i] != '\n') {
      char c = t[i];
      if (c == '\\' && i + 1 < n && t[i + 1] != '\n') c = t[++i]; /* escape: its character */
      if (first && c == '/') bad = true;
      if (prev == '.' && c == '.') bad = true;
      prev = c;
      first = false;
      i++;
    }
    if (bad)
      for (size_t k = start; k < i; k++)
        if (t[k] == '/' || t[k] == '.') t[k] = '_';
    if (i < n && t[i] == '"') i++; /* closing quote; a newline is left alone */
  }
}

/* A sweep that pruned (skipped simulations by a lower bound) keeps the same rows, to the
 * bit, when run again without pruning; aborts otherwise. */
static void same_without_pruning(Sweep *sw, const SweepOptions *o, uint64_t kept, const SweepRow *rows, int nrows) {
  uint64_t *point = malloc(((size_t)nrows + 1) * sizeof *point);
  double *obj = malloc(((size_t)nrows + 1) * sizeof *obj);
  if (!point || !obj) abort();
  for (int i = 0; i < nrows; i++) point[i] = rows[i].point, obj[i] = rows[i].objective;
  SweepOptions all = *o;
  all.no_prune = true;
  SweepMeta m;
  const SweepRow *r2;
  int n2;
  bool same = sweep_run(sw, &all, &m, &r2, &n2) == 0 && n2 == nrows && m.kept == kept;
  for (int i = 0; same && i < nrows; i++)
    same = r2[i].point == point[i] && !memcmp(&r2[i].objective, &obj[i], sizeof(double));
  free(point);
  free(obj);
  if (!same) {
    fprintf(stderr, "\nfuzz_front: a sweep kept other points with pruning than without\n");
    abort();
  }
}

/* Checks path; returns the error count and, through ndecls, the declarations checked; with
 * evaluate, lowers and evaluates its scenarios when it checks clean. */
static int check_file(const char *path, int *ndecls, bool evaluate) {
  Diag d;
  diag_init(&d, NULL);
  diag_set_writer(&d, discard, NULL);
  SemaOptions so = {NULL, 0, tmp_dir};
  Sema *s = sema_new(&d, &so);
  int errors = sema_run(s, path, true);
  if (ndecls) *ndecls = sema_ndecls(s);
  if (!errors && evaluate) { /* the input itself (not its formatted copy): evaluate it */
    HwSet *hw = hw_new(s, &d, &so);
    Decl *list[16];
    int n = sema_root_decls(s, DK_SCENARIO, list, 16);
    for (int i = 0; i < n && i < 16; i++) {
      Lowered l;
      if (lower_scenario(s, hw, list[i], &d, &l) == 0) {
        double *vals = malloc((size_t)l.g.nn * sizeof *vals);
        Report r;
        if (!vals) abort();
        graph_eval(&l.g, NULL, vals);
        lower_report(&l, vals, &r);
        free(vals);
      }
      lower_free(&l);
    }
    /* sweeps: lowered with their axes as inputs, staged, and (when small) every point
     * evaluated by the interpreter and the kept ones lowered again alone */
    n = sema_root_decls(s, DK_SWEEP, list, 16);
    for (int i = 0; i < n && i < 4; i++) {
      SweepOptions o = {1, false, 0, 1, false, NULL, false, false, false, 0, NULL};
      Sweep *sw = sweep_new(s, hw, list[i], &d, &o);
      if (sw && sweep_points(sw) <= 512) {
        SweepMeta m;
        const SweepRow *rows;
        int nrows;
        if (sweep_run(sw, &o, &m, &rows, &nrows) == 0 && sweep_pruned(sw) > 0)
          same_without_pruning(sw, &o, m.kept, rows, nrows);
      }
      sweep_free(sw);
    }
    hw_free(hw);
  }
  sema_free(s);
  diag_free(&d);
  return errors;
}

static void write_stderr(void *user, const char *text, size_t len) {
  (void)user;
  fwrite(text, 1, len, stderr);
}

/* Prints what went wrong with the formatter and aborts (libFuzzer saves the input). */
static void fmt_failure(const char *what, const char *x, size_t nx, const char *f1, size_t n1, const char *f2,
                        size_t n2) {
  fprintf(stderr, "\nfuzz_front: %s\n--- input (%zu bytes)\n%.*s\n--- fmt(input) (%zu bytes)\n%.*s\n", what, nx,
          (int)nx, x, n1, (int)n1, f1);
  if (f2) fprintf(stderr, "--- fmt(fmt(input)) (%zu bytes)\n%.*s\n", n2, (int)n2, f2);
  /* The diagnostics of fmt(input), now printed. */
  Diag d;
  diag_init(&d, NULL);
  diag_set_writer(&d, write_stderr, NULL);
  SrcFile *f = diag_add_file(&d, "fmt(input)", f1, n1);
  Parsed pf;
  parse_alone(&pf, &d, f);
  parsed_free(&pf);
  diag_free(&d);
  abort();
}

/* Parses text as a file named name; returns its canonical layout (malloc'd) or NULL when
 * it does not parse cleanly. */
static char *format(const char *name, const char *text, size_t n, size_t *out_len) {
  Diag d;
  diag_init(&d, NULL);
  diag_set_writer(&d, discard, NULL);
  d.format = DIAG_SHORT; /* only the error count matters; sema_run above covers the human format */
  SrcFile *f = diag_add_file(&d, name, text, n);
  Parsed pf;
  AstNode *root = parse_alone(&pf, &d, f);
  char *out = root ? fmt_file(root, f, pf.p.comments, pf.p.ncomments, out_len) : NULL;
  parsed_free(&pf);
  diag_free(&d);
  return out;
}

static void check_formatter(const char *x, size_t nx, int x_errors, int x_decls) {
  size_t n1, n2;
  char *f1 = format("input.llmp", x, nx, &n1);
  if (!f1) return; /* syntax errors: nothing to format */
  if (strlen(f1) != n1) fmt_failure("fmt_file returned a length that is not the text's", x, nx, f1, n1, NULL, 0);
  char *f2 = format("formatted.llmp", f1, n1, &n2);
  if (!f2) fmt_failure("the formatted text does not parse without errors", x, nx, f1, n1, NULL, 0);
  if (n1 != n2 || memcmp(f1, f2, n1) != 0)
    fmt_failure("formatting is not idempotent: fmt(fmt(x)) != fmt(x)", x, nx, f1, n1, f2, n2);
  if (x_errors == 0) {
    write_file(formatted_path, f1, n1);
    int decls;
    int errors = check_file(formatted_path, &decls, false);
    unlink(formatted_path);
    if (errors || decls != x_decls) {
      char what[160];
      snprintf(what, sizeof what,
               "the input checks clean (%d declarations) but fmt(input) has %d errors (%d declarations)", x_decls,
               errors, decls);
      fmt_failure(what, x, nx, f1, n1, NULL, 0);
    }
  }
  free(f2);
  free(f1);
}

/* An output in memory (open_memstream); aborts when it cannot be made. */
static FILE *mem_stream(char **text, size_t *len) {
  FILE *f = open_memstream(text, len);
  if (!f) abort();
  return f;
}

/* Step 4: the input as the shards' files of `llmp merge`. */
static void fuzz_merge(const char *x, size_t n) {
  static FILE *null_out;
  if (!null_out && !(null_out = fopen("/dev/null", "w"))) abort();
  const char *paths[MERGE_FILES];
  int k = 0;
  for (size_t i = 0, from = 0; i <= n && k < MERGE_FILES; i++)
    if (i == n || x[i] == '\f') {
      write_file(shard_paths[k], x + from, i - from);
      paths[k] = shard_paths[k];
      k++;
      from = i + 1;
    }
  SweepMerge m;
  if (sweep_merge_load(&m, paths, k, null_out) == 0) {
    sweep_write(null_out, SWEEP_TABLE, &m.meta, m.rows, m.nrows);
    sweep_write(null_out, SWEEP_CSV, &m.meta, m.rows, m.nrows);
    char *once = NULL, *twice = NULL;
    size_t n1 = 0, n2 = 0;
    FILE *o = mem_stream(&once, &n1);
    if (sweep_write(o, SWEEP_JSONL, &m.meta, m.rows, m.nrows) || fclose(o)) abort();
    FILE *in = fmemopen(once, n1, "r");
    if (!in) abort();
    SweepDoc doc;
    if (sweep_read(in, "merged", &doc, stderr)) {
      fprintf(stderr, "\nfuzz_front: llmp merge wrote what it cannot read:\n%.*s\n", (int)n1, once);
      abort();
    }
    fclose(in);
    o = mem_stream(&twice, &n2);
    if (sweep_write(o, SWEEP_JSONL, &doc.meta, doc.rows, doc.nrows) || fclose(o)) abort();
    if (n1 != n2 || memcmp(once, twice, n1)) {
      fprintf(stderr, "\nfuzz_front: llmp merge's output read back is written otherwise:\n%.*s\n--- again:\n%.*s\n",
              (int)n1, once, (int)n2, twice);
      abort();
    }
    sweep_doc_free(&doc);
    free(once);
    free(twice);
  }
  sweep_merge_free(&m);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  setup();
  char *x = malloc(size + 1);
  if (!x) abort();
  if (size) memcpy(x, data, size);
  x[size] = '\0';
  confine_imports(x, size);
  write_file(input_path, x, size);

  int decls = 0;
  int errors = check_file(input_path, &decls, true);
  check_formatter(x, size, errors, decls);
  if (size && x[0] == '{') fuzz_merge(x, size);
  free(x);
  return 0;
}
