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
    "the result is the same for any -j and any sharding.\n"
    "\n"
    "options:\n"
    "  --sweep NAME      the sweep (default: the file's only sweep, or its first)\n"
    "  -j N              evaluate on N threads (default: every core)\n"
    "  --format FORMAT   table (default), csv or json (JSON Lines)\n"
    "  --out FILE        write the result to FILE (format from its extension, .csv or\n"
    "                    .jsonl, unless --format is given) instead of standard output\n"
    "  --shard K/N       evaluate the K-th (from 0) of N slices of the points; write JSON\n"
    "                    Lines and combine the N outputs with `llmp merge`\n"
    "  --shard auto      K and N from Slurm (job array or tasks), Open MPI or PMI\n"
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
  const char *file, *name, *format, *out, *shard;
  SweepFormat fmt; /* from --format, else from --out's extension */
  SweepOptions opt;
} SweepCli;

enum { OPT_NO_JIT, OPT_NO_PRUNE, OPT_DUMP_IR, OPT_NO_PROGRESS, OPT_SWEEP, OPT_THREADS, OPT_FORMAT, OPT_OUT, OPT_SHARD };

static const CliOption sweep_options[] = {
    {"--no-jit", OPT_NO_JIT, 0},        {"--no-prune", OPT_NO_PRUNE, 0},
    {"--dump=ir", OPT_DUMP_IR, 0},      {"--no-progress", OPT_NO_PROGRESS, 0},
    {"--sweep", OPT_SWEEP, CLI_NEXT},   {"-j", OPT_THREADS, CLI_NEXT | CLI_JOINED},
    {"--format", OPT_FORMAT, CLI_NEXT}, {"--out", OPT_OUT, CLI_NEXT},
    {"--shard", OPT_SHARD, CLI_NEXT},   {NULL, 0, 0},
};

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
  o->opt = (SweepOptions){(int)(nproc > 0 ? nproc : 1), true, 0, 1, true, NULL, false, false, false};
  CliSpec spec = {c, CLI_INCLUDE | CLI_INCLUDE_JOINED | CLI_DIAG, sweep_options, NULL, sweep_option, sweep_operand, o};
  int rc = cli_parse(&spec, argc, argv, &o->a);
  if (rc >= 0) return rc;
  if (!o->file) return cli_usage_error("sweep", "%s", "no input file");
  o->fmt = SWEEP_TABLE;
  if (o->format && sweep_format_parse(o->format, &o->fmt) < 0)
    return cli_usage_error("sweep", "unknown format `%s`", o->format);
  if (!o->format && o->out) o->fmt = sweep_format_of_path(o->out, SWEEP_TABLE);
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
  free(all);
  if (!decl && o->name)
    diag_plain(d, o->file, "no sweep named `%s`", o->name);
  else if (!decl)
    diag_plain(d, o->file, "declares no sweep to run");
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
  Sema *s = sema_new(&d, &so);
  HwSet *hw = NULL;
  int rc = 1;
  if (sema_run(s, o->file, true) == 0) {
    hw = hw_new(s, &d, &so);
    Decl *decl = sweep_pick(s, &d, o);
    Sweep *sw = decl && hw ? sweep_new(s, hw, decl, &d, &o->opt) : NULL;
    SweepMeta meta;
    const SweepRow *rows;
    int nrows;
    if (sw && sweep_run(sw, &o->opt, &meta, &rows, &nrows) == 0) {
      diag_flush(&d);
      rc = sweep_output(&d, o, &out, &meta, rows, nrows);
    }
    sweep_free(sw);
  }
  if (out.fp) atomic_abort(&out); /* not written: the target untouched */
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
