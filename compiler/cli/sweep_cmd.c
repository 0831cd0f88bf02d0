/* sweep_cmd.c - `llmp sweep FILE`: the command line around the engine of sweep.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cli.h"
#include "sweep/sweep.h"

/* --- llmp sweep ------------------------------------------------------------------------------------ */

static const char usage_sweep[] =
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

int sweep_main(int argc, char **argv) {
  const char *file = NULL, *name = NULL, *format = NULL, *out = NULL, *shard = NULL;
  const char **inc = calloc((size_t)argc + 1, sizeof *inc);
  if (!inc) abort();
  int ninc = 0, colour = -1;
  DiagFormat dfmt = DIAG_HUMAN;
  long nproc = sysconf(_SC_NPROCESSORS_ONLN);
  SweepOptions opt = {(int)(nproc > 0 ? nproc : 1), true, 0, 1, true, NULL, false};
  int rc = 2;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i], *next = i + 1 < argc ? argv[i + 1] : NULL;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      fputs(usage_sweep, stdout);
      rc = 0;
      goto done;
    } else if (!strcmp(a, "--no-jit")) opt.jit = false;
    else if (!strcmp(a, "--no-prune")) opt.no_prune = true;
    else if (!strcmp(a, "--dump=ir")) opt.dump_ir = stdout;
    else if (!strcmp(a, "--no-progress")) opt.progress = false;
    else if (!strcmp(a, "--error-format=short")) dfmt = DIAG_SHORT;
    else if (!strcmp(a, "--error-format=human")) dfmt = DIAG_HUMAN;
    else if (!strcmp(a, "--color=always")) colour = 1;
    else if (!strcmp(a, "--color=never")) colour = 0;
    else if (!strcmp(a, "--color=auto")) colour = -1;
    else if (!strcmp(a, "--sweep") || !strcmp(a, "-j") || !strcmp(a, "--format") || !strcmp(a, "--out") ||
             !strcmp(a, "--shard") || !strcmp(a, "-I")) {
      if (!next) {
        rc = cli_usage_error("sweep", "%s needs a value", a);
        goto done;
      }
      i++;
      if (!strcmp(a, "--sweep")) name = next;
      else if (!strcmp(a, "--format")) format = next;
      else if (!strcmp(a, "--out")) out = next;
      else if (!strcmp(a, "--shard")) shard = next;
      else if (!strcmp(a, "-I")) inc[ninc++] = next;
      else if ((opt.threads = threads_of(next)) < 0) {
        rc = cli_usage_error("sweep", "-j needs a number of threads from 1 to 4096, not `%s`", next);
        goto done;
      }
    } else if (!strncmp(a, "-j", 2) && a[2]) {
      if ((opt.threads = threads_of(a + 2)) < 0) {
        rc = cli_usage_error("sweep", "-j needs a number of threads from 1 to 4096, not `%s`", a + 2);
        goto done;
      }
    } else if (!strncmp(a, "-I", 2)) inc[ninc++] = a + 2;
    else if (a[0] == '-' && a[1]) {
      rc = cli_usage_error("sweep", "unknown option `%s`", a);
      goto done;
    } else if (file) {
      rc = cli_usage_error("sweep", "one FILE at a time; `%s` is a second", a);
      goto done;
    } else file = a;
  }
  if (!file) {
    rc = cli_usage_error("sweep", "%s", "no input file");
    goto done;
  }
  SweepFormat fmt = SWEEP_TABLE;
  if (format && sweep_format_parse(format, &fmt) < 0) {
    rc = cli_usage_error("sweep", "unknown format `%s`", format);
    goto done;
  }
  if (!format && out) fmt = sweep_format_of_path(out, SWEEP_TABLE);
  if (shard) {
    char msg[512];
    if (sweep_shard_parse(shard, &opt.shard_k, &opt.shard_n, msg, sizeof msg) < 0) {
      rc = cli_usage_error("sweep", "%s", msg);
      goto done;
    }
  }
  Diag d;
  diag_init(&d, stderr);
  d.buffered = true;
  d.format = dfmt;
  if (colour >= 0) d.colour = colour;
  SemaOptions so = {inc, ninc, NULL};
  Sema *s = sema_new(&d, &so);
  HwSet *hw = NULL;
  rc = 1;
  if (sema_run(s, file, true) == 0) {
    hw = hw_new(s, &d, &so);
    int total = sema_root_decls(s, DK_SWEEP, NULL, 0);
    Decl **all = calloc((size_t)(total ? total : 1), sizeof *all);
    if (!all) abort();
    sema_root_decls(s, DK_SWEEP, all, total);
    Decl *decl = NULL;
    for (int i = 0; i < total && !decl; i++)
      if (!name || !strcmp(sema_decl_name(all[i]), name)) decl = all[i];
    free(all);
    if (!decl && name) diag_plain(&d, file, "no sweep named `%s`", name);
    else if (!decl) diag_plain(&d, file, "declares no sweep to run");
    Sweep *sw = decl && hw ? sweep_new(s, hw, decl, &d, &opt) : NULL;
    SweepMeta meta;
    const SweepRow *rows;
    int nrows;
    if (sw && sweep_run(sw, &opt, &meta, &rows, &nrows) == 0) {
      diag_flush(&d);
      FILE *o = out ? fopen(out, "w") : stdout;
      if (!o) {
        diag_plain(&d, out, "cannot write the result");
      } else {
        int w = sweep_write(o, fmt, &meta, rows, nrows);
        if (out && fclose(o)) w = -1;
        if (w < 0) diag_plain(&d, out ? out : "<stdout>", "cannot write the result");
        else rc = 0;
      }
    }
    sweep_free(sw);
  }
  hw_free(hw);
  sema_free(s);
  diag_flush(&d);
  diag_free(&d);
done:
  free(inc);
  return rc;
}
