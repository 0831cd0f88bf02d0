/* lsp_cmd.c - `llmp lsp`: the language server on standard input and output (compiler/lsp/). */
#include <signal.h>
#include <stdio.h>

#include "cli.h"
#include "lsp/lsp.h"
#include "options.h"

const char cli_usage_lsp[] = "usage: llmp lsp [OPTIONS]\n"
                             "\n"
                             "Runs the Language Server Protocol server on standard input and output, for an editor to\n"
                             "start: diagnostics as `llmp check` reports them, hover (a field's documentation, value\n"
                             "and origin; a scenario's iteration time and memory), go to definition, references,\n"
                             "completion, formatting as `llmp fmt`, document symbols and quick fixes. docs/editors.md\n"
                             "says how to start it from Neovim and VS Code.\n"
                             "\n"
                             "options:\n"
                             "  -I DIR       also look for imports in DIR; may be repeated\n"
                             "  --stdio      the transport (the only one, and the default; accepted for clients that\n"
                             "               pass it)\n"
                             "  -h, --help   this text\n"
                             "\n"
                             "Exit status: 0 after the client's `shutdown` and `exit`, 1 when the input ends first.\n";

enum { OPT_STDIO };

static const CliOption lsp_options[] = {
    {"--stdio", OPT_STDIO, 0},
    {NULL, 0, 0},
};

static int lsp_option(void *ctx, int id, const char *value) {
  (void)ctx, (void)id, (void)value;
  return -1;
}

static int lsp_operand(void *ctx, const char *arg) {
  (void)ctx;
  return cli_usage_error("lsp", "unexpected argument `%s`: the server reads its files from the editor", arg);
}

int cli_lsp(int argc, char **argv, const CliCommand *c) {
  CliArgs a = {0};
  CliSpec spec = {
      c,   CLI_INCLUDE | CLI_INCLUDE_JOINED | CLI_DASHDASH, lsp_options, "%s needs a folder", lsp_option, lsp_operand,
      NULL};
  int rc = cli_parse(&spec, argc, argv, &a);
  if (rc < 0) {
    SemaOptions so = {a.incdirs, a.nincdirs, NULL};
    signal(SIGPIPE, SIG_IGN);                 /* a client that goes away ends the server through a failed write */
    rc = lsp_serve(stdin, stdout, &so, cli_check_lowering); /* what check runs after sema */
  }
  cli_args_free(&a);
  return rc;
}
