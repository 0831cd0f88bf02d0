/* cli.h - what the commands of the llmp driver share (main.c defines it). */
#ifndef LLMP_CLI_H
#define LLMP_CLI_H

/* "llmp CMD: MESSAGE" and "Try `llmp CMD --help`." on stderr (cmd NULL: the driver itself);
 * fmt takes one %s, arg.  Returns 2, the exit status of a bad command line. */
int cli_usage_error(const char *cmd, const char *fmt, const char *arg);

#endif
