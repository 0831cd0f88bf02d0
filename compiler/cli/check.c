/* check.c - `llmp check` and `llmp fmt`: the front end alone.
 *
 *   check: parse -> imports -> sema -> lower each scenario and sweep, reporting every error
 *          [--dump=ast after parsing, --dump=sema after checking]
 *   fmt:   parse -> the canonical layout (front/fmt.c), rewritten, printed or only compared
 *
 * Each FILE is its own compilation (an arena, a declaration table). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cli.h"
#include "fileio.h"
#include "front/fmt.h"
#include "front/parse.h"
#include "front/sema.h"
#include "lower/lower.h"
#include "options.h"
#include "strbuf.h"
#include "sweep/sweep.h"
#include "sweep/sweep_io.h"

const char cli_usage_check[] =
    "usage: llmp check [OPTIONS] FILE...\n"
    "\n"
    "Parses each FILE and what it imports, and checks names, extends, fields, units and the\n"
    "divisibility of each scenario's plan; then lowers each scenario and sweep of FILE as\n"
    "`llmp run` and `llmp sweep` would, so that what they refuse, check reports. Each FILE is\n"
    "checked on its own. Exit status 0 when every file is clean, 1 when any has errors.\n"
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

const char cli_usage_fmt[] = "usage: llmp fmt [OPTIONS] FILE...\n"
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

typedef struct CheckOptions {
  CliArgs a; /* the files, -I, the diagnostics' form */
  bool dump_ast, dump_sema, quiet, fmt_check, fmt_stdout;
} CheckOptions;

enum { OPT_DUMP, OPT_QUIET, OPT_CHECK, OPT_STDOUT };

static const CliOption check_options[] = {
    {"--dump=", OPT_DUMP, CLI_JOINED},
    {"--quiet", OPT_QUIET, 0},
    {NULL, 0, 0},
};
static const CliOption fmt_options[] = {
    {"--check", OPT_CHECK, 0},
    {"--stdout", OPT_STDOUT, 0},
    {NULL, 0, 0},
};

static int check_option(void *ctx, int id, const char *value) {
  CheckOptions *o = ctx;
  switch (id) {
  case OPT_DUMP:
    if (!strcmp(value, "ast"))
      o->dump_ast = true;
    else if (!strcmp(value, "sema"))
      o->dump_sema = true;
    else
      return cli_usage_error("check", "unknown dump `%s` (ast or sema)", value);
    break;
  case OPT_QUIET: o->quiet = true; break;
  case OPT_CHECK: o->fmt_check = true; break;
  case OPT_STDOUT: o->fmt_stdout = true; break;
  }
  return -1;
}

/* Parses the command line by spec (ctx: the CheckOptions), then runs the command over it. */
static int check_main(const CliSpec *spec, int argc, char **argv, int (*run)(const CheckOptions *)) {
  CheckOptions *o = spec->ctx;
  int rc = cli_parse(spec, argc, argv, &o->a);
  if (rc < 0 && !o->a.nargs) rc = cli_usage_error(spec->cmd->name, "%s", "no input files");
  if (rc < 0) rc = run(o);
  cli_args_free(&o->a);
  return rc;
}

/* Each sweep's size, the product of its axes: "  sweep search: 34,560 points (5 x 6 x 4 x 3 x 4 x 2)". */
static void print_sweep_sizes(Sema *s) {
  int n = sema_root_decls(s, DK_SWEEP, NULL, 0);
  Decl **all = xcalloc((size_t)(n ? n : 1), sizeof *all);
  sema_root_decls(s, DK_SWEEP, all, n);
  for (int i = 0; i < n; i++) {
    double points = 1;
    StrBuf axes = {0};
    for (AstNode *c = sema_block_body(all[i]).first; c; c = c->next)
      if (c->kind == AST_VARY && c->u.bin.rhs->kind == AST_LIST) {
        points *= c->u.bin.rhs->u.list.count;
        strbuf_printf(&axes, "%s%u", axes.n ? " x " : "", c->u.bin.rhs->u.list.count);
      }
    char text[32];
    if (points < 1e19)
      sweep_grouped(text, (uint64_t)points);
    else
      snprintf(text, sizeof text, "%.3g", points);
    printf("  sweep %s: %s point%s%s%s%s\n", sema_decl_name(all[i]), text, points == 1 ? "" : "s", axes.n ? " (" : "",
           axes.n ? axes.p : "", axes.n ? ")" : "");
    strbuf_free(&axes);
  }
  free(all);
}

/* Lowers each scenario and each sweep of the file's root as run and sweep do (the sweep
 * staged, not compiled): the errors only lowering finds.  A sweep of a scenario of the file
 * that failed is not lowered: it would repeat the scenario's errors.  Returns the errors
 * reported. */
int cli_check_lowering(Sema *s, Diag *d, const SemaOptions *so) {
  int before = d->errors;
  HwSet *hw = hw_new(s, d, so);
  int n = sema_root_decls(s, DK_SCENARIO, NULL, 0), m = sema_root_decls(s, DK_SWEEP, NULL, 0);
  Decl **all = xcalloc((size_t)(n + m ? n + m : 1), sizeof *all);
  bool *failed = xcalloc((size_t)(n ? n : 1), sizeof *failed);
  sema_root_decls(s, DK_SCENARIO, all, n);
  sema_root_decls(s, DK_SWEEP, all + n, m);
  SweepOptions opt = {1, false, 0, 1, false, NULL, false, false, false, 0, NULL};
  for (int i = 0; hw && i < n + m; i++) {
    if (i < n) {
      Lowered l;
      failed[i] = lower_scenario(s, hw, all[i], d, &l) < 0;
      lower_free(&l);
      continue;
    }
    bool skip = false;
    for (int k = 0; k < n; k++) skip |= failed[k] && sema_parent(all[i]) == all[k];
    if (!skip) sweep_free(sweep_new(s, hw, all[i], d, &opt));
  }
  free(failed);
  free(all);
  hw_free(hw);
  return d->errors - before;
}

static int check_files(const CheckOptions *o) {
  Diag d;
  cli_diag_init(&d, &o->a);
  SemaOptions so = {o->a.incdirs, o->a.nincdirs, NULL};
  int failed = 0, nfiles = o->a.nargs;
  for (int i = 0; i < nfiles; i++) {
    Sema *s = sema_new(&d, &so);
    int errors = sema_run(s, o->a.args[i], true);
    if (!errors) errors = cli_check_lowering(s, &d, &so);
    SrcFile *f;
    AstNode *root = sema_root(s, &f);
    if (o->dump_ast && root) ast_dump(stdout, root, f);
    if (o->dump_sema && !errors) sema_dump(s, stdout);
    diag_flush(&d);
    failed += errors > 0;
    if (!errors && !o->quiet && !o->dump_ast && !o->dump_sema)
      printf("%s: ok (%d declaration%s in %d file%s)\n", o->a.args[i], sema_ndecls(s), sema_ndecls(s) == 1 ? "" : "s",
             sema_nfiles(s), sema_nfiles(s) == 1 ? "" : "s");
    if (!errors && !o->quiet && !o->dump_ast && !o->dump_sema) print_sweep_sizes(s);
    sema_free(s);
  }
  if (failed && d.format == DIAG_HUMAN)
    fprintf(stderr, "%d error%s in %d of %d file%s\n", d.errors, d.errors == 1 ? "" : "s", failed, nfiles,
            nfiles == 1 ? "" : "s");
  diag_free(&d);
  return failed ? 1 : 0;
}

int cli_check(int argc, char **argv, const CliCommand *c) {
  CheckOptions o = {0};
  CliSpec spec = {c,
                  CLI_INCLUDE | CLI_INCLUDE_JOINED | CLI_DIAG | CLI_DIAG_NAMED | CLI_DASHDASH,
                  check_options,
                  "%s needs a folder",
                  check_option,
                  NULL,
                  &o};
  return check_main(&spec, argc, argv, check_files);
}

/* Formats one file; returns 1 when it is (or was) not in the canonical layout, 2 on error. */
static int fmt_one(Diag *d, const CheckOptions *o, const char *path) {
  const char *why;
  SrcFile *f = diag_load_file(d, path, &why);
  if (!f) {
    diag_plain(d, path, "cannot read file: %s", why);
    return 2;
  }
  Parsed x;
  AstNode *root = parse_alone(&x, d, f);
  int rc = 2;
  if (root) {
    size_t n;
    char *text = fmt_file(root, f, x.p.comments, x.p.ncomments, &n);
    bool same = n == f->len && memcmp(text, f->text, n) == 0;
    rc = same ? 0 : 1;
    if (o->fmt_stdout)
      fwrite(text, 1, n, stdout);
    else if (o->fmt_check && !same)
      printf("%s: not formatted\n", path);
    else if (!o->fmt_check && !same && atomic_write(path, text, n, &why) != 0) {
      diag_plain(d, path, "cannot write file: %s (the file is unchanged)", why);
      rc = 2;
    }
    free(text);
  }
  parsed_free(&x);
  return rc;
}

static int fmt_files(const CheckOptions *o) {
  Diag d;
  cli_diag_init(&d, &o->a);
  int worst = 0;
  for (int i = 0; i < o->a.nargs; i++) {
    int rc = fmt_one(&d, o, o->a.args[i]);
    if (rc == 2 || (rc == 1 && o->fmt_check)) worst = 1;
  }
  diag_free(&d);
  return worst;
}

int cli_fmt(int argc, char **argv, const CliCommand *c) {
  CheckOptions o = {0};
  CliSpec spec = {c, CLI_DIAG | CLI_DIAG_NAMED | CLI_DASHDASH, fmt_options, NULL, check_option, NULL, &o};
  return check_main(&spec, argc, argv, fmt_files);
}
