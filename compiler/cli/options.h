/* options.h - the one command-line parser of the llmp commands.
 *
 * A command describes its own options in a table (the spelling, whether a value follows) and
 * handles them in a callback; the parser does the rest alike for every command: -h and --help
 * print the command's usage, the shared options the command accepts (-I, --error-format,
 * --color, --) go to CliArgs, any other argument starting with '-' is an unknown option, and
 * the operands are collected or handed to the command.  Arguments are read left to right and
 * the first error or -h ends the parse, so `llmp run --bogus -h` is an error. */
#ifndef LLMP_OPTIONS_H
#define LLMP_OPTIONS_H

#include "cli.h"
#include "front/diag.h"

enum {                         /* CliSpec.shared: the shared options a command accepts */
       CLI_INCLUDE = 1,        /* -I DIR: CliArgs.incdirs */
       CLI_INCLUDE_JOINED = 2, /* -IDIR */
       CLI_DIAG = 4,           /* --error-format=human|short, --color=auto|always|never */
       CLI_DIAG_NAMED = 8,     /* another value of those is named in the error (else: an unknown option) */
       CLI_DASHDASH = 16,      /* --: every argument after it is an operand */
       CLI_OPERANDS_LAST = 32, /* the first operand, or -N (a number), and all after it are operands */
};

enum { CLI_NEXT = 1, CLI_JOINED = 2 }; /* CliOption.value */

typedef struct CliOption {
  const char *name; /* as typed: "--scenario", "-j", "--dump=" */
  int id;           /* handed to CliSpec.option */
  int value;        /* 0: none; CLI_NEXT: the next argument; CLI_JOINED: the rest of this
                                   one (-j8, --dump=ast); both: -j 8 and -j8 */
} CliOption;

typedef struct CliSpec {
  const CliCommand *cmd;                               /* its name for messages, its usage for -h */
  unsigned shared;                                     /* CLI_* */
  const CliOption *options;                            /* the command's own, ended by a NULL name; NULL: none */
  const char *missing;                                 /* the message for a value left out (NULL: "%s needs a value") */
  int (*option)(void *ctx, int id, const char *value); /* -1 to go on, else the exit status */
  int (*operand)(void *ctx, const char *arg);          /* the same; NULL: into CliArgs.args */
  void *ctx;
} CliSpec;

/* What the parser fills; the arrays point into argv and are freed by cli_args_free. */
typedef struct CliArgs {
  const char **args; /* the operands, when CliSpec.operand is NULL */
  int nargs;
  const char **incdirs; /* -I, in order */
  int nincdirs;
  DiagFormat diag_format;
  int colour; /* -1: auto */
} CliArgs;

/* Parses argv (after the command's name).  Returns -1 to go on, else the exit status: 0
 * after printing the usage, 2 after a usage error. */
int cli_parse(const CliSpec *s, int argc, char **argv, CliArgs *a);
void cli_args_free(CliArgs *a);

/* "llmp CMD: MESSAGE" and "Try `llmp CMD --help`." on stderr (cmd NULL: the driver itself);
 * fmt takes one %s, arg.  Returns 2, the exit status of a bad command line. */
int cli_usage_error(const char *cmd, const char *fmt, const char *arg);

/* A buffered diagnostic sink on stderr with the format and colour of the command line. */
void cli_diag_init(Diag *d, const CliArgs *a);

#endif
