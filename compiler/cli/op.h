/* op.h - the `llmp op` command (op.c): argv after "op"; returns the exit status. */
#ifndef LLMP_OP_H
#define LLMP_OP_H

int op_main(int argc, char **argv);

#endif
