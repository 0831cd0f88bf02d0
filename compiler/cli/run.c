/* run.c - `llmp run`, `llmp graph` and `llmp validate`: scenarios to reports.
 *
 *   run:      check -> for each scenario: lower -> evaluate -> report (table, json, csv)
 *             [--trace FILE: the Chrome trace of one scenario's iteration]
 *   graph:    check -> lower one scenario -> evaluate -> the cost graph as dot or JSON
 *   validate: every scenario with `measured { iteration }` in the files and folders given ->
 *             one row each (predicted, measured, error), then mean and maximum |error|
 *
 * Each FILE is its own compilation.  Exit status: 0; 1 when a file has errors, a scenario
 * cannot be evaluated, or (validate) an error passes --max-error; 2 for a bad command line. */
#include "run.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cli.h"
#include "lower/hw.h"
#include "jit/jit.h"
#include "lower/lower.h"
#include "report/graph_out.h"
#include "report/report.h"
#include "front/sema.h"

static const char usage_run[] =
    "usage: llmp run [OPTIONS] FILE...\n"
    "\n"
    "Predicts each scenario of each FILE: the time of one training iteration and where it\n"
    "goes, tokens per second, model FLOP utilisation, and memory per GPU against the GPU's\n"
    "capacity. A plan that does not fit in memory is reported as not fitting, with its\n"
    "memory breakdown, and no time. Where a scenario has `measured { ... }`, the error.\n"
    "\n"
    "options:\n"
    "  --scenario NAME   only this scenario (default: every scenario of the file)\n"
    "  --format FORMAT   table (default), json (JSON Lines: one object per scenario) or csv\n"
    "  --trace FILE      write a Chrome trace-event JSON of one iteration of the scenario\n"
    "                    (with several scenarios, name one with --scenario); open it in\n"
    "                    Perfetto (ui.perfetto.dev) or chrome://tracing\n"
    "  --no-jit          evaluate with the interpreter instead of the JIT (same results)\n"
    "  --dump=ir         print the LLVM module the JIT compiles (after optimisation)\n"
    "  -I DIR            also look for imports in DIR; may be repeated\n"
    "  --error-format=FORMAT, --color=WHEN   as for `llmp check`\n"
    "  -h, --help        this text\n";

static const char usage_graph[] =
    "usage: llmp graph [OPTIONS] FILE\n"
    "\n"
    "Prints the cost graph of a scenario: the DAG of kernel calls (operators, collectives,\n"
    "the pipeline schedule) and the arithmetic that composes them, with each node's value.\n"
    "\n"
    "options:\n"
    "  --scenario NAME   the scenario (default: the file's only scenario, or its first)\n"
    "  --format FORMAT   dot (default; render with `dot -Tsvg`) or json\n"
    "  -I DIR            also look for imports in DIR\n"
    "  -h, --help        this text\n";

static const char usage_validate[] =
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
    "  --no-jit          evaluate with the interpreter instead of the JIT (same results;\n"
    "                    faster for a few evaluations of many scenarios)\n"
    "  -I DIR            also look for imports in DIR\n"
    "  -h, --help        this text\n";

typedef struct RunOptions {
  const char **files;
  int nfiles;
  const char **incdirs;
  int nincdirs;
  const char *scenario, *trace, *format;
  double max_error, mean_error;
  bool no_jit, dump_ir;
  DiagFormat diag_format;
  int colour;
} RunOptions;

static int parse_run_options(const char *cmd, const char *usage, int argc, char **argv, RunOptions *o) {
  o->files = calloc((size_t)argc + 1, sizeof *o->files);
  o->incdirs = calloc((size_t)argc + 1, sizeof *o->incdirs);
  o->colour = -1;
  o->max_error = o->mean_error = -1;
  bool is_run = !strcmp(cmd, "run"), is_val = !strcmp(cmd, "validate");
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    const char *next = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      fputs(usage, stdout);
      return 0;
    } else if (!strcmp(a, "--no-jit")) o->no_jit = true;
    else if (!strcmp(a, "--dump=ir")) o->dump_ir = true;
    else if (!strcmp(a, "--error-format=short")) o->diag_format = DIAG_SHORT;
    else if (!strcmp(a, "--error-format=human")) o->diag_format = DIAG_HUMAN;
    else if (!strcmp(a, "--color=always")) o->colour = 1;
    else if (!strcmp(a, "--color=never")) o->colour = 0;
    else if (!strcmp(a, "--color=auto")) o->colour = -1;
    else if (!strcmp(a, "-I") || (!is_val && (!strcmp(a, "--scenario") || !strcmp(a, "--format"))) ||
             (is_run && !strcmp(a, "--trace")) || (is_val && (!strcmp(a, "--max-error") || !strcmp(a, "--mean-error") ||
                                                               !strcmp(a, "--format")))) {
      if (!next) return cli_usage_error(cmd, "%s needs a value", a);
      i++;
      if (!strcmp(a, "-I")) o->incdirs[o->nincdirs++] = next;
      else if (!strcmp(a, "--scenario")) o->scenario = next;
      else if (!strcmp(a, "--trace")) o->trace = next;
      else if (!strcmp(a, "--format")) o->format = next;
      else {
        char *end;
        double x = strtod(next, &end);
        if (*end || !(x >= 0)) return cli_usage_error(cmd, "`%s` is not a percentage", next);
        if (!strcmp(a, "--max-error")) o->max_error = x;
        else o->mean_error = x;
      }
    } else if (!strncmp(a, "-I", 2)) o->incdirs[o->nincdirs++] = a + 2;
    else if (!strcmp(a, "--")) {
      while (++i < argc) o->files[o->nfiles++] = argv[i];
    } else if (a[0] == '-' && a[1]) return cli_usage_error(cmd, "unknown option `%s`", a);
    else o->files[o->nfiles++] = a;
  }
  if (!o->nfiles) return cli_usage_error(cmd, "%s", "no input files");
  if (o->format) {
    bool ok = is_run ? !strcmp(o->format, "table") || !strcmp(o->format, "json") || !strcmp(o->format, "csv")
              : is_val ? !strcmp(o->format, "table") || !strcmp(o->format, "csv")
                       : !strcmp(o->format, "dot") || !strcmp(o->format, "json");
    if (!ok) return cli_usage_error(cmd, "unknown format `%s`", o->format);
  }
  return -1;
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
  u->so = (SemaOptions){o->incdirs, o->nincdirs, NULL};
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

/* Lowers and evaluates one scenario.  Returns 0, or -1 after reporting; eval_close() after
 * either. */
static int eval_open(Comp *u, Decl *sc, Eval *e) {
  e->vals = NULL;
  if (lower_scenario(u->s, u->hw, sc, u->d, &e->l) < 0) return -1;
  e->vals = malloc((size_t)(e->l.g.nn ? e->l.g.nn : 1) * sizeof *e->vals);
  if (!e->vals) abort();
  if (u->o->no_jit) {
    graph_eval(&e->l.g, NULL, e->vals);
  } else {   /* the whole graph as one level, every node stored: the same values, to the bit */
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
  }
  lower_report(&e->l, e->vals, &e->r);
  if (!isfinite(e->r.iteration) || !isfinite(e->r.peak)) {
    SrcFile *f;
    Span sp;
    sema_decl_at(u->s, sc, &f, &sp);
    diag_error(u->d, f, sp, "scenario `%s` cannot be evaluated: a cost kernel rejected its arguments (a shape or a group that does not fit the cluster)",
               sema_decl_name(sc));
    return -1;
  }
  return 0;
}

static void eval_close(Eval *e) {
  free(e->vals);
  lower_free(&e->l);
}

static void setup(Diag *d, const RunOptions *o) {
  diag_init(d, stderr);
  d->buffered = true;
  d->format = o->diag_format;
  if (o->colour >= 0) d->colour = o->colour;
}

/* The scenarios of a file (only the one named `only`, if given); with `required`, a file
 * without any is an error.  The list is malloc'd. */
static Decl **scenarios_of(Comp *u, const char *only, int *n, const char *path, bool required) {
  int total = sema_root_decls(u->s, DK_SCENARIO, NULL, 0);
  Decl **all = calloc((size_t)(total ? total : 1), sizeof *all);
  if (!all) abort();
  sema_root_decls(u->s, DK_SCENARIO, all, total);
  *n = total;
  if (only) {
    *n = 0;
    for (int i = 0; i < total; i++)
      if (!strcmp(sema_decl_name(all[i]), only)) all[(*n)++] = all[i];
    if (!*n) diag_plain(u->d, path, "no scenario named `%s`", only);
  } else if (!total && required) {
    diag_plain(u->d, path, "declares no scenario to run");
  }
  return all;
}

static int cmd_run(const RunOptions *o) {
  Diag d;
  setup(&d, o);
  ReportFormat fmt = !o->format || !strcmp(o->format, "table") ? REPORT_TABLE
                     : !strcmp(o->format, "json")              ? REPORT_JSON
                                                               : REPORT_CSV;
  if (fmt == REPORT_CSV) report_csv_header(stdout);
  int failed = 0, printed = 0;
  bool traced = false;
  for (int i = 0; i < o->nfiles; i++) {
    Comp u;
    if (!comp_open(&u, &d, o, o->files[i])) {
      failed++;
      comp_close(&u);
      continue;
    }
    int n;
    Decl **list = scenarios_of(&u, o->scenario, &n, o->files[i], true);
    if (!n) failed++;
    if (o->trace && n > 1) {
      diag_plain(&d, o->files[i], "--trace needs one scenario: this file has %d; name one with --scenario", n);
      failed++;
      n = 0;
    }
    for (int k = 0; k < n; k++) {
      Eval e;
      if (eval_open(&u, list[k], &e) == 0) {
        diag_flush(&d);
        if (fmt == REPORT_TABLE && printed) fputc('\n', stdout);
        report_print(stdout, &e.r, fmt);
        printed++;
        if (o->trace && !traced) {
          FILE *tf = fopen(o->trace, "w");
          int rc = tf ? lower_trace(&e.l, e.vals, &e.r, tf) : -1;
          if (tf && fclose(tf)) rc = -1;
          if (rc) {
            diag_plain(&d, o->trace, "cannot write the trace");
            failed++;
          }
          traced = true;
        }
      } else {
        failed++;
      }
      eval_close(&e);
    }
    free(list);
    comp_close(&u);
  }
  diag_free(&d);
  return failed ? 1 : 0;
}

static int cmd_graph(const RunOptions *o) {
  Diag d;
  setup(&d, o);
  int rc = 1;
  Comp u;
  if (o->nfiles != 1) {
    diag_free(&d);
    return cli_usage_error("graph", "%s", "takes one file");
  }
  if (comp_open(&u, &d, o, o->files[0])) {
    int n;
    Decl **list = scenarios_of(&u, o->scenario, &n, o->files[0], true);
    if (n) {
      Eval e;
      if (eval_open(&u, list[0], &e) == 0) {
        if (o->format && !strcmp(o->format, "json")) graph_dump_json(stdout, &e.l.g, e.vals);
        else graph_dump_dot(stdout, &e.l.g, e.vals);
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

/* --- validate -------------------------------------------------------------------------- */

typedef struct PathList {
  char **v;
  int n, cap;
} PathList;

static void push_path(PathList *p, const char *s) {
  if (p->n == p->cap) {
    p->cap = p->cap ? 2 * p->cap : 64;
    p->v = realloc(p->v, (size_t)p->cap * sizeof *p->v);
    if (!p->v) abort();
  }
  p->v[p->n] = strdup(s);
  if (!p->v[p->n]) abort();
  p->n++;
}

static int cmp_str(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* The .llmp files under a folder, recursively, in name order. */
static void collect(PathList *out, const char *dir, int depth) {
  DIR *dp = opendir(dir);
  if (!dp || depth > 16) {
    if (dp) closedir(dp);
    return;
  }
  PathList here = {0};
  struct dirent *e;
  while ((e = readdir(dp))) {
    if (e->d_name[0] == '.') continue;
    size_t n = strlen(dir) + strlen(e->d_name) + 2;
    char *path = malloc(n);
    if (!path) abort();
    snprintf(path, n, "%s/%s", dir, e->d_name);
    push_path(&here, path);
    free(path);
  }
  closedir(dp);
  qsort(here.v, (size_t)here.n, sizeof *here.v, cmp_str);
  for (int i = 0; i < here.n; i++) {
    struct stat st;
    size_t len = strlen(here.v[i]);
    if (stat(here.v[i], &st) == 0 && S_ISDIR(st.st_mode)) collect(out, here.v[i], depth + 1);
    else if (len > 5 && !strcmp(here.v[i] + len - 5, ".llmp")) push_path(out, here.v[i]);
    free(here.v[i]);
  }
  free(here.v);
}

static int cmd_validate(const RunOptions *o) {
  Diag d;
  setup(&d, o);
  PathList files = {0};
  for (int i = 0; i < o->nfiles; i++) {
    struct stat st;
    if (stat(o->files[i], &st) == 0 && S_ISDIR(st.st_mode)) collect(&files, o->files[i], 0);
    else push_path(&files, o->files[i]);
  }
  bool csv = o->format && !strcmp(o->format, "csv");
  if (csv) puts("scenario,file,gpus,tp,pp,dp,predicted_s,measured_s,error_pct");
  else printf("%-34s %6s %-14s %12s %12s %8s\n", "scenario", "gpus", "tp/pp/dp", "predicted", "measured", "error");
  int failed = 0, rows = 0;
  double sum = 0, worst = 0;
  for (int i = 0; i < files.n; i++) {
    Comp u;
    if (!comp_open(&u, &d, o, files.v[i])) {
      failed++;
      comp_close(&u);
      continue;
    }
    int n;
    Decl **list = scenarios_of(&u, NULL, &n, files.v[i], false);   /* files of models only: skipped */
    for (int k = 0; k < n; k++) {
      double x;
      if (!sema_nsubs(list[k], "measured") || !sema_sub_number(u.s, list[k], "measured", 0, "iteration", &x)) continue;
      Eval e;
      if (eval_open(&u, list[k], &e) == 0) {
        const Report *r = &e.r;
        diag_flush(&d);
        char par[48];
        snprintf(par, sizeof par, "%d/%d/%d", r->tp, r->pp, r->dp);
        if (!r->fits) {
          char msg[512];
          printf("%-34s %6d %-14s %s\n", r->scenario, r->gpus, par, report_fit_message(msg, sizeof msg, r));
          failed++;
        } else if (csv) {
          printf("%s,%s,%d,%d,%d,%d,%.6g,%.6g,%.3f\n", r->scenario, r->file, r->gpus, r->tp, r->pp, r->dp, r->iteration,
                 r->measured_iteration, r->error_pct);
        } else {
          printf("%-34s %6d %-14s %10.3f s %10.3f s %+7.2f%%\n", r->scenario, r->gpus, par, r->iteration, r->measured_iteration,
                 r->error_pct);
        }
        if (r->fits) {
          rows++;
          sum += fabs(r->error_pct);
          if (fabs(r->error_pct) > worst) worst = fabs(r->error_pct);
        }
      } else {
        failed++;
      }
      eval_close(&e);
    }
    free(list);
    comp_close(&u);
  }
  double mean = rows ? sum / rows : 0;
  if (!csv) printf("%d scenario%s: mean |error| %.2f %%, max |error| %.2f %%\n", rows, rows == 1 ? "" : "s", mean, worst);
  int rc = failed ? 1 : 0;
  if (o->max_error >= 0 && worst > o->max_error) {
    fprintf(stderr, "llmp validate: max |error| %.2f %% exceeds --max-error %g %%\n", worst, o->max_error);
    rc = 1;
  }
  if (o->mean_error >= 0 && mean > o->mean_error) {
    fprintf(stderr, "llmp validate: mean |error| %.2f %% exceeds --mean-error %g %%\n", mean, o->mean_error);
    rc = 1;
  }
  for (int i = 0; i < files.n; i++) free(files.v[i]);
  free(files.v);
  diag_free(&d);
  return rc;
}

int run_main(const char *cmd, int argc, char **argv) {
  RunOptions o = {0};
  const char *usage = !strcmp(cmd, "run") ? usage_run : !strcmp(cmd, "graph") ? usage_graph : usage_validate;
  int rc = parse_run_options(cmd, usage, argc, argv, &o);
  if (rc < 0) rc = !strcmp(cmd, "run") ? cmd_run(&o) : !strcmp(cmd, "graph") ? cmd_graph(&o) : cmd_validate(&o);
  free(o.files);
  free(o.incdirs);
  return rc;
}
