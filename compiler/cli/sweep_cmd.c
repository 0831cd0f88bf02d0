/* sweep_cmd.c - `llmp sweep FILE`: the command line around the engine of sweep/sweep.c.
 *
 *   check FILE -> hardware -> the sweep named (or the first) -> sweep_new (lower with axes,
 *   stage, JIT) -> sweep_run (the loop nest on -j threads, this shard's points) -> the
 *   ranked result in the format asked, on standard output or --out */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "alloc.h"
#include "strbuf.h"
#include "cli.h"
#include "fileio.h"
#include "options.h"
#include "sweep/sweep.h"
#include "sweep/sweep_io.h"

const char cli_usage_sweep[] =
    "usage: llmp sweep [OPTIONS] FILE\n"
    "\n"
    "Evaluates every point of a sweep: the product of its `vary` axes, with its `let`s\n"
    "applied. Points whose plan does not divide, or that fail a `require`, are dropped and\n"
    "counted per reason; the rest are ranked by the objective (`minimize`/`maximize`,\n"
    "default: minimize iteration) and the best `keep` (default 20) are printed with their\n"
    "report's figures. The sweep's cost graph is compiled once to native code (LLVM ORC);\n"
    "the result is the same for any -j and any sharding. Axes that change the graph itself\n"
    "(cluster.nodes, plan.dtype, placement, the cluster) get one graph per value, compiled\n"
    "in parallel and ranked together; the table then ends with the best point at each value.\n"
    "\n"
    "options:\n"
    "  --sweep NAME      the sweep (default: the file's only sweep, or its first)\n"
    "  -j N              evaluate on N threads (default: every core)\n"
    "  --format FORMAT   table (default: 100 columns, the plan's fields that differ),\n"
    "                    wide (every field), csv, json, or jsonl (JSON Lines)\n"
    "  --wide            the wide table\n"
    "  --out FILE        write the result to FILE (format from its extension: .txt, .csv,\n"
    "                    .json, .jsonl; or --format) instead of standard output\n"
    "  --explain K       print the full `llmp run` report of the K-th plan kept\n"
    "  --emit PATH       write the plans kept as scenarios `llmp run` reproduces: PATH.llmp,\n"
    "                    or a folder (one file a plan)\n"
    "  --keep-unfit      rank plans that do not fit in memory (default: dropped, counted)\n"
    "  --keep-equivalent rank plans equivalent to one kept (an axis without effect: the\n"
    "                    schedule or virtual stages at pp = 1, sequence parallelism at tp = 1)\n"
    "  --max-time T      refuse a sweep that would take longer than T, measured over its first\n"
    "                    half second: seconds, or 30m, 2h, 1d; 0 lifts it (default 1h)\n"
    "  --shard K/N       evaluate the K-th (from 0) of N slices of the points; write JSON\n"
    "                    Lines and combine the N outputs with `llmp merge`\n"
    "  --shard auto      K and N from Slurm (job array or tasks), Open MPI or PMI\n"
    "  --html FILE       also write a self-contained HTML report: time against memory of the\n"
    "                    points kept and dropped, with the Pareto front, how each axis moves the\n"
    "                    objective (docs/report.md)\n"
    "  --no-jit          evaluate with the interpreter instead of the JIT (same results)\n"
    "  --no-prune        simulate every passing point's pipeline schedule, even where its lower\n"
    "                    bound shows it cannot be kept (same results, slower)\n"
    "  --dump=ir         print the JIT's LLVM module (after optimisation) first\n"
    "  --no-progress     no progress bar (it shows on a terminal after one second)\n"
    "  -I DIR            also look for imports in DIR; may be repeated\n"
    "  --error-format=FORMAT, --color=WHEN   as for `llmp check`\n"
    "  -h, --help        this text\n";

/* -j's value: 1 to 4096 threads, or -1. */
static int threads_of(const char *text) {
  char *end;
  long j = strtol(text, &end, 10);
  return *text && !*end && j >= 1 && j <= 4096 ? (int)j : -1;
}

typedef struct SweepCli {
  CliArgs a; /* -I, the diagnostics' form */
  const char *file, *name, *format, *out, *shard, *emit, *html;
  bool wide;
  int explain;     /* the rank to explain, from 1; 0: none */
  SweepFormat fmt; /* from --format, else from --out's extension */
  SweepOptions opt;
} SweepCli;

enum {
  OPT_NO_JIT,
  OPT_NO_PRUNE,
  OPT_DUMP_IR,
  OPT_NO_PROGRESS,
  OPT_SWEEP,
  OPT_THREADS,
  OPT_FORMAT,
  OPT_OUT,
  OPT_SHARD,
  OPT_WIDE,
  OPT_EXPLAIN,
  OPT_EMIT,
  OPT_KEEP_UNFIT,
  OPT_KEEP_EQUIVALENT,
  OPT_MAX_TIME,
  OPT_HTML
};

static const CliOption sweep_options[] = {
    {"--no-jit", OPT_NO_JIT, 0},        {"--no-prune", OPT_NO_PRUNE, 0},
    {"--dump=ir", OPT_DUMP_IR, 0},      {"--no-progress", OPT_NO_PROGRESS, 0},
    {"--sweep", OPT_SWEEP, CLI_NEXT},   {"-j", OPT_THREADS, CLI_NEXT | CLI_JOINED},
    {"--format", OPT_FORMAT, CLI_NEXT}, {"--out", OPT_OUT, CLI_NEXT},
    {"--shard", OPT_SHARD, CLI_NEXT},   {"--wide", OPT_WIDE, 0},
    {"--explain", OPT_EXPLAIN, CLI_NEXT}, {"--emit", OPT_EMIT, CLI_NEXT},
    {"--keep-unfit", OPT_KEEP_UNFIT, 0}, {"--keep-equivalent", OPT_KEEP_EQUIVALENT, 0},
    {"--max-time", OPT_MAX_TIME, CLI_NEXT}, {"--html", OPT_HTML, CLI_NEXT}, {NULL, 0, 0},
};

/* --max-time's value: seconds, or a number with s, m, h or d; -1 if not one. */
static double seconds_of(const char *text) {
  char *end;
  double x = strtod(text, &end);
  static const struct {
    const char *unit;
    double s;
  } units[] = {{"", 1}, {"s", 1}, {"m", 60}, {"h", 3600}, {"d", 86400}};
  for (size_t i = 0; end != text && x >= 0 && i < sizeof units / sizeof units[0]; i++)
    if (!strcmp(end, units[i].unit)) return x * units[i].s;
  return -1;
}

static int sweep_option(void *ctx, int id, const char *value) {
  SweepCli *o = ctx;
  switch (id) {
  case OPT_NO_JIT: o->opt.jit = false; break;
  case OPT_NO_PRUNE: o->opt.no_prune = true; break;
  case OPT_DUMP_IR: o->opt.dump_ir = stdout; break;
  case OPT_NO_PROGRESS: o->opt.progress = false; break;
  case OPT_SWEEP: o->name = value; break;
  case OPT_FORMAT: o->format = value; break;
  case OPT_OUT: o->out = value; break;
  case OPT_SHARD: o->shard = value; break;
  case OPT_HTML: o->html = value; break;
  case OPT_WIDE: o->wide = true; break;
  case OPT_EMIT: o->emit = value; break;
  case OPT_KEEP_UNFIT: o->opt.keep_unfit = true; break;
  case OPT_KEEP_EQUIVALENT: o->opt.keep_equivalent = true; break;
  case OPT_MAX_TIME:
    if ((o->opt.max_seconds = seconds_of(value)) < 0)
      return cli_usage_error("sweep", "--max-time needs a time: seconds, or 30m, 2h, 1d; 0 for no limit; not `%s`",
                             value);
    break;
  case OPT_EXPLAIN: {
    char *end;
    long k = strtol(value, &end, 10);
    if (!*value || *end || k < 1 || k > 1000000)
      return cli_usage_error("sweep", "--explain needs the rank of a plan kept, from 1, not `%s`", value);
    o->explain = (int)k;
    break;
  }
  case OPT_THREADS:
    if ((o->opt.threads = threads_of(value)) < 0)
      return cli_usage_error("sweep", "-j needs a number of threads from 1 to 4096, not `%s`", value);
    break;
  }
  return -1;
}

static int sweep_operand(void *ctx, const char *arg) {
  SweepCli *o = ctx;
  if (o->file) return cli_usage_error("sweep", "one FILE at a time; `%s` is a second", arg);
  o->file = arg;
  return -1;
}

/* The options, FILE, then the format and the shard they name.  Returns -1 to go on, else
 * the exit status. */
static int sweep_parse(const CliCommand *c, int argc, char **argv, SweepCli *o) {
  long nproc = sysconf(_SC_NPROCESSORS_ONLN);
  o->opt = (SweepOptions){(int)(nproc > 0 ? nproc : 1), true, 0, 1, true, NULL, false, false, false, 3600, stderr};
  CliSpec spec = {c, CLI_INCLUDE | CLI_INCLUDE_JOINED | CLI_DIAG, sweep_options, NULL, sweep_option, sweep_operand, o};
  int rc = cli_parse(&spec, argc, argv, &o->a);
  if (rc >= 0) return rc;
  if (!o->file) return cli_usage_error("sweep", "%s", "no input file");
  o->fmt = SWEEP_TABLE;
  if (o->format && sweep_format_parse(o->format, &o->fmt) < 0)
    return cli_usage_error("sweep", "unknown format `%s` (table, wide, csv, json or jsonl)", o->format);
  if (!o->format && o->out && sweep_format_of_path(o->out, &o->fmt) < 0)
    return cli_usage_error(
        "sweep", "--out `%s`: unknown extension (.txt, .csv, .json or .jsonl), or name one with --format", o->out);
  if (o->wide && o->fmt == SWEEP_TABLE) o->fmt = SWEEP_TABLE_WIDE;
  StrBuf msg = {0};
  if (o->shard && sweep_shard_parse(o->shard, &o->opt.shard_k, &o->opt.shard_n, &msg) < 0) {
    rc = cli_usage_error("sweep", "%s", msg.p ? msg.p : "--shard");
    strbuf_free(&msg);
    return rc;
  }
  return -1;
}

/* The sweep --sweep names, else the file's first; NULL after reporting. */
static Decl *sweep_pick(Sema *s, Diag *d, const SweepCli *o) {
  int total = sema_root_decls(s, DK_SWEEP, NULL, 0);
  Decl **all = xcalloc((size_t)(total ? total : 1), sizeof *all);
  sema_root_decls(s, DK_SWEEP, all, total);
  Decl *decl = NULL;
  for (int i = 0; i < total && !decl; i++)
    if (!o->name || !strcmp(sema_decl_name(all[i]), o->name)) decl = all[i];
  if (!decl && o->name)
    cli_no_such_decl(d, o->file, "sweep", o->name, all, total);
  else if (!decl)
    diag_plain(d, o->file, "declares no sweep to run");
  free(all);
  return decl;
}

/* Writes the ranked result to --out (out, opened before the sweep ran: renamed over the
 * target whole) or standard output: 0, or 1 after reporting. */
static int sweep_output(Diag *d, const SweepCli *o, AtomicFile *out, const SweepMeta *meta, const SweepRow *rows,
                        int nrows) {
  const char *why = "cannot write";
  int w = sweep_write(o->out ? out->fp : stdout, o->fmt, meta, rows, nrows);
  if (o->out && (w < 0 ? (atomic_abort(out), -1) : atomic_commit(out, &why)) != 0) {
    diag_plain(d, o->out, "cannot write the result: %s", why);
    return 1;
  }
  if (w < 0) {
    diag_plain(d, "<stdout>", "cannot write the result");
    return 1;
  }
  return 0;
}

/* Whether a row's key ("plan.tp") is the axis field ("tp"). */
static bool key_is_axis(const char *key, const char *field) {
  size_t k = strlen(key), f = strlen(field);
  return k > f && key[k - f - 1] == '.' && !strcmp(key + k - f, field);
}

/* The page of --html: the sweep's rows, and its axes in the rows' order (sweep_loop names
 * the fields the loops vary, in loop order). */
static void sweep_html(Html *page, const Sweep *sw, const SweepMeta *meta, const SweepRow *rows, int nrows) {
  int nax = sweep_levels(sw), n = 0;
  const char **axes = xcalloc((size_t)(nax ? nax : 1), sizeof *axes);
  for (int f = 0; nrows && f < rows[0].nfields && n < nax; f++)
    for (int k = 0; k < nax; k++) {
      int values, nodes, calls;
      if (key_is_axis(rows[0].fields[f].key, sweep_loop(sw, k, &values, &nodes, &calls))) {
        axes[n++] = rows[0].fields[f].key;
        break;
      }
    }
  html_sweep(page, meta, rows, nrows, axes, n, sweep_sample(sw));
  free(axes);
}

/* With fields that change the graph among the axes, on a terminal: how long their graphs took. */
static void sweep_graphs_note(const SweepCli *o, const Sweep *sw) {
  int compiled;
  double lower_s, jit_s = sweep_jit_seconds(sw);
  int n = sweep_structures(sw, &compiled, &lower_s);
  if (n > 1 && o->opt.progress && isatty(2))
    fprintf(stderr, "llmp sweep: %d graphs lowered in %.2f s; %d distinct compiled in %.2f s (%.0f ms a graph)\n", n,
            lower_s, compiled, jit_s, compiled ? 1e3 * jit_s / compiled : 0.0);
}

/* A sweep the rate measured says would take longer than --max-time: what to do instead. */
static void sweep_refused(Diag *d, const SweepCli *o, Sweep *sw, const SweepMeta *m) {
  double rate, est = sweep_estimate(sw, &rate);
  char pts[32], t[32], r[32], lim[32];
  diag_plain(d, o->file,
             "sweep `%s`: %s points would take about %s at %s points/s on %d thread%s, more than --max-time %s: run "
             "it in shards on several machines (--shard K/N, then `llmp merge`), narrow its axes, or lift the limit "
             "(--max-time 0)",
             m->sweep, sweep_grouped(pts, m->evaluated), sweep_duration_text(t, est), sweep_rate_text(r, rate),
             o->opt.threads, o->opt.threads == 1 ? "" : "s", sweep_duration_text(lim, o->opt.max_seconds));
}

/* --explain K: the K-th plan's report, as `llmp run` prints it.  0, or 1 after reporting. */
static int sweep_explain(Diag *d, const SweepCli *o, Sweep *sw, const SweepMeta *m, const SweepRow *rows, int nrows) {
  if (o->explain > nrows) {
    diag_plain(d, o->file, "--explain %d: sweep `%s` kept %d plan%s", o->explain, m->sweep, nrows,
               nrows == 1 ? "" : "s");
    return 1;
  }
  Report r;
  const SweepRow *row = &rows[o->explain - 1];
  if (sweep_point_report(sw, row->point, &r) < 0) return 1;
  printf("plan %d of sweep %s (point %llu):", o->explain, m->sweep, (unsigned long long)row->point);
  char buf[64];
  for (int a = 0; a < sweep_axes(sw); a++) {
    const char *root, *field, *v = sweep_axis_at(sw, a, row->point, &root, &field, buf, sizeof buf);
    printf("%s %s.%s = %s", a ? "," : "", root, field, v);
  }
  printf("\n\n");
  report_print(stdout, &r, REPORT_TABLE);
  return fflush(stdout) == 0 ? 0 : 1;
}

/* Checks FILE, then builds, runs and writes its sweep: 0, or 1 after reporting. */
static int sweep_file(const SweepCli *o) {
  Diag d;
  cli_diag_init(&d, &o->a);
  SemaOptions so = {o->a.incdirs, o->a.nincdirs, NULL};
  AtomicFile out = {0};
  const char *why;
  if (o->out && atomic_open(&out, o->out, &why) != 0) { /* before the work, not after it */
    diag_plain(&d, o->out, "cannot write the result: %s", why);
    diag_flush(&d);
    diag_free(&d);
    return 1;
  }
  CliHtml html = {0};
  if (o->html && cli_html_open(&d, o->html, "sweep", &o->file, 1, &html)) {
    if (out.fp) atomic_abort(&out);
    diag_flush(&d);
    diag_free(&d);
    return 1;
  }
  Sema *s = sema_new(&d, &so);
  HwSet *hw = NULL;
  int rc = 1;
  if (sema_run(s, o->file, true) == 0) {
    hw = hw_new(s, &d, &so);
    Decl *decl = sweep_pick(s, &d, o);
    Sweep *sw = decl && hw ? sweep_new(s, hw, decl, &d, &o->opt) : NULL;
    if (sw && html.page) sweep_keep_sample(sw, HTML_SWEEP_SAMPLE); /* the page draws dropped points too */
    SweepMeta meta;
    const SweepRow *rows;
    int nrows;
    int ran = sw ? sweep_run(sw, &o->opt, &meta, &rows, &nrows) : -1;
    if (ran == -2) sweep_refused(&d, o, sw, &meta);
    if (ran == 0) {
      diag_flush(&d);
      rc = o->explain && !o->out ? 0 : sweep_output(&d, o, &out, &meta, rows, nrows);
      if (rc == 0 && o->explain) rc = sweep_explain(&d, o, sw, &meta, rows, nrows);
      if (rc == 0 && o->emit) rc = sweep_emit(sw, rows, nrows, o->emit) < 0 ? 1 : 0;
      if (html.page) sweep_html(html.page, sw, &meta, rows, nrows);
    }
    if (sw && !rc) sweep_graphs_note(o, sw);
    sweep_free(sw);
  }
  if (out.fp) atomic_abort(&out); /* not written: the target untouched */
  rc |= cli_html_close(&d, &html, rc == 0);
  hw_free(hw);
  sema_free(s);
  diag_flush(&d);
  diag_free(&d);
  return rc;
}

int cli_sweep(int argc, char **argv, const CliCommand *c) {
  SweepCli o = {0};
  int rc = sweep_parse(c, argc, argv, &o);
  if (rc < 0) rc = sweep_file(&o);
  cli_args_free(&o.a);
  return rc;
}
