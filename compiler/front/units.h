/* units.h - the unit table and dimension algebra.
 *
 * A dimension is a vector of integer powers of bytes, seconds, FLOP and joules; a count has
 * all powers zero.  A unit is a name, a dimension and the factor that converts it to the
 * base units (bytes, seconds, FLOP, joules; a watt is a joule a second).  Bits are bytes with a factor of 1/8, so `25 Gb/s`
 * and `3.125 GB/s` are the same value exactly. */
#ifndef LLMP_UNITS_H
#define LLMP_UNITS_H

#include <stdbool.h>
#include <stddef.h>

enum { DIM_BYTES, DIM_SECONDS, DIM_FLOP, DIM_JOULES, DIM_N };

typedef struct Dim {
  signed char e[DIM_N];
} Dim;

typedef struct Unit {
  const char *name;
  Dim dim;
  double scale; /* value of one unit in base units */
} Unit;

/* Looks up a unit name, with an optional "/s" suffix (n counts the whole text). */
bool unit_lookup(const char *text, size_t n, Unit *out);
bool unit_is_name(const char *text, size_t n); /* without "/s" */
const char *unit_name(int i);                  /* the table's i-th unit (B, KB, ...), NULL past the last */
/* A literal's value in base units: `value unit` (unit NULL: a plain number, dimension none);
 * the unit's dimension into *dim when dim is not NULL.  An unknown unit scales by 1. */
double unit_value(double value, const char *unit, Dim *dim);
/* The unit a word means if only its case is wrong (GIB -> GiB, tflop -> TFLOP), else NULL.
 * Case matters between units (b bits, B bytes), so a word that is a unit is never fixed; a
 * word that two units spell (gb: GB and Gb, 8 times apart) gives the second in *other. */
const char *unit_case_fix(const char *text, size_t n, const char **other);
bool unit_is_bits(const char *name); /* b, Kb, Mb, Gb, Tb */
/* The size unit a word spells, its case fixed (Gb, gB -> GB), for a rate written the networking
 * way (Gbps, GBPS); NULL when it spells none. */
const char *unit_per_s_fix(const char *text, size_t n);

static inline Dim dim_none(void) {
  Dim d = {{0, 0, 0, 0}};
  return d;
}
Dim dim_mul(Dim a, Dim b);
Dim dim_div(Dim a, Dim b);
bool dim_eq(Dim a, Dim b);
bool dim_is_none(Dim a);
Dim dim_make(int bytes, int seconds, int flop);
/* "bytes/second (bandwidth)", "a plain number", "bytes*seconds": into buf. */
const char *dim_describe(Dim d, char *buf, size_t n);

#endif
