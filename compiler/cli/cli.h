/* cli.h - the commands of the llmp driver, in the manner of git's builtin.h: the entry of
 * each in main.c's table, and the function and usage text each command file defines. */
#ifndef LLMP_CLI_H
#define LLMP_CLI_H

#include <stdbool.h>

#include "fileio.h"
#include "front/diag.h"
#include "front/sema.h"
#include "report/html.h"

enum {                         /* CliCommand.needs */
       NEED_LLVM_SHUTDOWN = 1, /* may compile with the JIT: main shuts LLVM down after the command
                                   (jit_shutdown).  The JIT sets LLVM's native target up itself, once,
                                   on its first compile (jit.c), so --no-jit and --help never pay it */
};

typedef struct CliCommand {
  const char *name;                                             /* the word after llmp */
  int (*fn)(int argc, char **argv, const struct CliCommand *c); /* argv after the name */
  const char *usage;                                            /* `llmp NAME --help` */
  unsigned needs;                                               /* NEED_* */
} CliCommand;

/* The commands: each returns the exit status (0; 1 when an input has errors; 2 for a bad
 * command line). */
int cli_check(int argc, char **argv, const CliCommand *c); /* check.c */
int cli_fmt(int argc, char **argv, const CliCommand *c);
/* check's lowering of each scenario and sweep after a clean sema (check.c; the language
 * server's diagnostics run it too): the errors it reports. */
int cli_check_lowering(Sema *s, Diag *d, const SemaOptions *so);
int cli_run(int argc, char **argv, const CliCommand *c); /* run.c */
int cli_graph(int argc, char **argv, const CliCommand *c);
int cli_validate(int argc, char **argv, const CliCommand *c);
/* --scenario or --sweep NAME that the file does not declare (run.c): the name meant, or the
 * file's names of that kind ("scenario", "sweep"), all[0..total). */
void cli_no_such_decl(Diag *d, const char *path, const char *kind, const char *name, Decl *const *all, int total);
int cli_sweep(int argc, char **argv, const CliCommand *c); /* sweep_cmd.c */
int cli_merge(int argc, char **argv, const CliCommand *c); /* merge_cmd.c */
int cli_op(int argc, char **argv, const CliCommand *c);    /* op.c */
int cli_fit(int argc, char **argv, const CliCommand *c);   /* fit_cmd.c */
int cli_lsp(int argc, char **argv, const CliCommand *c);   /* lsp_cmd.c */

/* --html FILE (html_out.c): the page of run, sweep or validate, titled with the command and
 * its operands.  cli_html_open returns 0, or 1 after reporting that FILE cannot be written;
 * cli_html_close ends the page and renames it over FILE when `complete` (else FILE stays as
 * it was, with a note): 0, or 1 after reporting a failed write.  A page never opened: 0. */
typedef struct CliHtml {
  AtomicFile file;
  Html *page; /* NULL: no --html */
  const char *path;
} CliHtml;
int cli_html_open(Diag *d, const char *path, const char *cmd, const char *const *operands, int n, CliHtml *out);
int cli_html_close(Diag *d, CliHtml *h, bool complete);

extern const char cli_usage_check[], cli_usage_fmt[], cli_usage_run[], cli_usage_graph[], cli_usage_validate[],
    cli_usage_sweep[], cli_usage_merge[], cli_usage_op[], cli_usage_fit[], cli_usage_lsp[];

#endif
