/* options.c - the one command-line parser of the llmp commands (options.h), and the usage
 * error every command prints the same way. */
#include "options.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

int cli_usage_error(const char *cmd, const char *fmt, const char *arg) {
  fprintf(stderr, "llmp%s%s: ", cmd ? " " : "", cmd ? cmd : "");
  fprintf(stderr, fmt, arg);
  fprintf(stderr, "\nTry `llmp%s%s --help`.\n", cmd ? " " : "", cmd ? cmd : "");
  return 2;
}

/* The command's option that arg spells: exactly, or as its prefix when the value may be joined. */
static const CliOption *option_of(const CliOption *t, const char *arg) {
  for (; t && t->name; t++) {
    size_t n = strlen(t->name);
    if (!strcmp(arg, t->name) || (t->value & CLI_JOINED && !strncmp(arg, t->name, n))) return t;
  }
  return NULL;
}

/* --error-format=FORMAT or --color=WHEN: -1, or 2 after the message for another value. */
static int diag_option(const CliSpec *s, CliArgs *a, const char *arg) {
  /* clang-format off */
  if (!strcmp(arg, "--error-format=short")) a->diag_format = DIAG_SHORT;
  else if (!strcmp(arg, "--error-format=human")) a->diag_format = DIAG_HUMAN;
  else if (!strcmp(arg, "--color=always")) a->colour = 1;
  else if (!strcmp(arg, "--color=never")) a->colour = 0;
  else if (!strcmp(arg, "--color=auto")) a->colour = -1;
  else if (!(s->shared & CLI_DIAG_NAMED)) return cli_usage_error(s->cmd->name, "unknown option `%s`", arg);
  else if (arg[2] == 'e') return cli_usage_error(s->cmd->name, "unknown error format `%s` (human or short)", arg + 15);
  else return cli_usage_error(s->cmd->name, "unknown colour mode `%s` (auto, always, never)", arg + 8);
  /* clang-format on */
  return -1;
}

static bool is_option(const CliSpec *s, const char *arg) {
  if (arg[0] != '-' || !arg[1]) return false;
  return !(s->shared & CLI_OPERANDS_LAST && arg[1] >= '0' && arg[1] <= '9');
}

static int operand(const CliSpec *s, CliArgs *a, const char *arg) {
  if (s->operand) return s->operand(s->ctx, arg);
  a->args[a->nargs++] = arg;
  return -1;
}

/* The operands from argv[i] on, every one of them. */
static int operands_from(const CliSpec *s, CliArgs *a, int i, int argc, char **argv) {
  int rc = -1;
  for (; i < argc && rc < 0; i++) rc = operand(s, a, argv[i]);
  return rc;
}

/* Each argument is, in this order: -h or --help, one of the command's own options, a shared
 * one the command accepts, --, an unknown option, or an operand. */
int cli_parse(const CliSpec *s, int argc, char **argv, CliArgs *a) {
  const char *cmd = s->cmd->name, *missing = s->missing ? s->missing : "%s needs a value";
  *a = (CliArgs){
      xcalloc((size_t)argc + 1, sizeof *a->args), 0, xcalloc((size_t)argc + 1, sizeof *a->incdirs), 0, DIAG_HUMAN, -1};
  for (int i = 0; i < argc; i++) {
    const char *arg = argv[i];
    bool has_next = i + 1 < argc;
    const CliOption *o = option_of(s->options, arg);
    int rc = -1;
    if (!strcmp(arg, "-h") || !strcmp(arg, "--help")) {
      fputs(s->cmd->usage, stdout);
      return 0;
    } else if (o) {
      const char *value = NULL;
      if (o->value & CLI_NEXT && !strcmp(arg, o->name)) {
        if (!has_next) return cli_usage_error(cmd, missing, arg);
        value = argv[++i];
      } else if (o->value & CLI_JOINED) {
        value = arg + strlen(o->name);
      }
      rc = s->option(s->ctx, o->id, value);
    } else if (s->shared & CLI_DIAG && (!strncmp(arg, "--error-format=", 15) || !strncmp(arg, "--color=", 8))) {
      rc = diag_option(s, a, arg);
    } else if (s->shared & CLI_INCLUDE && !strcmp(arg, "-I")) {
      if (!has_next) return cli_usage_error(cmd, missing, arg);
      a->incdirs[a->nincdirs++] = argv[++i];
    } else if (s->shared & CLI_INCLUDE_JOINED && !strncmp(arg, "-I", 2)) {
      a->incdirs[a->nincdirs++] = arg + 2;
    } else if (s->shared & CLI_DASHDASH && !strcmp(arg, "--")) {
      return operands_from(s, a, i + 1, argc, argv);
    } else if (is_option(s, arg)) {
      return cli_usage_error(cmd, "unknown option `%s`", arg);
    } else if (s->shared & CLI_OPERANDS_LAST) {
      return operands_from(s, a, i, argc, argv);
    } else {
      rc = operand(s, a, arg);
    }
    if (rc >= 0) return rc;
  }
  return -1;
}

void cli_args_free(CliArgs *a) {
  free(a->args);
  free(a->incdirs);
}

void cli_diag_init(Diag *d, const CliArgs *a) {
  diag_init(d, stderr);
  d->buffered = true;
  d->format = a->diag_format;
  if (a->colour >= 0) d->colour = a->colour;
}
