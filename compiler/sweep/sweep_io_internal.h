/* sweep_io_internal.h - what the files of compiler/sweep/ share, and nothing outside them
 * uses. */
#ifndef LLMP_SWEEP_IO_INTERNAL_H
#define LLMP_SWEEP_IO_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sweep_io.h"

/* sweep_sort for any count of rows. */
void sweep_sort_rows(SweepRow *rows, size_t n, bool maximize);


static inline const char *sweep_sense(const SweepMeta *m) { return m->maximize ? "maximize" : "minimize"; }
static inline bool sweep_is_digit(int c) { return c >= '0' && c <= '9'; }

#endif
