/* units.c - the fixed unit table of the language and dimension arithmetic. */
#include "units.h"

#include <stdio.h>
#include <string.h>
#include <strings.h>

/* clang-format off */
#define B_ {{1, 0, 0}}
#define S_ {{0, 1, 0}}
#define F_ {{0, 0, 1}}
#define W_ {{0, -1, 0, 1}}
/* clang-format on */
static const Unit units[] = {
    {"B", B_, 1},           {"KB", B_, 1e3},           {"MB", B_, 1e6},
    {"GB", B_, 1e9},        {"TB", B_, 1e12},          {"KiB", B_, 1024.0},
    {"MiB", B_, 1048576.0}, {"GiB", B_, 1073741824.0}, {"TiB", B_, 1099511627776.0},
    {"b", B_, 0.125},       {"Kb", B_, 125.0},         {"Mb", B_, 125e3},
    {"Gb", B_, 125e6},      {"Tb", B_, 125e9},         {"s", S_, 1},
    {"ms", S_, 1e-3},       {"us", S_, 1e-6},          {"ns", S_, 1e-9},
    {"FLOP", F_, 1},        {"GFLOP", F_, 1e9},        {"TFLOP", F_, 1e12},
    {"PFLOP", F_, 1e15},    {"W", W_, 1},              {"kW", W_, 1e3},
};
#undef B_
#undef S_
#undef F_
#undef W_

static const Unit *find(const char *t, size_t n) {
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
    if (strlen(units[i].name) == n && memcmp(units[i].name, t, n) == 0) return &units[i];
  return NULL;
}

const char *unit_name(int i) { return i >= 0 && (size_t)i < sizeof units / sizeof units[0] ? units[i].name : NULL; }

bool unit_is_name(const char *text, size_t n) { return find(text, n) != NULL; }

const char *unit_case_fix(const char *text, size_t n, const char **other) {
  *other = NULL;
  if (find(text, n) || n < 2) return NULL; /* one letter (s, b, B) is too likely a name */
  const char *fix = NULL;
  for (size_t i = 0; i < sizeof units / sizeof units[0]; i++)
    if (strlen(units[i].name) == n && strncasecmp(units[i].name, text, n) == 0) {
      if (fix) *other = units[i].name;
      else fix = units[i].name;
    }
  return fix;
}

bool unit_is_bits(const char *name) {
  const Unit *u = find(name, strlen(name));
  return u && u->dim.e[DIM_BYTES] == 1 && name[strlen(name) - 1] == 'b';
}

const char *unit_per_s_fix(const char *text, size_t n) {
  const char *other, *fix = find(text, n) ? find(text, n)->name : unit_case_fix(text, n, &other);
  const Unit *u = fix ? find(fix, strlen(fix)) : NULL;
  return u && dim_eq(u->dim, dim_make(1, 0, 0)) ? u->name : NULL;
}
double unit_value(double value, const char *unit, Dim *dim) {
  Unit u;
  bool known = unit && unit_lookup(unit, strlen(unit), &u);
  if (dim) *dim = known ? u.dim : dim_none();
  return known ? value * u.scale : value;
}

bool unit_lookup(const char *text, size_t n, Unit *out) {
  bool per_s = n > 2 && memcmp(text + n - 2, "/s", 2) == 0;
  const Unit *u = find(text, per_s ? n - 2 : n);
  if (!u) return false;
  *out = *u;
  if (per_s) out->dim.e[DIM_SECONDS]--;
  return true;
}

Dim dim_make(int bytes, int seconds, int flop) {
  Dim d = {{(signed char)bytes, (signed char)seconds, (signed char)flop}};
  return d;
}

/* Powers saturate at +-100: no real expression gets there, and overflow stays defined. */
static signed char clamp(int v) { return (signed char)(v > 100 ? 100 : v < -100 ? -100 : v); }

Dim dim_mul(Dim a, Dim b) {
  Dim d;
  for (int i = 0; i < DIM_N; i++) d.e[i] = clamp(a.e[i] + b.e[i]);
  return d;
}

Dim dim_div(Dim a, Dim b) {
  Dim d;
  for (int i = 0; i < DIM_N; i++) d.e[i] = clamp(a.e[i] - b.e[i]);
  return d;
}

bool dim_eq(Dim a, Dim b) { return memcmp(a.e, b.e, sizeof a.e) == 0; }
bool dim_is_none(Dim a) { return dim_eq(a, dim_none()); }

static const struct {
  Dim dim;
  const char *name;
} named[] = {
    {{{1, 0, 0}}, "bytes (size)"},
    {{{0, 1, 0}}, "seconds (time)"},
    {{{0, 0, 1}}, "FLOP (work)"},
    {{{1, -1, 0}}, "bytes/second (bandwidth)"},
    {{{0, -1, 1}}, "FLOP/second (compute rate)"},
    {{{0, -1, 0}}, "1/second (rate)"},
    {{{-1, 0, 1}}, "FLOP/byte (arithmetic intensity)"},
    {{{0, -1, 0, 1}}, "watts (power)"},
    {{{0, 0, 0, 1}}, "joules (energy)"},
};

const char *dim_describe(Dim d, char *buf, size_t n) {
  if (dim_is_none(d)) {
    snprintf(buf, n, "a plain number");
    return buf;
  }
  for (size_t i = 0; i < sizeof named / sizeof named[0]; i++)
    if (dim_eq(d, named[i].dim)) {
      snprintf(buf, n, "%s", named[i].name);
      return buf;
    }
  static const char *base[DIM_N] = {"bytes", "seconds", "FLOP", "joules"};
  char num[64] = "", den[64] = "";
  for (int i = 0; i < DIM_N; i++) {
    int e = d.e[i];
    char *dst = e > 0 ? num : den;
    int a = e > 0 ? e : -e;
    if (!a) continue;
    size_t l = strlen(dst);
    if (a == 1)
      snprintf(dst + l, sizeof num - l, "%s%s", l ? "*" : "", base[i]);
    else
      snprintf(dst + l, sizeof num - l, "%s%s^%d", l ? "*" : "", base[i], a);
  }
  bool group = strchr(den, '*') != NULL; /* bytes/(seconds*FLOP), not (bytes/seconds)*FLOP */
  snprintf(buf, n, "%s%s%s%s%s", num[0] ? num : "1", den[0] ? "/" : "", group ? "(" : "", den, group ? ")" : "");
  return buf;
}
