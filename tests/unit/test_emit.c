/* test_emit.c - unit tests of compiler/report/emit.c, the JSON/CSV value writer of every
 * output: JSON strings (escapes, control characters, valid UTF-8 kept, each byte that is not
 * UTF-8 as U+FFFD), numbers (the shortest text that reads back to the same bits, 17 digits
 * where needed, -0, denormals, non-finite as null; runtime/support's str_number, which writes
 * integers as integers), CSV fields (RFC 4180 quoting), and write errors. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <float.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "report/emit.h"

#include "strbuf.h"
#include "support.h"

/* The text a writer call produces, and its return value in *rc.  Free the result. */
typedef int (*StrFn)(FILE *, const char *);

static char *str_out(StrFn fn, const char *s, int *rc) {
  char *p = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&p, &n);
  assert_non_null(f);
  *rc = fn(f, s);
  assert_int_equal(fclose(f), 0);
  return p;
}

static void check_str(StrFn fn, const char *in, const char *want) {
  int rc;
  char *got = str_out(fn, in, &rc);
  assert_int_equal(rc, 0);
  assert_string_equal(got, want);
  free(got);
}

static void check_json_number(double x, const char *want) {
  char *p = NULL;
  size_t n = 0;
  FILE *f = open_memstream(&p, &n);
  assert_non_null(f);
  assert_int_equal(emit_json_number(f, x), 0);
  assert_int_equal(fclose(f), 0);
  assert_string_equal(p, want);
  free(p);
}

/* emit_shortest(x) reads back to x's bits, and no shorter %.Ng (N >= 15) would. */
static void check_round_trip(double x) {
  char buf[EMIT_NUM_MAX];
  emit_shortest(buf, sizeof buf, x);
  double y = strtod(buf, NULL);
  assert_memory_equal(&x, &y, sizeof x);
  int prec = 15;
  char shorter[64];
  for (; prec < 17; prec++) {
    snprintf(shorter, sizeof shorter, "%.*g", prec, x);
    if (strtod(shorter, NULL) == x) break;
  }
  snprintf(shorter, sizeof shorter, "%.*g", prec, x);
  assert_string_equal(buf, shorter);
}

TEST(json_string_escapes) {
  check_str(emit_json_string, "plain", "\"plain\"");
  check_str(emit_json_string, "", "\"\"");
  check_str(emit_json_string, NULL, "\"\"");
  check_str(emit_json_string, "a \"q\" b\\s /", "\"a \\\"q\\\" b\\\\s /\"");
}

TEST(json_string_control_characters) {
  check_str(emit_json_string, "\b\f\n\r\t", "\"\\b\\f\\n\\r\\t\"");
  check_str(emit_json_string, "\x01x\x1f\x7f", "\"\\u0001x\\u001f\x7f\""); /* DEL is not a control in JSON */
}

TEST(json_string_valid_utf8_passes) {
  const char *s = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80 \xef\xbf\xbd \xf4\x8f\xbf\xbf";
  char want[128];
  snprintf(want, sizeof want, "\"%s\"", s);
  check_str(emit_json_string, s, want);
}

TEST(json_string_invalid_utf8_is_replaced) {
#define R "\xef\xbf\xbd"
  check_str(emit_json_string,
            "a\xff"
            "b",
            "\"a" R "b\"");                                           /* never a UTF-8 byte */
  check_str(emit_json_string, "\x80", "\"" R "\"");                   /* a lone continuation */
  check_str(emit_json_string, "\xc3(", "\"" R "(\"");                 /* a truncated sequence */
  check_str(emit_json_string, "\xc3", "\"" R "\"");                   /* ... at the end */
  check_str(emit_json_string, "\xc0\xaf", "\"" R R "\"");             /* overlong */
  check_str(emit_json_string, "\xe0\x80\x80", "\"" R R R "\"");       /* overlong */
  check_str(emit_json_string, "\xed\xa0\x80", "\"" R R R "\"");       /* a surrogate */
  check_str(emit_json_string, "\xf4\x90\x80\x80", "\"" R R R R "\""); /* above U+10FFFF */
  check_str(emit_json_string, "\xe2\x82\"", "\"" R R "\\\"\"");       /* cut by a quote */
#undef R
}

TEST(numbers_shortest_round_trip) {
  char buf[EMIT_NUM_MAX];
  assert_string_equal(emit_shortest(buf, sizeof buf, 0.1), "0.1");
  assert_string_equal(emit_shortest(buf, sizeof buf, 1), "1");
  assert_string_equal(emit_shortest(buf, sizeof buf, 0.1 + 0.2), "0.30000000000000004"); /* 17 digits */
  assert_string_equal(emit_shortest(buf, sizeof buf, 1.0 / 3), "0.3333333333333333");    /* 16 */
  assert_string_equal(emit_shortest(buf, sizeof buf, 65999925248.0), "65999925248");
  assert_string_equal(emit_shortest(buf, sizeof buf, -0.0), "-0");
  assert_string_equal(emit_shortest(buf, sizeof buf, 1e16), "1e+16");
  /* clang-format off */
  const double xs[] = {0.1 + 0.2, 1.0 / 3, 2.0 / 3, M_PI, -M_E, 1e300, 1e-300, DBL_MAX, -DBL_MAX, DBL_MIN,
                       DBL_TRUE_MIN, 4.9406564584124654e-324 * 3, DBL_MIN / 3, 9007199254740993.0,
                       123456789.123456789, 0.4123456789012345, -0.0, 0.0};
  /* clang-format on */
  for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) check_round_trip(xs[i]);
  uint64_t bits = 0x9e3779b97f4a7c15u; /* and a spread of bit patterns */
  for (int i = 0; i < 20000; i++) {
    bits ^= bits << 13, bits ^= bits >> 7, bits ^= bits << 17;
    double x;
    memcpy(&x, &bits, sizeof x);
    if (isfinite(x)) check_round_trip(x);
  }
}

/* str_number: an integer below 2^53 as its digits, anything else as emit_shortest; both read
 * back as the same double. */
TEST(numbers_integers_as_integers) {
  char buf[STR_NUM_MAX], sh[STR_NUM_MAX];
  assert_string_equal(str_number(buf, sizeof buf, 1048576), "1048576"); /* %g: 1.04858e+06 */
  assert_string_equal(str_number(buf, sizeof buf, 1e15), "1000000000000000");
  assert_string_equal(str_number(buf, sizeof buf, 9007199254740991.0), "9007199254740991"); /* 2^53 - 1 */
  assert_string_equal(str_number(buf, sizeof buf, -42), "-42");
  assert_string_equal(str_number(buf, sizeof buf, 0), "0");
  assert_string_equal(str_number(buf, sizeof buf, -0.0), "-0");
  assert_string_equal(str_number(buf, sizeof buf, 0.5), "0.5");
  assert_string_equal(str_number(buf, sizeof buf, 1e16), "1e+16"); /* past 2^53 */
  const double xs[] = {1e15, 1048576, 0.1 + 0.2, 1e300, DBL_TRUE_MIN, -DBL_MAX, 9007199254740992.0, 123456789.5};
  for (size_t i = 0; i < sizeof xs / sizeof xs[0]; i++) {
    assert_true(strtod(str_number(buf, sizeof buf, xs[i]), NULL) == xs[i]);
    if (xs[i] != floor(xs[i]) || fabs(xs[i]) >= 0x1p53) assert_string_equal(buf, emit_shortest(sh, sizeof sh, xs[i]));
  }
}

TEST(json_numbers_non_finite_are_null) {
  check_json_number(0.25, "0.25");
  check_json_number(-0.0, "-0");
  check_json_number(DBL_TRUE_MIN, "4.94065645841247e-324");
  check_json_number(NAN, "null");
  check_json_number(INFINITY, "null");
  check_json_number(-INFINITY, "null");
}

TEST(csv_fields_quoted_per_rfc4180) {
  check_str(emit_csv_field, "plain", "plain");
  check_str(emit_csv_field, "caf\xc3\xa9 \xff", "caf\xc3\xa9 \xff"); /* bytes pass as they are */
  check_str(emit_csv_field, NULL, "");
  check_str(emit_csv_field, "", "\"\"");
  check_str(emit_csv_field, "a,b", "\"a,b\"");
  check_str(emit_csv_field, "say \"hi\"", "\"say \"\"hi\"\"\"");
  check_str(emit_csv_field, "\"", "\"\"\"\"");
  check_str(emit_csv_field, "line\nbreak", "\"line\nbreak\"");
  check_str(emit_csv_field, "cr\r", "\"cr\r\"");
  check_str(emit_csv_field, " lead", "\" lead\"");
  check_str(emit_csv_field, "trail ", "\"trail \"");
  check_str(emit_csv_field, "in side", "in side");
}

TEST(write_errors_return_minus_one) {
  FILE *f = fopen("/dev/full", "w");
  if (!f) skip();
  setvbuf(f, NULL, _IONBF, 0); /* unbuffered: each write reaches the device and fails */
  assert_int_equal(emit_json_string(f, "x"), -1);
  assert_int_equal(emit_json_number(f, 1.5), -1);
  assert_int_equal(emit_csv_field(f, "a,b"), -1);
  assert_int_equal(emit_csv_field(f, "ab"), -1);
  fclose(f);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(json_string_escapes),
      cmocka_unit_test(json_string_control_characters),
      cmocka_unit_test(json_string_valid_utf8_passes),
      cmocka_unit_test(json_string_invalid_utf8_is_replaced),
      cmocka_unit_test(numbers_shortest_round_trip),
      cmocka_unit_test(numbers_integers_as_integers),
      cmocka_unit_test(json_numbers_non_finite_are_null),
      cmocka_unit_test(csv_fields_quoted_per_rfc4180),
      cmocka_unit_test(write_errors_return_minus_one),
  };
  return RUN_TESTS(tests);
}
