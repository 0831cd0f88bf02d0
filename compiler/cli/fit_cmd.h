/* fit_cmd.h - the `llmp fit` command (fit_cmd.c): argv after "fit"; returns the exit status. */
#ifndef LLMP_FIT_CMD_H
#define LLMP_FIT_CMD_H

int fit_main(int argc, char **argv);

#endif
