/* merge_cmd.c - `llmp merge SHARD.jsonl...`: the command line around sweep/sweep_merge.c.
 *
 *   the shards' files -> read, checked to be shards 0 .. N-1 of one sweep (one hash), combined
 *   (sweep_merge_load) -> written in the format asked (sweep_write) on standard output or
 *   --out, which is opened only after the merge succeeded: a failed merge leaves it as it was */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "fileio.h"
#include "options.h"
#include "sweep/sweep_io.h"

const char cli_usage_merge[] = "usage: llmp merge [OPTIONS] SHARD.jsonl...\n"
                               "\n"
                               "Combines the outputs of the shards of one sweep (`llmp sweep --shard K/N --out\n"
                               "FILE.jsonl`, JSON Lines) into what the sweep run on one machine writes: the counts\n"
                               "summed, the points ranked again, the best `keep` kept. Every shard 0 .. N-1 must be\n"
                               "given, once, and all must carry the same hash of their sweep (its files, tables and\n"
                               "llmp's version). Exit status 0; 1 when a file is malformed, a shard is missing or\n"
                               "given twice, or the files are not of one sweep; 2 for a bad command line.\n"
                               "\n"
                               "options:\n"
                               "  --format FORMAT  table (default), csv or json (JSON Lines, as the shards)\n"
                               "  --out FILE       write to FILE instead of standard output; without --format, the\n"
                               "                   format follows its extension (.csv; .jsonl or .json; else table)\n"
                               "  -h, --help       this text\n";

typedef struct MergeCli {
  CliArgs a; /* the operands: the shards' files */
  const char *format, *out;
} MergeCli;

enum { OPT_FORMAT, OPT_OUT };

static const CliOption merge_options[] = {
    {"--format", OPT_FORMAT, CLI_NEXT}, {"--format=", OPT_FORMAT, CLI_JOINED}, {"--out", OPT_OUT, CLI_NEXT},
    {"-o", OPT_OUT, CLI_NEXT},          {"--out=", OPT_OUT, CLI_JOINED},       {NULL, 0, 0},
};

static int merge_option(void *ctx, int id, const char *value) {
  MergeCli *o = ctx;
  if (id == OPT_FORMAT)
    o->format = value;
  else
    o->out = value;
  return -1;
}

/* Writes the merged sweep to the file path (NULL: standard output); returns the exit status. */
static int merge_write(const SweepMerge *m, SweepFormat fmt, const char *path) {
  AtomicFile a = {0};
  const char *why = "cannot write";
  if (path && atomic_open(&a, path, &why) != 0) {
    fprintf(stderr, "%s: error: cannot write: %s\n", path, why);
    return 1;
  }
  int rc = sweep_write(path ? a.fp : stdout, fmt, &m->meta, m->rows, m->nrows) ? 1 : 0;
  if (path && (rc ? (atomic_abort(&a), 1) : atomic_commit(&a, &why) != 0)) rc = 1;
  if (rc) fprintf(stderr, "%s: error: cannot write the output: %s\n", path ? path : "llmp merge", why);
  return rc;
}

int cli_merge(int argc, char **argv, const CliCommand *c) {
  MergeCli o = {0};
  CliSpec spec = {c, CLI_DASHDASH, merge_options, NULL, merge_option, NULL, &o};
  int rc = cli_parse(&spec, argc, argv, &o.a);
  if (rc < 0 && !o.a.nargs) rc = cli_usage_error(c->name, "%s", "no input files");
  SweepFormat fmt = SWEEP_TABLE;
  if (rc < 0 && o.format && sweep_format_parse(o.format, &fmt) < 0)
    rc = cli_usage_error(c->name, "unknown format `%s` (table, wide, csv, json or jsonl)", o.format);
  if (rc < 0 && !o.format && o.out && sweep_format_of_path(o.out, &fmt) < 0)
    rc = cli_usage_error(
        c->name, "--out `%s`: unknown extension (.txt, .csv, .json or .jsonl), or name one with --format", o.out);
  if (rc < 0) {
    SweepMerge m;
    rc = sweep_merge_load(&m, o.a.args, o.a.nargs, stderr) ? 1 : merge_write(&m, fmt, o.out);
    sweep_merge_free(&m);
  }
  cli_args_free(&o.a);
  return rc;
}
