/* main.c - the llmp command line: a straight list of passes per command.
 *
 *   llmp check FILE...      parse -> imports -> sema          (--dump=ast after parsing)
 *   llmp fmt FILE...        parse -> canonical layout
 *   llmp run|graph|validate parse -> sema -> lower -> evaluate -> report  (run.c)
 *   llmp sweep FILE         parse -> sema -> lower with axes -> stage -> JIT -> loop nest (sweep.c)
 *   llmp merge SHARD...     the JSON Lines of a sweep's shards -> one result  (sweep_io.c)
 *
 * Each FILE is its own compilation (an arena, a declaration table).  Exit status: 0 when
 * clean, 1 when a file has errors (or, for fmt --check, is not formatted), 2 for a bad
 * command line. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "front/fmt.h"
#include "cli.h"
#include "fit_cmd.h"
#include "op.h"
#include "front/parse.h"
#include "jit/jit.h"
#include "run.h"
#include "front/sema.h"
#include "sweep/sweep.h"
#include "sweep/sweep_io.h"

#define LLMP_VERSION "0.1.0"

static const char usage_main[] =
    "usage: llmp COMMAND [OPTIONS] FILE...\n"
    "\n"
    "llmp predicts the iteration time and memory of LLM training on GPU clusters from\n"
    "declarative .llmp files (models, clusters, parallel plans, scenarios, sweeps).\n"
    "\n"
    "commands:\n"
    "  check    parse and check .llmp files, reporting every error\n"
    "  fmt      rewrite .llmp files in the canonical layout\n"
    "  run      predict each scenario: iteration time and breakdown, throughput, MFU, memory\n"
    "  validate compare scenarios that have `measured` values with their predictions\n"
    "  graph    print the cost graph of a scenario (dot or JSON)\n"
    "  sweep    evaluate every plan of a sweep and rank them (JIT-compiled, threaded)\n"
    "  merge    combine the outputs of a sweep's shards (--shard K/N) into one result\n"
    "  op       the predicted time of one operator or collective (the cost kernels)\n"
    "  fit      calibration tables for a gpu or cluster from measured samples\n"
    "\n"
    "options:\n"
    "  -h, --help     this text; `llmp COMMAND --help` describes a command\n"
    "  --version      the version of llmp and of the LLVM it is built with\n";

static const char usage_check[] =
    "usage: llmp check [OPTIONS] FILE...\n"
    "\n"
    "Parses each FILE and what it imports, and checks names, extends, fields, units and the\n"
    "divisibility of each scenario's plan. Each FILE is checked on its own. Exit status 0\n"
    "when every file is clean, 1 when any has errors.\n"
    "\n"
    "options:\n"
    "  -I DIR                 also look for imports in DIR (before LLMP_PATH and the\n"
    "                         installed stdlib/ and hw/); may be repeated\n"
    "  --error-format=FORMAT  human (default: message, source line, underline) or short\n"
    "                         (one line per diagnostic: FILE:LINE:COL: error: MESSAGE)\n"
    "  --color=WHEN           auto (default: colour on a terminal), always or never\n"
    "  --dump=ast             print the syntax tree of each FILE after parsing\n"
    "  --dump=sema            print each declaration of FILE with its fields as assembled\n"
    "                         through extends and evaluated (base units: B, s, FLOP), and\n"
    "                         the declaration each field comes from\n"
    "  --quiet                print nothing for clean files\n"
    "  -h, --help             this text\n"
    "\n"
    "environment:\n"
    "  LLMP_PATH   colon-separated folders searched for imports after -I\n"
    "  LLMP_DATA   the folder holding stdlib/ and hw/ (default: the installed one)\n"
    "  NO_COLOR    disables colour\n";

static const char usage_fmt[] =
    "usage: llmp fmt [OPTIONS] FILE...\n"
    "\n"
    "Rewrites each FILE in the canonical layout: two-space indent, one statement per line,\n"
    "aligned `=` in runs of fields, comments and blank lines kept. Formatting is\n"
    "idempotent. A file with syntax errors is reported and left alone.\n"
    "\n"
    "options:\n"
    "  --check          change nothing; list the files that are not formatted and exit 1\n"
    "                   if there is any\n"
    "  --stdout         print the formatted text instead of rewriting the files\n"
    "  --error-format=FORMAT, --color=WHEN   as for `llmp check`\n"
    "  -h, --help       this text\n";

typedef struct Options {
  const char **files;
  int nfiles;
  const char **incdirs;
  int nincdirs;
  DiagFormat format;
  int colour;             /* -1 auto */
  bool dump_ast, dump_sema, quiet, fmt_check, fmt_stdout;
} Options;

int cli_usage_error(const char *cmd, const char *fmt, const char *arg) {
  fprintf(stderr, "llmp%s%s: ", cmd ? " " : "", cmd ? cmd : "");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nTry `llmp%s%s --help`.\n", cmd ? " " : "", cmd ? cmd : "");
  return 2;
}

/* Parses the options of a command; returns -1 to go on, else an exit status. */
static int parse_options(const char *cmd, int argc, char **argv, Options *o) {
  o->files = calloc((size_t)argc + 1, sizeof *o->files);
  o->incdirs = calloc((size_t)argc + 1, sizeof *o->incdirs);
  o->colour = -1;
  bool is_fmt = !strcmp(cmd, "fmt");
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      fputs(is_fmt ? usage_fmt : usage_check, stdout);
      return 0;
    } else if (!strcmp(a, "--error-format=short")) o->format = DIAG_SHORT;
    else if (!strcmp(a, "--error-format=human")) o->format = DIAG_HUMAN;
    else if (!strncmp(a, "--error-format=", 15)) return cli_usage_error(cmd, "unknown error format `%s` (human or short)", a + 15);
    else if (!strcmp(a, "--color=always")) o->colour = 1;
    else if (!strcmp(a, "--color=never")) o->colour = 0;
    else if (!strcmp(a, "--color=auto")) o->colour = -1;
    else if (!strncmp(a, "--color=", 8)) return cli_usage_error(cmd, "unknown colour mode `%s` (auto, always, never)", a + 8);
    else if (!is_fmt && !strcmp(a, "--dump=ast")) o->dump_ast = true;
    else if (!is_fmt && !strcmp(a, "--dump=sema")) o->dump_sema = true;
    else if (!is_fmt && !strncmp(a, "--dump=", 7)) return cli_usage_error(cmd, "unknown dump `%s` (ast or sema)", a + 7);
    else if (!is_fmt && !strcmp(a, "--quiet")) o->quiet = true;
    else if (!is_fmt && !strcmp(a, "-I")) {
      if (i + 1 == argc) return cli_usage_error(cmd, "%s needs a folder", a);
      o->incdirs[o->nincdirs++] = argv[++i];
    } else if (!is_fmt && !strncmp(a, "-I", 2)) o->incdirs[o->nincdirs++] = a + 2;
    else if (is_fmt && !strcmp(a, "--check")) o->fmt_check = true;
    else if (is_fmt && !strcmp(a, "--stdout")) o->fmt_stdout = true;
    else if (!strcmp(a, "--")) {
      while (++i < argc) o->files[o->nfiles++] = argv[i];
    } else if (a[0] == '-' && a[1]) return cli_usage_error(cmd, "unknown option `%s`", a);
    else o->files[o->nfiles++] = a;
  }
  if (!o->nfiles) return cli_usage_error(cmd, "%s", "no input files");
  return -1;
}

static void setup_diag(Diag *d, const Options *o) {
  diag_init(d, stderr);
  d->buffered = true;
  d->format = o->format;
  if (o->colour >= 0) d->colour = o->colour;
}

static int cmd_check(const Options *o) {
  Diag d;
  setup_diag(&d, o);
  SemaOptions so = {o->incdirs, o->nincdirs, NULL};
  int failed = 0;
  for (int i = 0; i < o->nfiles; i++) {
    Sema *s = sema_new(&d, &so);
    int errors = sema_run(s, o->files[i], true);
    SrcFile *f;
    AstNode *root = sema_root(s, &f);
    if (o->dump_ast && root) ast_dump(stdout, root, f);
    if (o->dump_sema && !errors) sema_dump(s, stdout);
    diag_flush(&d);
    failed += errors > 0;
    if (!errors && !o->quiet && !o->dump_ast && !o->dump_sema) printf("%s: ok (%d declaration%s in %d file%s)\n", o->files[i], sema_ndecls(s),
                                                           sema_ndecls(s) == 1 ? "" : "s", sema_nfiles(s),
                                                           sema_nfiles(s) == 1 ? "" : "s");
    sema_free(s);
  }
  if (failed && d.format == DIAG_HUMAN)
    fprintf(stderr, "%d error%s in %d of %d file%s\n", d.errors, d.errors == 1 ? "" : "s", failed, o->nfiles,
            o->nfiles == 1 ? "" : "s");
  diag_free(&d);
  return failed ? 1 : 0;
}

static int write_whole(const char *path, const char *text, size_t n) {
  FILE *fp = fopen(path, "wb");
  if (!fp) return -1;
  size_t w = fwrite(text, 1, n, fp);
  return fclose(fp) == 0 && w == n ? 0 : -1;
}

/* Formats one file; returns 1 when it is (or was) not in the canonical layout, 2 on error. */
static int fmt_one(Diag *d, const Options *o, const char *path) {
  SrcFile *f = diag_load_file(d, path);
  if (!f) {
    diag_plain(d, path, "cannot read file");
    return 2;
  }
  Arena a;
  Interner in;
  arena_init(&a);
  intern_init(&in, &a);
  Parser p;
  int before = d->errors;
  AstNode *root = parse_file(&p, &a, &in, d, f);
  int rc = 2;
  if (root && d->errors == before) {
    size_t n;
    char *text = fmt_file(root, f, p.comments, p.ncomments, &n);
    bool same = n == f->len && memcmp(text, f->text, n) == 0;
    rc = same ? 0 : 1;
    if (o->fmt_stdout) fwrite(text, 1, n, stdout);
    else if (o->fmt_check && !same) printf("%s: not formatted\n", path);
    else if (!o->fmt_check && !same && write_whole(path, text, n)) {
      diag_plain(d, path, "cannot write file");
      rc = 2;
    }
    free(text);
  }
  arena_free(&a);
  return rc;
}

static int cmd_fmt(const Options *o) {
  Diag d;
  setup_diag(&d, o);
  int worst = 0;
  for (int i = 0; i < o->nfiles; i++) {
    int rc = fmt_one(&d, o, o->files[i]);
    if (rc == 2 || (rc == 1 && o->fmt_check)) worst = 1;
  }
  diag_free(&d);
  return worst;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fputs(usage_main, stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help") || !strcmp(cmd, "help")) {
    fputs(usage_main, stdout);
    return 0;
  }
  if (!strcmp(cmd, "--version")) {
    unsigned major, minor, patch;
    LLVMGetVersion(&major, &minor, &patch);
    printf("llmp %s (LLVM %u.%u.%u)\n", LLMP_VERSION, major, minor, patch);
    return 0;
  }
  if (!strcmp(cmd, "sweep")) {
    int src = sweep_main(argc - 2, argv + 2);
    jit_shutdown();
    return src;
  }
  if (!strcmp(cmd, "merge")) return merge_main(argc - 2, argv + 2);
  if (!strcmp(cmd, "op")) return op_main(argc - 2, argv + 2);
  if (!strcmp(cmd, "fit")) return fit_main(argc - 2, argv + 2);
  if (!strcmp(cmd, "run") || !strcmp(cmd, "graph") || !strcmp(cmd, "validate")) {
    int rrc = run_main(cmd, argc - 2, argv + 2);
    jit_shutdown();
    return rrc;
  }
  if (strcmp(cmd, "check") && strcmp(cmd, "fmt")) return cli_usage_error(NULL, "unknown command `%s`", cmd);
  Options o = {0};
  int rc = parse_options(cmd, argc - 2, argv + 2, &o);
  if (rc < 0) rc = !strcmp(cmd, "check") ? cmd_check(&o) : cmd_fmt(&o);
  free(o.files);
  free(o.incdirs);
  return rc;
}
