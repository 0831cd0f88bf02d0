/* main.c - the llmp command line: a table of commands, each a straight list of passes.
 *
 *   llmp check FILE...      parse -> imports -> sema          (check.c; --dump=ast|sema)
 *   llmp fmt FILE...        parse -> canonical layout         (check.c)
 *   llmp run|graph|validate parse -> sema -> lower -> evaluate -> report  (run.c)
 *   llmp sweep FILE         parse -> sema -> lower with axes -> stage -> JIT -> loop nest (sweep_cmd.c)
 *   llmp merge SHARD...     the JSON Lines of a sweep's shards -> one result  (merge_cmd.c)
 *   llmp op KIND ARGS...    hw/ -> one cost kernel's answer   (op.c)
 *   llmp fit SAMPLES_DIR    hw/ and measured samples -> calibration tables  (fit_cmd.c)
 *   llmp lsp                the language server on stdin and stdout (lsp_cmd.c, lsp/)
 *
 * Exit status: 0 when clean, 1 when an input has errors (or, for fmt --check, is not
 * formatted), 2 for a bad command line. */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <llvm-c/Core.h>

#include "cli.h"
#include "front/schema.h"
#include "jit/jit.h"
#include "options.h"

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
    "  lsp      the language server for editors (Language Server Protocol on stdio)\n"
    "\n"
    "options:\n"
    "  -h, --help     this text; `llmp COMMAND --help` describes a command\n"
    "  --version      the version of llmp and of the LLVM it is built with\n";

static const CliCommand commands[] = {
    {"check", cli_check, cli_usage_check, 0},
    {"fmt", cli_fmt, cli_usage_fmt, 0},
    {"run", cli_run, cli_usage_run, NEED_LLVM_SHUTDOWN},
    {"validate", cli_validate, cli_usage_validate, NEED_LLVM_SHUTDOWN},
    {"graph", cli_graph, cli_usage_graph, NEED_LLVM_SHUTDOWN},
    {"sweep", cli_sweep, cli_usage_sweep, NEED_LLVM_SHUTDOWN},
    {"merge", cli_merge, cli_usage_merge, 0},
    {"op", cli_op, cli_usage_op, 0},
    {"fit", cli_fit, cli_usage_fit, 0},
    {"lsp", cli_lsp, cli_usage_lsp, 0},
};

static int version(void) {
  unsigned major, minor, patch;
  LLVMGetVersion(&major, &minor, &patch);
  printf("llmp %s (LLVM %u.%u.%u)\n", LLMP_VERSION, major, minor, patch);
  return 0;
}

/* A command's status, 1 when its standard output could not be written whole (a full disk,
 * `> /dev/full`): the output is what the user asked for, so losing it is an error. */
static int output_status(const char *cmd, int rc) {
  if (fflush(stdout) == 0 && !ferror(stdout)) return rc;
  fprintf(stderr, "llmp %s: cannot write standard output: %s\n", cmd, strerror(errno ? errno : EIO));
  return rc ? rc : 1;
}

/* `llmp runn`: the command meant, or the list of commands. */
static int unknown_command(const char *name) {
  Suggest sg;
  suggest_init(&sg, name);
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) suggest_offer(&sg, commands[i].name);
  fprintf(stderr, "llmp: unknown command `%s`%s", name, suggest_hint(&sg, false));
  for (size_t i = 0; !*suggest_hint(&sg, false) && i < sizeof commands / sizeof commands[0]; i++)
    fprintf(stderr, "%s%s", i ? ", " : " (the commands: ", commands[i].name);
  fprintf(stderr, "%s\nTry `llmp --help`.\n", *suggest_hint(&sg, false) ? "" : ")");
  return 2;
}

int main(int argc, char **argv) {
  signal(SIGXFSZ, SIG_IGN); /* past the file size limit a write fails (EFBIG) and is reported */
  if (argc < 2) {
    fputs(usage_main, stderr);
    return 2;
  }
  const char *name = argv[1];
  if (!strcmp(name, "-h") || !strcmp(name, "--help") || !strcmp(name, "help")) {
    fputs(usage_main, stdout);
    return output_status("--help", 0);
  }
  if (!strcmp(name, "--version")) return output_status("--version", version());
  for (size_t i = 0; i < sizeof commands / sizeof commands[0]; i++) {
    const CliCommand *c = &commands[i];
    if (strcmp(name, c->name)) continue;
    int rc = c->fn(argc - 2, argv + 2, c);
    if (c->needs & NEED_LLVM_SHUTDOWN) jit_shutdown(); /* after the command's last jit_free */
    return output_status(c->name, rc);
  }
  return unknown_command(name);
}
