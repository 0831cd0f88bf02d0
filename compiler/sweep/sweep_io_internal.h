/* sweep_io_internal.h - what the files behind sweep_io.h (sweep_top, sweep_write, sweep_read,
 * sweep_merge, sweep_shard, sweep_progress) share, and nothing outside them uses. */
#ifndef LLMP_SWEEP_IO_INTERNAL_H
#define LLMP_SWEEP_IO_INTERNAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "sweep_io.h"

/* sweep_sort for any count of rows. */
void sweep_sort_rows(SweepRow *rows, size_t n, bool maximize);

/* 1234567 -> "1,234,567" (buf: at least 32 bytes). */
const char *sweep_grouped(char *buf, uint64_t v);
/* A rate with a metric prefix: "950", "12.3 k", "1.2 M" (buf: at least 32 bytes). */
const char *sweep_rate_text(char *buf, double r);

static inline const char *sweep_sense(const SweepMeta *m) { return m->maximize ? "maximize" : "minimize"; }
static inline bool sweep_is_digit(int c) { return c >= '0' && c <= '9'; }

#endif
