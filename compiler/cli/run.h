/* run.h - the commands that evaluate scenarios: llmp run, llmp graph, llmp validate. */
#ifndef LLMP_RUN_H
#define LLMP_RUN_H

/* cmd is "run", "graph" or "validate"; argv holds the command's arguments. */
int run_main(const char *cmd, int argc, char **argv);

#endif
