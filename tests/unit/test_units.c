/* test_units.c - unit tests of compiler/front/units.c: the unit table (names, dimensions, exact
 * scales), the "/s" suffix, and the dimension algebra and its descriptions. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <stdio.h>
#include <string.h>

#include "front/units.h"

#include "support.h"

static void dim_is(Dim d, int bytes, int seconds, int flop) {
  if (d.e[DIM_BYTES] != bytes || d.e[DIM_SECONDS] != seconds || d.e[DIM_FLOP] != flop)
    fail_msg("dimension (%d, %d, %d), expected (%d, %d, %d)", d.e[0], d.e[1], d.e[2], bytes, seconds, flop);
}

static Unit lookup_ok(const char *text) {
  Unit u;
  memset(&u, 0, sizeof u);
  if (!unit_lookup(text, strlen(text), &u)) fail_msg("unit `%s` not found", text);
  return u;
}

static const struct {
  const char *name;
  int b, s, f;
  double scale;
} table[] = {
    {"B", 1, 0, 0, 1},
    {"KB", 1, 0, 0, 1e3},
    {"MB", 1, 0, 0, 1e6},
    {"GB", 1, 0, 0, 1e9},
    {"TB", 1, 0, 0, 1e12},
    {"KiB", 1, 0, 0, 1024.0},
    {"MiB", 1, 0, 0, 1024.0 * 1024.0},
    {"GiB", 1, 0, 0, 1024.0 * 1024.0 * 1024.0},
    {"TiB", 1, 0, 0, 1024.0 * 1024.0 * 1024.0 * 1024.0},
    {"b", 1, 0, 0, 0.125},
    {"Kb", 1, 0, 0, 125.0},
    {"Mb", 1, 0, 0, 125000.0},
    {"Gb", 1, 0, 0, 125000000.0},
    {"Tb", 1, 0, 0, 125000000000.0},
    {"s", 0, 1, 0, 1},
    {"ms", 0, 1, 0, 1e-3},
    {"us", 0, 1, 0, 1e-6},
    {"ns", 0, 1, 0, 1e-9},
    {"FLOP", 0, 0, 1, 1},
    {"GFLOP", 0, 0, 1, 1e9},
    {"TFLOP", 0, 0, 1, 1e12},
    {"PFLOP", 0, 0, 1, 1e15},
};
enum { NTABLE = sizeof table / sizeof table[0] };

TEST(every_unit_has_its_exact_scale) {
  for (int i = 0; i < NTABLE; i++) {
    Unit u = lookup_ok(table[i].name);
    assert_string_equal(u.name, table[i].name);
    dim_is(u.dim, table[i].b, table[i].s, table[i].f);
    if (u.scale != table[i].scale)
      fail_msg("unit %s: scale %.17g, expected %.17g", table[i].name, u.scale, table[i].scale);
    assert_true(unit_is_name(table[i].name, strlen(table[i].name)));
  }
}

TEST(named_scales_from_the_brief) {
  assert_dbl_eq(lookup_ok("Gb").scale, 125e6);
  assert_dbl_eq(lookup_ok("GiB").scale, 1073741824.0);
  assert_dbl_eq(lookup_ok("us").scale, 1e-6);
  assert_dbl_eq(lookup_ok("TFLOP").scale, 1e12);
  /* Bits are bytes over 8, exactly: 8 Gb is 1 GB. */
  assert_dbl_eq(8 * lookup_ok("Gb").scale, lookup_ok("GB").scale);
  assert_dbl_eq(8 * lookup_ok("b").scale, lookup_ok("B").scale);
}

TEST(per_second_suffix_lowers_seconds) {
  for (int i = 0; i < NTABLE; i++) {
    char buf[32];
    snprintf(buf, sizeof buf, "%s/s", table[i].name);
    Unit u = lookup_ok(buf);
    dim_is(u.dim, table[i].b, table[i].s - 1, table[i].f);
    assert_dbl_eq(u.scale, table[i].scale);
  }
  Unit bw = lookup_ok("GB/s");
  dim_is(bw.dim, 1, -1, 0);
  Unit rate = lookup_ok("TFLOP/s");
  dim_is(rate.dim, 0, -1, 1);
  /* s/s is a plain number */
  Unit ss = lookup_ok("s/s");
  dim_is(ss.dim, 0, 0, 0);
  /* 25 Gb/s is 3.125e9 bytes per second, exactly */
  assert_dbl_eq(25 * lookup_ok("Gb/s").scale, 3.125e9);
}

TEST(lookup_uses_only_n_characters) {
  Unit u;
  assert_true(unit_lookup("GiBxyz", 3, &u));
  assert_string_equal(u.name, "GiB");
  assert_true(unit_lookup("GB/s)", 4, &u));
  dim_is(u.dim, 1, -1, 0);
  assert_false(unit_lookup("GiB", 2, &u)); /* "Gi" */
}

TEST(unknown_names_rejected) {
  static const char *const bad[] = {"gb",   "gB",    "Gib", "GIB",  "kB",   "KIB",   "bytes", "sec",
                                    "S",    "mS",    "Us",  "flop", "Flop", "TFlop", "EB",    "PB",
                                    "PiB",  "EFLOP", "",    "/s",   "GB/",  "GB/h",  "GB/ms", "B/s/s",
                                    "GB s", " GB",   "GB ", "h",    "min",  "1GB",   "GBs",   "Gbit"};
  for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
    Unit u = {"untouched", {{9, 9, 9}}, 42};
    if (unit_lookup(bad[i], strlen(bad[i]), &u)) fail_msg("`%s` was accepted as a unit", bad[i]);
    assert_string_equal(u.name, "untouched"); /* the output is left alone */
  }
}

TEST(unit_is_name_without_suffix) {
  assert_true(unit_is_name("GiB", 3));
  assert_true(unit_is_name("s", 1));
  assert_true(unit_is_name("b", 1));
  assert_false(unit_is_name("GB/s", 4)); /* "/s" is not part of a name */
  assert_false(unit_is_name("", 0));
  assert_false(unit_is_name("x", 1));
  assert_false(unit_is_name("f1b", 3));
  assert_true(unit_is_name("msXX", 2));
}

TEST(dim_mul_div_eq) {
  Dim bytes = dim_make(1, 0, 0), secs = dim_make(0, 1, 0), flop = dim_make(0, 0, 1);
  dim_is(dim_mul(bytes, secs), 1, 1, 0);
  dim_is(dim_div(bytes, secs), 1, -1, 0);
  dim_is(dim_div(flop, bytes), -1, 0, 1);
  dim_is(dim_mul(dim_div(bytes, secs), secs), 1, 0, 0);
  dim_is(dim_div(bytes, bytes), 0, 0, 0);
  dim_is(dim_mul(dim_none(), dim_none()), 0, 0, 0);
  dim_is(dim_make(-2, 3, -4), -2, 3, -4);
  assert_true(dim_eq(dim_div(bytes, bytes), dim_none()));
  assert_true(dim_is_none(dim_div(secs, secs)));
  assert_false(dim_is_none(bytes));
  assert_true(dim_eq(dim_mul(bytes, secs), dim_mul(secs, bytes)));
  assert_false(dim_eq(bytes, secs));
  assert_false(dim_eq(dim_make(1, -1, 0), dim_make(1, 1, 0)));
  assert_false(dim_eq(dim_make(0, 0, 1), dim_make(0, 0, 2)));
}

TEST(dim_powers_saturate) {
  Dim d = dim_make(90, -90, 0);
  Dim e = dim_mul(d, d);
  dim_is(e, 100, -100, 0);
  dim_is(dim_div(dim_make(-90, 90, 0), dim_make(90, -90, 0)), -100, 100, 0);
}

static void describe_is(Dim d, const char *want) {
  char buf[128];
  memset(buf, 'X', sizeof buf);
  const char *r = dim_describe(d, buf, sizeof buf);
  assert_ptr_equal(r, buf);
  assert_string_equal(r, want);
}

TEST(dim_describe_named) {
  describe_is(dim_none(), "a plain number");
  describe_is(dim_make(1, 0, 0), "bytes (size)");
  describe_is(dim_make(0, 1, 0), "seconds (time)");
  describe_is(dim_make(0, 0, 1), "FLOP (work)");
  describe_is(dim_make(1, -1, 0), "bytes/second (bandwidth)");
  describe_is(dim_make(0, -1, 1), "FLOP/second (compute rate)");
  describe_is(dim_make(0, -1, 0), "1/second (rate)");
  describe_is(dim_make(-1, 0, 1), "FLOP/byte (arithmetic intensity)");
}

TEST(dim_describe_composed) {
  describe_is(dim_make(1, 1, 0), "bytes*seconds");
  describe_is(dim_make(2, 0, 0), "bytes^2");
  describe_is(dim_make(0, -2, 0), "1/seconds^2");
  describe_is(dim_make(1, 0, 1), "bytes*FLOP");
  describe_is(dim_make(2, -1, 0), "bytes^2/seconds");
  describe_is(dim_make(1, -2, 1), "bytes*FLOP/seconds^2");
  describe_is(dim_make(0, 3, -1), "seconds^3/FLOP");
}

TEST(dim_describe_truncates_safely) {
  char small[8];
  memset(small, 'X', sizeof small);
  dim_describe(dim_make(1, -1, 0), small, sizeof small);
  assert_int_equal(strlen(small), sizeof small - 1);
  assert_memory_equal(small, "bytes/s", 7);
  char tiny[1] = {'X'};
  dim_describe(dim_make(3, -7, 5), tiny, sizeof tiny);
  assert_int_equal(tiny[0], '\0');
  /* The longest composed description fits a normal buffer. */
  char buf[128];
  dim_describe(dim_make(-100, -100, -100), buf, sizeof buf);
  assert_true(strncmp(buf, "1/", 2) == 0);
  assert_non_null(strstr(buf, "bytes^100"));
  assert_non_null(strstr(buf, "seconds^100"));
  assert_non_null(strstr(buf, "FLOP^100"));
}

/* "bytes/seconds*FLOP" reads as (bytes/seconds)*FLOP: a denominator of more than one base
 * unit must be grouped, e.g. "bytes/(seconds*FLOP)". */
TEST(dim_describe_denominator_is_unambiguous) {
  static const int dims[][3] = {{1, -1, -1}, {-1, -1, 0}, {0, -1, -1}, {2, -1, -2}};
  for (size_t i = 0; i < sizeof dims / sizeof dims[0]; i++) {
    char buf[128];
    dim_describe(dim_make(dims[i][0], dims[i][1], dims[i][2]), buf, sizeof buf);
    const char *slash = strchr(buf, '/');
    assert_non_null(slash);
    const char *den = slash + 1;
    if (strchr(den, '*') && den[0] != '(')
      fail_msg("dimension (%d, %d, %d) is described as `%s`: the denominator is not grouped", dims[i][0], dims[i][1],
               dims[i][2], buf);
  }
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(every_unit_has_its_exact_scale),
      cmocka_unit_test(named_scales_from_the_brief),
      cmocka_unit_test(per_second_suffix_lowers_seconds),
      cmocka_unit_test(lookup_uses_only_n_characters),
      cmocka_unit_test(unknown_names_rejected),
      cmocka_unit_test(unit_is_name_without_suffix),
      cmocka_unit_test(dim_mul_div_eq),
      cmocka_unit_test(dim_powers_saturate),
      cmocka_unit_test(dim_describe_named),
      cmocka_unit_test(dim_describe_composed),
      cmocka_unit_test(dim_describe_truncates_safely),
      cmocka_unit_test(dim_describe_denominator_is_unambiguous),
  };
  return RUN_TESTS(tests);
}
