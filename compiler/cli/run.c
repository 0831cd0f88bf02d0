/* run.c - `llmp run`, `llmp graph` and `llmp validate`: scenarios to reports.
 *
 *   run:      check -> for each scenario: lower -> evaluate -> report (table, json, csv)
 *             [--trace FILE: the Chrome trace of one scenario's iteration]
 *             [--html FILE: the HTML report, a section per scenario (report/html.h)]
 *   graph:    check -> lower one scenario -> evaluate -> the cost graph as dot or JSON
 *   validate: every scenario with `measured { iteration }` in the files and folders given ->
 *             one row each (predicted, measured, error), then mean and maximum |error|
 *             [--html FILE: predicted against measured on log axes]
 *
 * Each FILE is its own compilation.  Exit status: 0; 1 when a file has errors, a scenario
 * cannot be evaluated, or (validate) an error passes --max-error; 2 for a bad command line. */
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "alloc.h"
#include "cli.h"
#include "fileio.h"
#include "front/schema.h"
#include "front/sema.h"
#include "jit/jit.h"
#include "lower/hw.h"
#include "lower/lower.h"
#include "options.h"
#include "report/graph_out.h"
#include "report/report.h"
#include "sorted.h"
#include "strbuf.h"

const char cli_usage_run[] = "usage: llmp run [OPTIONS] FILE...\n"
                             "\n"
                             "Predicts each scenario of each FILE: the time of one training iteration and where it\n"
                             "goes, tokens per second, model FLOP utilisation, and memory per GPU against the GPU's\n"
                             "capacity. A plan that does not fit in memory is reported as not fitting, with its\n"
                             "memory breakdown, and no time. Where a scenario has `measured { ... }`, the error.\n"
                             "\n"
                             "options:\n"
                             "  --scenario NAME   only this scenario (default: every scenario of the file)\n"
                             "  --format FORMAT   table (default), json (JSON Lines: one object per scenario) or csv\n"
                             "  --tokens N        the days, GPU-hours and energy (at the GPUs' TDP) to train on N\n"
                             "                    tokens: 15T, 300B, 2.5M, 1e12\n"
                             "  --trace FILE      write a Chrome trace-event JSON of one iteration of the scenario\n"
                             "                    (with several scenarios, name one with --scenario); open it in\n"
                             "                    Perfetto (ui.perfetto.dev) or chrome://tracing\n"
                             "  --html FILE       also write a self-contained HTML report with charts: breakdown,\n"
                             "                    pipeline schedule, memory per stage, kernel calls (docs/report.md)\n"
                             "  --no-jit          evaluate with the interpreter instead of the JIT (same results)\n"
                             "  --dump=ir         print the LLVM module the JIT compiles (after optimisation)\n"
                             "  -I DIR            also look for imports in DIR; may be repeated\n"
                             "  --error-format=FORMAT, --color=WHEN   as for `llmp check`\n"
                             "  -h, --help        this text\n";

const char cli_usage_graph[] = "usage: llmp graph [OPTIONS] FILE\n"
                               "\n"
                               "Prints the cost graph of a scenario: the DAG of kernel calls (operators, collectives,\n"
                               "the pipeline schedule) and the arithmetic that composes them, with each node's value.\n"
                               "\n"
                               "options:\n"
                               "  --scenario NAME   the scenario (default: the file's only scenario, or its first)\n"
                               "  --format FORMAT   dot (default; render with `dot -Tsvg`) or json\n"
                               "  -I DIR            also look for imports in DIR\n"
                               "  -h, --help        this text\n";

const char cli_usage_validate[] =
    "usage: llmp validate [OPTIONS] PATH...\n"
    "\n"
    "Runs every scenario that has `measured { iteration = ... }` in the .llmp files given and\n"
    "in the folders given (recursively), and prints one row per scenario: predicted and\n"
    "measured iteration time and the error; then the mean and maximum absolute error.\n"
    "\n"
    "options:\n"
    "  --max-error PCT   exit 1 if any scenario's absolute error exceeds PCT percent\n"
    "  --mean-error PCT  exit 1 if the mean absolute error exceeds PCT percent\n"
    "  --format FORMAT   table (default) or csv\n"
    "  --html FILE       also write a self-contained HTML report: predicted against measured\n"
    "                    on log axes with the +-5 % and +-10 % bands (docs/report.md)\n"
    "  --no-jit          evaluate with the interpreter instead of the JIT (same results;\n"
    "                    faster for a few evaluations of many scenarios)\n"
    "  -I DIR            also look for imports in DIR\n"
    "  -h, --help        this text\n";

typedef struct RunOptions {
  CliArgs a; /* the files, -I, the diagnostics' form */
  const char *scenario, *trace, *format, *html;
  double max_error, mean_error; /* percent; -1: not given */
  double tokens;                /* --tokens; 0: not given */
  bool no_jit, dump_ir;
} RunOptions;

enum {
  OPT_NO_JIT, OPT_DUMP_IR, OPT_SCENARIO, OPT_FORMAT, OPT_TRACE, OPT_MAX_ERROR, OPT_MEAN_ERROR, OPT_TOKENS, OPT_HTML
};

/* Each command's own options.  All three also take -I, --error-format, --color and --
 * (graph's and validate's usage texts name fewer of them). */
static const CliOption run_options[] = {
    {"--no-jit", OPT_NO_JIT, 0},
    {"--dump=ir", OPT_DUMP_IR, 0},
    {"--scenario", OPT_SCENARIO, CLI_NEXT},
    {"--format", OPT_FORMAT, CLI_NEXT},
    {"--trace", OPT_TRACE, CLI_NEXT},
    {"--tokens", OPT_TOKENS, CLI_NEXT},
    {"--html", OPT_HTML, CLI_NEXT},
    {NULL, 0, 0},
};
static const CliOption graph_options[] = {
    {"--no-jit", OPT_NO_JIT, 0},
    {"--dump=ir", OPT_DUMP_IR, 0},
    {"--scenario", OPT_SCENARIO, CLI_NEXT},
    {"--format", OPT_FORMAT, CLI_NEXT},
    {NULL, 0, 0},
};
static const CliOption validate_options[] = {
    {"--no-jit", OPT_NO_JIT, 0},
    {"--dump=ir", OPT_DUMP_IR, 0},
    {"--format", OPT_FORMAT, CLI_NEXT},
    {"--max-error", OPT_MAX_ERROR, CLI_NEXT},
    {"--mean-error", OPT_MEAN_ERROR, CLI_NEXT},
    {"--html", OPT_HTML, CLI_NEXT},
    {NULL, 0, 0},
};

static const char *const run_formats[] = {"table", "json", "csv", NULL};
static const char *const graph_formats[] = {"dot", "json", NULL};
static const char *const validate_formats[] = {"table", "csv", NULL};

/* A token count as people write it: 15T, 300B, 2.5M, 40K or a number (1e12); -1 if not one. */
static double token_count(const char *s) {
  char *end;
  double x = strtod(s, &end);
  static const char suffix[] = "KMBT";
  const char *k = *end ? strchr(suffix, *end) : NULL;
  if (k && end[1] == '\0') x *= pow(1e3, (double)(k - suffix + 1)), end++;
  return *end || !(x > 0) || !isfinite(x) || end == s ? -1 : x;
}

static int run_option(void *ctx, int id, const char *value) {
  RunOptions *o = ctx;
  switch (id) {
  case OPT_NO_JIT: o->no_jit = true; break;
  case OPT_DUMP_IR: o->dump_ir = true; break;
  case OPT_SCENARIO: o->scenario = value; break;
  case OPT_FORMAT: o->format = value; break;
  case OPT_TRACE: o->trace = value; break;
  case OPT_HTML: o->html = value; break;
  case OPT_TOKENS:
    o->tokens = token_count(value);
    if (o->tokens < 0)
      return cli_usage_error("run", "--tokens `%s` is not a token count (15T, 300B, 2.5M, 1e12)", value);
    break;
  case OPT_MAX_ERROR:
  case OPT_MEAN_ERROR: {
    char *end;
    double x = strtod(value, &end);
    if (*end || !(x >= 0)) return cli_usage_error("validate", "`%s` is not a percentage", value);
    if (id == OPT_MAX_ERROR)
      o->max_error = x;
    else
      o->mean_error = x;
    break;
  }
  }
  return -1;
}

static bool is_one_of(const char *word, const char *const *words) {
  for (; *words; words++)
    if (!strcmp(word, *words)) return true;
  return false;
}

/* Parses the command line by the command's options and formats, then runs the command. */
static int run_command(const CliCommand *c, const CliOption *options, const char *const *formats, int argc, char **argv,
                       int (*run)(const RunOptions *)) {
  RunOptions o = {.max_error = -1, .mean_error = -1};
  CliSpec spec = {c, CLI_INCLUDE | CLI_INCLUDE_JOINED | CLI_DIAG | CLI_DASHDASH, options, NULL, run_option, NULL, &o};
  int rc = cli_parse(&spec, argc, argv, &o.a);
  if (rc < 0 && !o.a.nargs) rc = cli_usage_error(c->name, "%s", "no input files");
  if (rc < 0 && o.format && !is_one_of(o.format, formats))
    rc = cli_usage_error(c->name, "unknown format `%s`", o.format);
  if (rc < 0) rc = run(&o);
  cli_args_free(&o.a);
  return rc;
}

/* One file's compilation: sema, hardware, diagnostics. */
typedef struct Comp {
  Diag *d;
  const RunOptions *o;
  SemaOptions so;
  Sema *s;
  HwSet *hw;
} Comp;

static bool comp_open(Comp *u, Diag *d, const RunOptions *o, const char *path) {
  u->d = d;
  u->o = o;
  u->so = (SemaOptions){o->a.incdirs, o->a.nincdirs, NULL};
  u->s = sema_new(d, &u->so);
  u->hw = NULL;
  if (sema_run(u->s, path, true)) return false;
  u->hw = hw_new(u->s, d, &u->so);
  return true;
}

static void comp_close(Comp *u) {
  hw_free(u->hw);
  sema_free(u->s);
  diag_flush(u->d);
}

/* One scenario evaluated: its cost graph, the graph's values, the report. */
typedef struct Eval {
  Lowered l;
  double *vals;
  Report r;
} Eval;

/* Evaluates the lowered scenario with the JIT: the whole graph as one level, every node
 * stored, so the values are the interpreter's to the bit.  Returns 0, or -1 after reporting. */
static int eval_jit(Comp *u, Decl *sc, Eval *e) {
  char *msg = NULL;
  Jit *j = jit_compile_graph(&e->l.g, JIT_STORE_ALL | (u->o->dump_ir ? JIT_IR_OPT : 0), &msg);
  if (!j) {
    SrcFile *f;
    Span sp;
    sema_decl_at(u->s, sc, &f, &sp);
    diag_error(u->d, f, sp, "the JIT could not compile scenario `%s`: %s (--no-jit evaluates it with the interpreter)",
               sema_decl_name(sc), msg ? msg : "unknown error");
    free(msg);
    return -1;
  }
  if (u->o->dump_ir) fputs(jit_ir(j, JIT_IR_OPT), stdout);
  jit_level(j, 0)(NULL, e->vals);
  jit_free(j);
  return 0;
}

/* Lowers and evaluates one scenario.  Returns 0, or -1 after reporting; eval_close() after
 * either. */
static int eval_open(Comp *u, Decl *sc, Eval *e) {
  e->vals = NULL;
  if (lower_scenario(u->s, u->hw, sc, u->d, &e->l) < 0) return -1;
  e->vals = xmalloc((size_t)(e->l.g.nn ? e->l.g.nn : 1) * sizeof *e->vals);
  if (u->o->no_jit)
    graph_eval(&e->l.g, NULL, e->vals);
  else if (eval_jit(u, sc, e) < 0)
    return -1;
  lower_report(&e->l, e->vals, &e->r);
  if (!isfinite(e->r.iteration) || !isfinite(e->r.peak)) {
    SrcFile *f;
    Span sp;
    char why[1024];
    sema_decl_at(u->s, sc, &f, &sp);
    lower_why_not_finite(&e->l.g, e->vals, why, sizeof why);
    diag_error(u->d, f, sp, "scenario `%s` cannot be evaluated: %s", sema_decl_name(sc), why);
    return -1;
  }
  return 0;
}

static void eval_close(Eval *e) {
  free(e->vals);
  lower_free(&e->l);
}

void cli_no_such_decl(Diag *d, const char *path, const char *kind, const char *name, Decl *const *all, int total) {
  Suggest sg;
  suggest_init(&sg, name);
  char list[512] = "";
  size_t len = 0;
  for (int i = 0; i < total; i++) {
    suggest_offer(&sg, sema_decl_name(all[i]));
    str_appendf(list, sizeof list, &len, "%s`%s`", i ? ", " : "", sema_decl_name(all[i]));
  }
  if (*suggest_hint(&sg, false))
    diag_plain(d, path, "no %s named `%s`%s", kind, name, suggest_hint(&sg, false));
  else if (total)
    diag_plain(d, path, "no %s named `%s`; the file's %ss: %s", kind, name, kind, list);
  else
    diag_plain(d, path, "no %s named `%s`: the file declares no %s", kind, name, kind);
}

/* The scenarios of a file (only the one named `only`, if given); with `required`, a file
 * without any is an error.  The list is malloc'd. */
static Decl **scenarios_of(Comp *u, const char *only, int *n, const char *path, bool required) {
  int total = sema_root_decls(u->s, DK_SCENARIO, NULL, 0);
  Decl **all = xcalloc((size_t)(total ? total : 1), sizeof *all);
  sema_root_decls(u->s, DK_SCENARIO, all, total);
  *n = total;
  if (only) {
    *n = 0;
    for (int i = 0; i < total; i++)
      if (!strcmp(sema_decl_name(all[i]), only)) all[(*n)++] = all[i];
    if (!*n) cli_no_such_decl(u->d, path, "scenario", only, all, total);
  } else if (!total && required) {
    diag_plain(u->d, path, "declares no scenario to run");
  }
  return all;
}

/* --- run ------------------------------------------------------------------------------- */

typedef struct RunState { /* across the files of one llmp run */
  ReportFormat fmt;
  int failed, printed;
  bool traced; /* --trace is written for the first scenario evaluated */
  CliHtml html; /* --html: a section per scenario */
} RunState;

/* Writes the Chrome trace of one evaluated scenario; 1 after reporting a failure, else 0. */
static int run_trace(Diag *d, const char *path, const Eval *e) {
  AtomicFile a;
  const char *why = "cannot write";
  int rc = atomic_open(&a, path, &why);
  if (rc == 0 && lower_trace(&e->l, e->vals, &e->r, a.fp) != 0) {
    atomic_abort(&a);
    rc = -1;
  } else if (rc == 0) {
    rc = atomic_commit(&a, &why);
  }
  if (rc) diag_plain(d, path, "cannot write the trace: %s", why);
  return rc ? 1 : 0;
}

/* Reports each scenario of one checked file in turn. */
static void run_file(Comp *u, const char *path, RunState *st) {
  const RunOptions *o = u->o;
  int n;
  Decl **list = scenarios_of(u, o->scenario, &n, path, true);
  if (!n) st->failed++;
  if (o->trace && n > 1) {
    diag_plain(u->d, path, "--trace needs one scenario: this file has %d; name one with --scenario", n);
    st->failed++;
    n = 0;
  }
  for (int k = 0; k < n; k++) {
    Eval e;
    if (eval_open(u, list[k], &e) == 0) {
      diag_flush(u->d);
      e.r.train_tokens = o->tokens;
      if (st->fmt != REPORT_CSV) lower_fit_changes(u->s, u->hw, list[k], NULL, &e.r);
      if (st->fmt == REPORT_TABLE && st->printed) fputc('\n', stdout);
      report_print(stdout, &e.r, st->fmt);
      st->printed++;
      if (st->html.page) html_scenario(st->html.page, &e.l, e.vals, &e.r);
      if (o->trace && !st->traced) {
        st->failed += run_trace(u->d, o->trace, &e);
        st->traced = true;
      }
    } else {
      st->failed++;
    }
    eval_close(&e);
  }
  free(list);
}

static int run_files(const RunOptions *o) {
  Diag d;
  cli_diag_init(&d, &o->a);
  RunState st = {.fmt = REPORT_TABLE};
  if (o->html && cli_html_open(&d, o->html, "run", o->a.args, o->a.nargs, &st.html)) {
    diag_free(&d);
    return 1;
  }
  if (o->format && !strcmp(o->format, "json"))
    st.fmt = REPORT_JSON;
  else if (o->format && !strcmp(o->format, "csv"))
    st.fmt = REPORT_CSV;
  if (st.fmt == REPORT_CSV) report_csv_header(stdout);
  for (int i = 0; i < o->a.nargs; i++) {
    Comp u;
    if (comp_open(&u, &d, o, o->a.args[i]))
      run_file(&u, o->a.args[i], &st);
    else
      st.failed++;
    comp_close(&u);
  }
  st.failed += cli_html_close(&d, &st.html, !st.failed);
  diag_flush(&d);
  diag_free(&d);
  return st.failed ? 1 : 0;
}

int cli_run(int argc, char **argv, const CliCommand *c) {
  return run_command(c, run_options, run_formats, argc, argv, run_files);
}

/* --- graph ----------------------------------------------------------------------------- */

static int graph_file(const RunOptions *o) {
  Diag d;
  cli_diag_init(&d, &o->a);
  int rc = 1;
  Comp u;
  if (o->a.nargs != 1) {
    diag_free(&d);
    return cli_usage_error("graph", "%s", "takes one file");
  }
  if (comp_open(&u, &d, o, o->a.args[0])) {
    int n;
    Decl **list = scenarios_of(&u, o->scenario, &n, o->a.args[0], true);
    if (n) {
      Eval e;
      if (eval_open(&u, list[0], &e) == 0) {
        if (o->format && !strcmp(o->format, "json"))
          graph_dump_json(stdout, &e.l.g, e.vals);
        else
          graph_dump_dot(stdout, &e.l.g, e.vals);
        rc = 0;
      }
      eval_close(&e);
    }
    free(list);
  }
  comp_close(&u);
  diag_free(&d);
  return rc;
}

int cli_graph(int argc, char **argv, const CliCommand *c) {
  return run_command(c, graph_options, graph_formats, argc, argv, graph_file);
}

/* --- validate -------------------------------------------------------------------------- */

typedef struct PathList {
  char **v;
  int n, cap;
} PathList;

static void push_path(PathList *p, const char *s) {
  XGROW(p->v, p->n + 1, p->cap);
  p->v[p->n++] = xstrdup(s);
}

/* The .llmp files under a folder, recursively, in name order; a folder that cannot be read
 * is an error (false), an entry that is not a regular file is skipped with a note. */
static bool collect(Diag *d, PathList *out, const char *dir, int depth) {
  if (depth > 16) return true;
  DIR *dp = opendir(dir);
  if (!dp) {
    diag_plain(d, dir, "cannot read folder: %s", strerror(errno));
    return false;
  }
  PathList here = {0};
  struct dirent *e;
  while ((e = readdir(dp))) {
    if (e->d_name[0] == '.') continue;
    size_t n = strlen(dir) + strlen(e->d_name) + 2;
    char *path = xmalloc(n);
    snprintf(path, n, "%s/%s", dir, e->d_name);
    push_path(&here, path);
    free(path);
  }
  closedir(dp);
  if (here.n) qsort(here.v, (size_t)here.n, sizeof *here.v, cmp_cstr); /* an empty folder: no array */
  bool ok = true;
  for (int i = 0; i < here.n; i++) {
    struct stat st;
    size_t len = strlen(here.v[i]);
    bool llmp = len > 5 && !strcmp(here.v[i] + len - 5, ".llmp");
    if (stat(here.v[i], &st) == 0 && S_ISDIR(st.st_mode))
      ok &= collect(d, out, here.v[i], depth + 1);
    else if (llmp && stat(here.v[i], &st) == 0 && !S_ISREG(st.st_mode))
      diag_plain_note(d, here.v[i], "skipped: not a regular file");
    else if (llmp)
      push_path(out, here.v[i]);
    free(here.v[i]);
  }
  free(here.v);
  return ok;
}

typedef struct ValState { /* across the scenarios of one llmp validate */
  bool csv, header; /* header: printed (before the first row) */
  int failed, rows;
  double sum, worst; /* of |error| in percent, over the rows that fit */
  int errors;        /* files or scenarios that could not be evaluated (no row) */
  CliHtml html;      /* --html: every row */
} ValState;

/* Prints one scenario's row: predicted, measured, error (or why it does not fit). */
static void validate_row(const Report *r, ValState *st) {
  if (!st->header && st->csv)
    puts("scenario,file,gpus,tp,pp,dp,predicted_s,measured_s,error_pct");
  else if (!st->header)
    printf("%-34s %6s %-14s %12s %12s %8s\n", "scenario", "gpus", "tp/pp/dp", "predicted", "measured", "error");
  st->header = true;
  char par[48];
  snprintf(par, sizeof par, "%d/%d/%d", r->tp, r->pp, r->dp);
  if (!r->fits) { /* no prediction: in CSV, empty predicted and error fields */
    char msg[512];
    if (st->csv)
      printf("%s,%s,%d,%d,%d,%d,,%.6g,\n", r->scenario, r->file, r->gpus, r->tp, r->pp, r->dp, r->measured_iteration);
    else
      printf("%-34s %6d %-14s %s\n", r->scenario, r->gpus, par, report_fit_message(msg, sizeof msg, r));
    st->failed++;
    return;
  }
  if (st->csv)
    printf("%s,%s,%d,%d,%d,%d,%.6g,%.6g,%.3f\n", r->scenario, r->file, r->gpus, r->tp, r->pp, r->dp, r->iteration,
           r->measured_iteration, r->error_pct);
  else
    printf("%-34s %6d %-14s %10.3f s %10.3f s %+7.2f%%\n", r->scenario, r->gpus, par, r->iteration,
           r->measured_iteration, r->error_pct);
  st->rows++;
  st->sum += fabs(r->error_pct);
  if (fabs(r->error_pct) > st->worst) st->worst = fabs(r->error_pct);
}

/* The rows of one checked file: its scenarios with `measured { iteration }` or `{ tokens_per_s }`
 * (a file of models only has none and is skipped). */
static void validate_file(Comp *u, const char *path, ValState *st) {
  int n;
  Decl **list = scenarios_of(u, NULL, &n, path, false);
  for (int k = 0; k < n; k++) {
    double x;
    if (!sema_nsubs(list[k], "measured") || (!sema_sub_number(u->s, list[k], "measured", 0, "iteration", &x) &&
                                              !sema_sub_number(u->s, list[k], "measured", 0, "tokens_per_s", &x)))
      continue;
    Eval e;
    if (eval_open(u, list[k], &e) == 0) {
      diag_flush(u->d);
      validate_row(&e.r, st);
      if (st->html.page) html_validate_add(st->html.page, &e.r);
    } else {
      st->failed++;
      st->errors++;
    }
    eval_close(&e);
  }
  free(list);
}

/* The summary line, and the exit status: 1 on a failure or past --max-error or --mean-error. */
static int validate_verdict(const RunOptions *o, const ValState *st) {
  double mean = st->rows ? st->sum / st->rows : 0;
  if (!st->csv && st->header)
    printf("%d scenario%s: mean |error| %.2f %%, max |error| %.2f %%\n", st->rows, st->rows == 1 ? "" : "s", mean,
           st->worst);
  int rc = st->failed ? 1 : 0;
  if (o->max_error >= 0 && st->worst > o->max_error) {
    fprintf(stderr, "llmp validate: max |error| %.2f %% exceeds --max-error %g %%\n", st->worst, o->max_error);
    rc = 1;
  }
  if (o->mean_error >= 0 && mean > o->mean_error) {
    fprintf(stderr, "llmp validate: mean |error| %.2f %% exceeds --mean-error %g %%\n", mean, o->mean_error);
    rc = 1;
  }
  return rc;
}

static int validate_paths(const RunOptions *o) {
  Diag d;
  cli_diag_init(&d, &o->a);
  PathList files = {0};
  int unreadable = 0;
  for (int i = 0; i < o->a.nargs; i++) {
    struct stat st;
    if (stat(o->a.args[i], &st) == 0 && S_ISDIR(st.st_mode)) {
      int before = files.n;
      unreadable += !collect(&d, &files, o->a.args[i], 0);
      if (files.n == before) {
        diag_plain(&d, o->a.args[i], "no .llmp file in this folder");
        unreadable++;
      }
    } else {
      push_path(&files, o->a.args[i]);
    }
  }
  ValState st = {.csv = o->format && !strcmp(o->format, "csv")};
  if (o->html && cli_html_open(&d, o->html, "validate", o->a.args, o->a.nargs, &st.html)) {
    for (int i = 0; i < files.n; i++) free(files.v[i]);
    free(files.v);
    diag_free(&d);
    return 1;
  }
  for (int i = 0; i < files.n; i++) {
    Comp u;
    if (comp_open(&u, &d, o, files.v[i]))
      validate_file(&u, files.v[i], &st);
    else
      st.failed++, st.errors++;
    comp_close(&u);
  }
  st.failed += unreadable;
  st.errors += unreadable;
  if (!st.rows && !st.failed) {
    fprintf(stderr, "llmp validate: no scenario with `measured { iteration }` to compare in the files given: add the "
                    "measured time to a scenario (`measured { iteration = 1.5 s }`), or predict without comparing "
                    "with `llmp run`\n");
    st.failed++;
  }
  if (st.html.page) html_validate(st.html.page, st.rows ? st.sum / st.rows : 0, st.worst);
  int html_rc = cli_html_close(&d, &st.html, !st.errors && st.rows); /* rows that do not fit are shown */
  diag_flush(&d);
  int rc = validate_verdict(o, &st) | html_rc;
  for (int i = 0; i < files.n; i++) free(files.v[i]);
  free(files.v);
  diag_free(&d);
  return rc;
}

int cli_validate(int argc, char **argv, const CliCommand *c) {
  return run_command(c, validate_options, validate_formats, argc, argv, validate_paths);
}
