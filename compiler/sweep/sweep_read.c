/* sweep_read.c - reading the JSON Lines output of a sweep or a shard back (sweep_read).
 *
 * The reader knows exactly the shape the writer produces: one object per line whose values
 * are strings, numbers or null, except two members of the metadata line, an object of counts
 * ("dropped") and an array of two integers ("shard"), whose own members are scalars.  It is
 * an iterative scanner over one line, not a general parser, so no input can make it recurse;
 * lines are bounded (LINE_LIMIT) and every count it takes in is checked against the others
 * before it is used (the slice a shard covers, the rows its counts promise).  Strings are read
 * as emit.h writes them: a byte that is not UTF-8 becomes U+FFFD, so two texts compare equal
 * here exactly when they are written the same. */
#include "sweep_io.h"

#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "report/emit.h"
#include "strbuf.h"
#include "sweep_io_internal.h"

/* --- scanning one line of JSON ------------------------------------------------------------- */

enum { LINE_LIMIT = 16 << 20, MSG_MAX = 320 };

typedef enum { JN_NULL, JN_NUM, JN_STR, JN_OBJ, JN_ARR, JN_BOOL } JKind;

typedef struct JItem {
  JKind kind;
  size_t key;       /* the member's name: offset in JLine.sb (array elements: none) */
  size_t at, len;   /* JN_NUM: the token in the line; JN_STR: offset and length in sb */
  int first, count; /* JN_OBJ, JN_ARR: its members, kids[first .. first+count) */
} JItem;

typedef struct JLine {
  const char *s;     /* the line, NUL-terminated, without its newline */
  size_t i, n;       /* the cursor and the length */
  StrBuf sb;         /* decoded strings, each NUL-terminated */
  JItem *top, *kids; /* the object's members; the members of its nested values */
  int ntop, nkids, captop, capkids;
  char msg[MSG_MAX]; /* the first error */
} JLine;

static int jfail(JLine *j, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int jfail(JLine *j, const char *fmt, ...) {
  if (!j->msg[0]) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(j->msg, sizeof j->msg, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* The next character after blanks, or -1 at the end of the line. */
static int jpeek(JLine *j) {
  while (j->i < j->n && (j->s[j->i] == ' ' || j->s[j->i] == '\t' || j->s[j->i] == '\r')) j->i++;
  return j->i < j->n ? (unsigned char)j->s[j->i] : -1;
}

/* "expected WHAT at column C", or that the line ended first. */
static int jexpected(JLine *j, const char *what) {
  if (j->i >= j->n) return jfail(j, "the line ends before %s: a truncated line?", what);
  return jfail(j, "expected %s at column %zu", what, j->i + 1);
}

static void sb_utf8(JLine *j, unsigned long c) {
  unsigned char b[4];
  size_t n;
  if (c < 0x80) {
    b[0] = (unsigned char)c;
    n = 1;
  } else if (c < 0x800) {
    b[0] = (unsigned char)(0xC0 | c >> 6);
    b[1] = (unsigned char)(0x80 | (c & 0x3F));
    n = 2;
  } else if (c < 0x10000) {
    b[0] = (unsigned char)(0xE0 | c >> 12);
    b[1] = (unsigned char)(0x80 | (c >> 6 & 0x3F));
    b[2] = (unsigned char)(0x80 | (c & 0x3F));
    n = 3;
  } else {
    b[0] = (unsigned char)(0xF0 | c >> 18);
    b[1] = (unsigned char)(0x80 | (c >> 12 & 0x3F));
    b[2] = (unsigned char)(0x80 | (c >> 6 & 0x3F));
    b[3] = (unsigned char)(0x80 | (c & 0x3F));
    n = 4;
  }
  strbuf_put(&j->sb, (const char *)b, n);
}

/* The four hex digits of a \u escape, the cursor on the first. */
static int jhex4(JLine *j, unsigned long *v) {
  if (j->n - j->i < 4) return jfail(j, "a \\u escape needs four hex digits (column %zu)", j->i + 1);
  *v = 0;
  for (int k = 0; k < 4; k++) {
    int c = (unsigned char)j->s[j->i + (size_t)k];
    int d = sweep_is_digit(c)      ? c - '0'
            : c >= 'a' && c <= 'f' ? c - 'a' + 10
            : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                   : -1;
    if (d < 0) return jfail(j, "a \\u escape needs four hex digits (column %zu)", j->i + 1);
    *v = *v * 16 + (unsigned long)d;
  }
  j->i += 4;
  return 0;
}

/* A \u escape (after the u), with a surrogate pair's second half. */
static int jescape_u(JLine *j) {
  unsigned long c, lo;
  if (jhex4(j, &c)) return -1;
  if (c >= 0xDC00 && c < 0xE000) return jfail(j, "a lone surrogate \\u%04lx (column %zu)", c, j->i - 5);
  if (c >= 0xD800 && c < 0xDC00) {
    if (j->n - j->i < 2 || j->s[j->i] != '\\' || j->s[j->i + 1] != 'u')
      return jfail(j, "a lone surrogate \\u%04lx (column %zu)", c, j->i - 5);
    j->i += 2;
    if (jhex4(j, &lo)) return -1;
    if (lo < 0xDC00 || lo >= 0xE000) return jfail(j, "a lone surrogate \\u%04lx (column %zu)", c, j->i - 11);
    c = 0x10000 + ((c - 0xD800) << 10) + (lo - 0xDC00);
  }
  if (c == 0) return jfail(j, "\\u0000 in a string (column %zu)", j->i - 5);
  sb_utf8(j, c);
  return 0;
}

/* string = '"' { char | escape } '"', decoded into sb; the cursor on the opening quote. */
static int jstring(JLine *j, size_t *off, size_t *len) {
  static const char esc_in[] = "\"\\/bfnrt", esc_out[] = "\"\\/\b\f\n\r\t";
  size_t from = ++j->i;
  *off = j->sb.n;
  for (;;) {
    size_t run = j->i; /* copy plain bytes in runs; a byte that is not UTF-8 is read as U+FFFD */
    while (j->i < j->n && j->s[j->i] != '"' && j->s[j->i] != '\\' && (unsigned char)j->s[j->i] >= 0x20) {
      int u = (unsigned char)j->s[j->i] < 0x80 ? 1 : emit_utf8_len((const unsigned char *)j->s + j->i);
      if (u) {
        j->i += (size_t)u;
        continue;
      }
      strbuf_put(&j->sb, j->s + run, j->i - run);
      strbuf_put(&j->sb, "\xef\xbf\xbd", 3);
      run = ++j->i;
    }
    strbuf_put(&j->sb, j->s + run, j->i - run);
    if (j->i >= j->n) return jfail(j, "the line ends inside the string from column %zu: a truncated line?", from);
    char c = j->s[j->i++];
    if (c == '"') break;
    if (c != '\\') return jfail(j, "a control character in a string (column %zu)", j->i);
    if (j->i >= j->n) return jfail(j, "the line ends inside the string from column %zu: a truncated line?", from);
    char e = j->s[j->i++];
    const char *k = e ? strchr(esc_in, e) : NULL;
    if (k)
      strbuf_put(&j->sb, &esc_out[k - esc_in], 1);
    else if (e == 'u') {
      if (jescape_u(j)) return -1;
    } else
      return jfail(j, "an unknown escape in a string (column %zu)", j->i - 1);
  }
  *len = j->sb.n - *off;
  strbuf_put(&j->sb, "", 1);
  return 0;
}

/* number = [-] (0 | [1-9][0-9]*) [. [0-9]+] [(e|E) [+-] [0-9]+] */
static int jnumber(JLine *j, size_t *at, size_t *len) {
  const char *s = j->s;
  size_t i = j->i, n = j->n, from = j->i;
  if (i < n && s[i] == '-') i++;
  if (i < n && s[i] == '0')
    i++;
  else if (i < n && sweep_is_digit(s[i]))
    while (i < n && sweep_is_digit(s[i])) i++;
  else
    return jfail(j, "a malformed number at column %zu", from + 1);
  if (i < n && s[i] == '.') {
    if (++i >= n || !sweep_is_digit(s[i])) return jfail(j, "a malformed number at column %zu", from + 1);
    while (i < n && sweep_is_digit(s[i])) i++;
  }
  if (i < n && (s[i] == 'e' || s[i] == 'E')) {
    if (++i < n && (s[i] == '+' || s[i] == '-')) i++;
    if (i >= n || !sweep_is_digit(s[i])) return jfail(j, "a malformed number at column %zu", from + 1);
    while (i < n && sweep_is_digit(s[i])) i++;
  }
  *at = from;
  *len = i - from;
  j->i = i;
  return 0;
}

/* scalar = string | number | null | true | false */
static int jscalar(JLine *j, JItem *it) {
  int c = jpeek(j);
  if (c == '"') {
    it->kind = JN_STR;
    return jstring(j, &it->at, &it->len);
  }
  if (c == '-' || sweep_is_digit(c)) {
    it->kind = JN_NUM;
    return jnumber(j, &it->at, &it->len);
  }
  if (c == 'n' && j->n - j->i >= 4 && !memcmp(j->s + j->i, "null", 4)) {
    it->kind = JN_NULL;
    j->i += 4;
    return 0;
  }
  for (int b = 0; b < 2; b++) { /* a flag: its value in `at` */
    const char *w = b ? "true" : "false";
    size_t n = strlen(w);
    if (j->n - j->i >= n && !memcmp(j->s + j->i, w, n)) {
      it->kind = JN_BOOL;
      it->at = (size_t)b;
      j->i += n;
      return 0;
    }
  }
  return jexpected(j, "a string, a number, true, false or null");
}

static void push_item(JItem **v, int *n, int *cap, const JItem *it) {
  XGROW(*v, (size_t)*n + 1, *cap);
  (*v)[(*n)++] = *it;
}

/* nested = '{' [ string ':' scalar { ',' string ':' scalar } ] '}'
 *        | '[' [ scalar { ',' scalar } ] ']'          (one level only: no recursion) */
static int jnested(JLine *j, JItem *it) {
  bool obj = j->s[j->i++] == '{';
  int close = obj ? '}' : ']';
  *it = (JItem){obj ? JN_OBJ : JN_ARR, it->key, 0, 0, j->nkids, 0};
  if (jpeek(j) == close) {
    j->i++;
    return 0;
  }
  for (;;) {
    JItem k = {JN_NULL, SIZE_MAX, 0, 0, 0, 0};
    size_t klen;
    if (obj) {
      if (jpeek(j) != '"') return jexpected(j, "a member name");
      if (jstring(j, &k.key, &klen)) return -1;
      if (jpeek(j) != ':') return jexpected(j, "`:`");
      j->i++;
    }
    int c = jpeek(j);
    if (c == '{' || c == '[') return jfail(j, "nested too deep at column %zu", j->i + 1);
    if (jscalar(j, &k)) return -1;
    push_item(&j->kids, &j->nkids, &j->capkids, &k);
    it->count++;
    c = jpeek(j);
    if (c == ',')
      j->i++;
    else if (c == close) {
      j->i++;
      return 0;
    } else
      return jexpected(j, obj ? "`,` or `}`" : "`,` or `]`");
  }
}

/* line = '{' [ member { ',' member } ] '}';  member = string ':' (scalar | nested) */
static int jline_parse(JLine *j, const char *s, size_t n) {
  j->s = s;
  j->n = n;
  j->i = j->sb.n = 0;
  j->ntop = j->nkids = 0;
  j->msg[0] = '\0';
  if (jpeek(j) != '{') return jexpected(j, "a JSON object");
  j->i++;
  if (jpeek(j) == '}')
    j->i++;
  else
    for (;;) {
      JItem it = {JN_NULL, 0, 0, 0, 0, 0};
      size_t klen;
      if (jpeek(j) != '"') return jexpected(j, "a member name");
      if (jstring(j, &it.key, &klen)) return -1;
      if (jpeek(j) != ':') return jexpected(j, "`:`");
      j->i++;
      int c = jpeek(j);
      if ((c == '{' || c == '[') ? jnested(j, &it) : jscalar(j, &it)) return -1;
      push_item(&j->top, &j->ntop, &j->captop, &it);
      c = jpeek(j);
      if (c == ',')
        j->i++;
      else if (c == '}') {
        j->i++;
        break;
      } else
        return jexpected(j, "`,` or `}`");
    }
  if (jpeek(j) != -1) return jfail(j, "text after the object at column %zu", j->i + 1);
  return 0;
}

static const char *jkey(const JLine *j, const JItem *it) { return j->sb.p + it->key; }
static const char *jstr(const JLine *j, const JItem *it) { return j->sb.p + it->at; }

/* A whole number without sign, fraction or exponent that fits in 64 bits. */
static bool jitem_u64(const JLine *j, const JItem *it, uint64_t *v) {
  if (it->kind != JN_NUM || !it->len) return false;
  uint64_t x = 0;
  for (size_t k = 0; k < it->len; k++) {
    int c = j->s[it->at + k];
    if (!sweep_is_digit(c) || x > (UINT64_MAX - (uint64_t)(c - '0')) / 10) return false;
    x = x * 10 + (uint64_t)(c - '0');
  }
  *v = x;
  return true;
}

/* A number or null (NaN); strtod stops where the checked token does. */
static bool jitem_num(const JLine *j, const JItem *it, double *v) {
  if (it->kind == JN_NULL)
    *v = NAN;
  else if (it->kind == JN_NUM)
    *v = strtod(j->s + it->at, NULL);
  else
    return false;
  return true;
}

/* The item's text for a message, shortened. */
static const char *jshow(const JLine *j, const JItem *it, char *buf, size_t n) {
  if (it->kind == JN_NUM)
    snprintf(buf, n, "%.*s", (int)(it->len < 40 ? it->len : 40), j->s + it->at);
  else if (it->kind == JN_STR)
    snprintf(buf, n, "\"%.40s\"", jstr(j, it));
  else
    snprintf(buf, n, "%s",
             it->kind == JN_NULL   ? "null"
             : it->kind == JN_BOOL ? (it->at ? "true" : "false")
             : it->kind == JN_OBJ  ? "an object"
                                   : "an array");
  return buf;
}

/* --- reading an output back ---------------------------------------------------------------- */

typedef struct Reader {
  const char *name;
  FILE *err;
  SweepDoc *doc;
  Interner in; /* keys, reasons and text values, in doc->arena */
  JLine j;
  int line;          /* of the line being read, from 1 */
  const char **keys; /* the first row's members, in order (interned) */
  int nkeys, at_rank, at_point, at_objective;
  uint64_t begin, end, expect; /* the shard's slice, and the rows it promises */
  int caprows;
} Reader;

static int rfail(Reader *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int rfail(Reader *r, const char *fmt, ...) {
  va_list ap;
  fprintf(r->err, "%s:%d: error: ", r->name, r->line);
  va_start(ap, fmt);
  vfprintf(r->err, fmt, ap);
  va_end(ap);
  fputc('\n', r->err);
  return -1;
}

/* The metadata line's members.  ORDER MetaKey */
typedef enum {
  /* clang-format off */
  MK_VERSION, MK_SWEEP, MK_FILE, MK_HASH, MK_OBJECTIVE, MK_SENSE, MK_KEEP, MK_POINTS, MK_SHARD, MK_EVALUATED,
  MK_KEPT, MK_DROPPED, MK_N
} MetaKey;
static const char *const meta_keys[MK_N] = {"llmp_sweep", "sweep", "file", "hash", "objective", "sense", "keep",
                                            "points", "shard", "evaluated", "kept", "dropped"};
/* clang-format on */

static const char *intern_item(Reader *r, const JItem *it) { return intern(&r->in, jstr(&r->j, it), it->len); }

static int cmp_ptr(const void *a, const void *b) {
  uintptr_t x = (uintptr_t) * (const char *const *)a, y = (uintptr_t) * (const char *const *)b;
  return x < y ? -1 : x > y;
}

/* The first of n interned strings that comes twice, or NULL. */
static const char *first_twice(const char **v, int n) {
  if (n < 2) return NULL;
  const char **s = xmalloc((size_t)n * sizeof *s);
  memcpy(s, v, (size_t)n * sizeof *s);
  qsort(s, (size_t)n, sizeof *s, cmp_ptr);
  const char *twice = NULL;
  for (int i = 1; i < n && !twice; i++)
    if (s[i] == s[i - 1]) twice = s[i];
  free(s);
  return twice;
}

/* Finds each known member; an unknown one, one that comes twice or one missing is an error. */
static int meta_members(Reader *r, const JItem **at) {
  const JLine *j = &r->j;
  const char *unknown = NULL;
  for (int i = 0; i < j->ntop; i++) {
    const char *key = jkey(j, &j->top[i]);
    int k = 0;
    while (k < MK_N && strcmp(key, meta_keys[k])) k++;
    if (k == MK_N) {
      if (!unknown) unknown = key;
    } else if (at[k])
      return rfail(r, "`%s` twice in the header line", key);
    else
      at[k] = &j->top[i];
  }
  if (!at[MK_VERSION]) return rfail(r, "not an output of llmp sweep: the first line has no `llmp_sweep`");
  if (unknown) return rfail(r, "unknown member `%.60s` in the header line", unknown);
  for (int k = 0; k < MK_N; k++)
    if (!at[k] && k != MK_HASH) return rfail(r, "the header line has no `%s`", meta_keys[k]);
  return 0;
}

/* "hash": 16 lowercase hex digits, in version 2 only. */
static int meta_hash(Reader *r, const JItem *it, uint64_t version, const char **v) {
  if (version == 1) return it ? rfail(r, "`hash` in a header line of version 1") : 0;
  if (!it) return rfail(r, "the header line has no `hash`");
  const char *h = it->kind == JN_STR ? jstr(&r->j, it) : "";
  size_t n = 0;
  while (sweep_is_digit(h[n]) || (h[n] >= 'a' && h[n] <= 'f')) n++;
  if (n != 16 || h[n]) return rfail(r, "`hash` is not a string of 16 hexadecimal digits");
  *v = intern_item(r, it);
  return 0;
}

static int meta_u64(Reader *r, const JItem *it, const char *what, uint64_t max, uint64_t *v) {
  char buf[64];
  if (!jitem_u64(&r->j, it, v) || *v > max)
    return rfail(r, "`%s` is %s, not a whole number from 0 to %" PRIu64, what, jshow(&r->j, it, buf, sizeof buf), max);
  return 0;
}

static int meta_string(Reader *r, const JItem *it, const char *what, const char **v) {
  if (it->kind != JN_STR) return rfail(r, "`%s` is not a string", what);
  *v = intern_item(r, it);
  return 0;
}

/* "shard": [K, N] with 0 <= K < N. */
static int meta_shard(Reader *r, const JItem *it, SweepMeta *m) {
  uint64_t k, n;
  const JItem *kid = &r->j.kids[it->first];
  if (it->kind != JN_ARR || it->count != 2 || !jitem_u64(&r->j, &kid[0], &k) || !jitem_u64(&r->j, &kid[1], &n) ||
      n < 1 || n > INT_MAX || k >= n)
    return rfail(r, "`shard` is not [K, N] with 0 <= K < N");
  m->shard_k = (int)k;
  m->shard_n = (int)n;
  return 0;
}

/* "dropped": {"REASON": COUNT, ...}, each reason once. */
static int meta_dropped(Reader *r, const JItem *it) {
  SweepDoc *d = r->doc;
  if (it->kind != JN_OBJ) return rfail(r, "`dropped` is not an object of counts");
  d->dropped = arena_alloc(&d->arena, (size_t)it->count * sizeof *d->dropped);
  const char **reasons = arena_alloc(&d->arena, (size_t)it->count * sizeof *reasons);
  for (int i = 0; i < it->count; i++) {
    const JItem *kid = &r->j.kids[it->first + i];
    reasons[i] = intern(&r->in, jkey(&r->j, kid), strlen(jkey(&r->j, kid)));
    d->dropped[i].reason = reasons[i];
    if (meta_u64(r, kid, "dropped", UINT64_MAX, &d->dropped[i].count)) return -1;
  }
  const char *twice = first_twice(reasons, it->count);
  if (twice) return rfail(r, "the reason `%.60s` twice in `dropped`", twice);
  d->meta.dropped = d->dropped;
  d->meta.ndropped = it->count;
  return 0;
}

/* The counts agree with each other and with the shard's slice. */
static int meta_counts(Reader *r) {
  const SweepMeta *m = &r->doc->meta;
  sweep_shard_range(m->points, m->shard_k, m->shard_n, &r->begin, &r->end);
  if (m->evaluated != r->end - r->begin)
    return rfail(r,
                 "shard %d/%d of %" PRIu64 " points has %" PRIu64 " points, but `evaluated` is %" PRIu64
                 ": an unfinished run?",
                 m->shard_k, m->shard_n, m->points, r->end - r->begin, m->evaluated);
  uint64_t sum = m->kept;
  bool over = sum > m->evaluated;
  for (int i = 0; i < m->ndropped && !over; i++) {
    over = m->dropped[i].count > m->evaluated - sum;
    sum += over ? 0 : m->dropped[i].count;
  }
  if (over || sum != m->evaluated)
    return rfail(r, "`kept` and the `dropped` counts do not add up to `evaluated` (%" PRIu64 ")", m->evaluated);
  r->expect = m->kept < (uint64_t)m->keep ? m->kept : (uint64_t)m->keep;
  return 0;
}

static int read_meta(Reader *r) {
  const JItem *at[MK_N] = {0};
  SweepMeta *m = &r->doc->meta;
  uint64_t v;
  if (meta_members(r, at)) return -1;
  if (meta_u64(r, at[MK_VERSION], "llmp_sweep", UINT64_MAX, &v)) return -1;
  if (v != 1 && v != 2) return rfail(r, "`llmp_sweep` is %" PRIu64 ": this llmp reads versions 1 and 2", v);
  if (meta_string(r, at[MK_SWEEP], "sweep", &m->sweep) || meta_string(r, at[MK_FILE], "file", &m->file) ||
      meta_hash(r, at[MK_HASH], v, &m->hash) || meta_string(r, at[MK_OBJECTIVE], "objective", &m->objective))
    return -1;
  const JItem *sense = at[MK_SENSE];
  if (sense->kind != JN_STR || (strcmp(jstr(&r->j, sense), "minimize") && strcmp(jstr(&r->j, sense), "maximize")))
    return rfail(r, "`sense` is not \"minimize\" or \"maximize\"");
  m->maximize = !strcmp(jstr(&r->j, sense), "maximize");
  if (meta_u64(r, at[MK_KEEP], "keep", INT_MAX, &v)) return -1;
  m->keep = (int)v;
  if (meta_u64(r, at[MK_POINTS], "points", UINT64_MAX, &m->points) || meta_shard(r, at[MK_SHARD], m) ||
      meta_u64(r, at[MK_EVALUATED], "evaluated", UINT64_MAX, &m->evaluated) ||
      meta_u64(r, at[MK_KEPT], "kept", UINT64_MAX, &m->kept) || meta_dropped(r, at[MK_DROPPED]))
    return -1;
  m->elapsed = NAN;
  r->doc->meta_line = r->line;
  return meta_counts(r);
}

/* The first row fixes the members every row has, in order. */
static int row_keys_first(Reader *r) {
  const JLine *j = &r->j;
  r->keys = xmalloc((size_t)(j->ntop ? j->ntop : 1) * sizeof *r->keys);
  r->nkeys = j->ntop;
  r->at_rank = r->at_point = r->at_objective = -1;
  for (int i = 0; i < j->ntop; i++) {
    const char *key = jkey(j, &j->top[i]);
    r->keys[i] = intern(&r->in, key, strlen(key));
    if (!strcmp(key, "rank"))
      r->at_rank = i;
    else if (!strcmp(key, "point"))
      r->at_point = i;
    else if (!strcmp(key, "objective"))
      r->at_objective = i;
  }
  const char *twice = first_twice(r->keys, r->nkeys);
  if (twice) return rfail(r, "`%.60s` twice in a row", twice);
  if (r->at_rank < 0 || r->at_point < 0 || r->at_objective < 0)
    return rfail(r, "a row without `%s`", r->at_rank < 0 ? "rank" : r->at_point < 0 ? "point" : "objective");
  r->doc->row_line = r->line;
  return 0;
}

static int row_keys_same(Reader *r) {
  const JLine *j = &r->j;
  if (j->ntop != r->nkeys)
    return rfail(r, "%d members, but the row of line %d has %d: every row has the same", j->ntop, r->doc->row_line,
                 r->nkeys);
  for (int i = 0; i < j->ntop; i++)
    if (strcmp(jkey(j, &j->top[i]), r->keys[i]))
      return rfail(r, "`%.60s` where the row of line %d has `%.60s`: every row has the same members",
                   jkey(j, &j->top[i]), r->doc->row_line, r->keys[i]);
  return 0;
}

/* A field's value, its key already set: a number, null (NaN), a flag or text. */
static int field_value(Reader *r, const JItem *it, SweepField *f) {
  f->str = NULL;
  f->num = NAN;
  f->flag = it->kind == JN_BOOL;
  if (it->kind == JN_STR)
    f->str = intern_item(r, it);
  else if (f->flag)
    f->num = (double)it->at;
  else if (!jitem_num(&r->j, it, &f->num))
    return rfail(r, "`%.60s` is not a number, a string, a flag or null", f->key);
  return 0;
}

static int row_field(Reader *r, const JItem *it, SweepField *f) {
  f->key = r->keys[it - r->j.top];
  return field_value(r, it, f);
}

static int read_row(Reader *r) {
  SweepDoc *d = r->doc;
  const JLine *j = &r->j;
  char buf[64];
  if (d->nrows == 0 ? row_keys_first(r) : row_keys_same(r)) return -1;
  if ((uint64_t)d->nrows >= r->expect)
    return rfail(r, "more rows than the header line's counts allow (%" PRIu64 ", the smaller of `kept` and `keep`)",
                 r->expect);
  SweepRow row = {0, NAN, r->nkeys - 3, NULL};
  uint64_t rank;
  const JItem *rk = &j->top[r->at_rank], *pt = &j->top[r->at_point], *ob = &j->top[r->at_objective];
  if (!jitem_u64(j, rk, &rank) || rank != (uint64_t)d->nrows + 1)
    return rfail(r, "`rank` is %s, expected %d: rows are written in rank order", jshow(j, rk, buf, sizeof buf),
                 d->nrows + 1);
  if (!jitem_u64(j, pt, &row.point) || row.point < r->begin || row.point >= r->end)
    return rfail(r, "`point` %s is not in [%" PRIu64 ", %" PRIu64 "), the points of shard %d/%d",
                 jshow(j, pt, buf, sizeof buf), r->begin, r->end, d->meta.shard_k, d->meta.shard_n);
  if (!jitem_num(j, ob, &row.objective)) return rfail(r, "`objective` is not a number or null");
  row.fields = arena_alloc(&d->arena, (size_t)(row.nfields ? row.nfields : 1) * sizeof *row.fields);
  for (int i = 0, f = 0; i < j->ntop; i++)
    if (i != r->at_rank && i != r->at_point && i != r->at_objective && row_field(r, &j->top[i], &row.fields[f++]))
      return -1;
  if (d->nrows && sweep_row_cmp(&d->rows[d->nrows - 1], &row, d->meta.maximize) >= 0)
    return rfail(r, "point %" PRIu64 " ranks before point %" PRIu64 " of the row above: rows are written in rank order",
                 row.point, d->rows[d->nrows - 1].point);
  XGROW(d->rows, (size_t)d->nrows + 1, r->caprows);
  d->rows[d->nrows++] = row;
  return 0;
}

/* {"best":S,"axes":A,"point":I,"objective":X,...} after the rows: structure S's best point
 * (sweep_io.h), by structure, each once. */
static int read_best(Reader *r) {
  SweepDoc *d = r->doc;
  const JLine *j = &r->j;
  char buf[64];
  if ((uint64_t)d->nrows < r->expect) return rfail(r, "a `best` line before the last row");
  if (j->ntop < 4 || strcmp(jkey(j, &j->top[1]), "axes") || strcmp(jkey(j, &j->top[2]), "point") ||
      strcmp(jkey(j, &j->top[3]), "objective") || j->top[1].kind != JN_STR)
    return rfail(r, "a `best` line is {\"best\":S,\"axes\":TEXT,\"point\":I,\"objective\":X,...}");
  uint64_t at;
  SweepRow row = {0, NAN, j->ntop - 4, NULL};
  if (!jitem_u64(j, &j->top[0], &at) || (d->nbest && at <= d->best_of[d->nbest - 1]))
    return rfail(r, "`best` is %s: best lines are written by structure, each once", jshow(j, &j->top[0], buf, sizeof buf));
  if (!jitem_u64(j, &j->top[2], &row.point) || row.point < r->begin || row.point >= r->end)
    return rfail(r, "`point` %s is not in [%" PRIu64 ", %" PRIu64 "), the points of shard %d/%d",
                 jshow(j, &j->top[2], buf, sizeof buf), r->begin, r->end, d->meta.shard_k, d->meta.shard_n);
  if (!jitem_num(j, &j->top[3], &row.objective)) return rfail(r, "`objective` is not a number or null");
  d->meta.best_axes = intern_item(r, &j->top[1]);
  row.fields = arena_alloc(&d->arena, (size_t)(row.nfields ? row.nfields : 1) * sizeof *row.fields);
  for (int i = 4; i < j->ntop; i++) {
    SweepField *f = &row.fields[i - 4];
    const char *key = jkey(j, &j->top[i]);
    f->key = intern(&r->in, key, strlen(key));
    if (field_value(r, &j->top[i], f)) return -1;
  }
  int cap = d->capbest;
  XGROW(d->best, d->nbest + 1, d->capbest);
  if (d->capbest != cap) d->best_of = xrealloc(d->best_of, (size_t)d->capbest * sizeof *d->best_of);
  d->best_of[d->nbest] = at;
  d->best[d->nbest++] = row;
  return 0;
}

static bool best_line(const Reader *r) { return r->j.ntop > 0 && !strcmp(jkey(&r->j, &r->j.top[0]), "best"); }
static bool best_begun(const Reader *r) { return r->doc->nbest > 0; }

/* Reads one line (without its newline) into *buf, NUL-terminated: 1, 0 at the end of the
 * input, -1 for a line longer than LINE_LIMIT, -2 for one holding a NUL byte. */
static int read_line(FILE *in, char **buf, size_t *cap, size_t *len) {
  size_t n = 0;
  int c;
  bool nul = false;
  while ((c = getc(in)) != EOF && c != '\n') {
    if (n >= LINE_LIMIT) return -1;
    XGROW(*buf, n + 2, *cap);
    nul |= c == 0;
    (*buf)[n++] = (char)c;
  }
  if (c == EOF && n == 0) return 0;
  XGROW(*buf, n + 1, *cap);
  (*buf)[n] = '\0';
  *len = n;
  return nul ? -2 : 1;
}

static bool blank(const char *s) {
  while (*s == ' ' || *s == '\t' || *s == '\r') s++;
  return !*s;
}

/* Reads every line; returns 0 or -1 (reported). */
static int read_lines(Reader *r, FILE *in) {
  char *line = NULL;
  size_t cap = 0, len = 0;
  int got, rc = 0;
  bool have_meta = false;
  while (!rc && (got = read_line(in, &line, &cap, &len)) != 0) {
    r->line++;
    /* clang-format off */
    if (got == -1) rc = rfail(r, "a line longer than %d MiB", LINE_LIMIT >> 20);
    else if (got == -2) rc = rfail(r, "a NUL byte in the line");
    else if (blank(line)) continue;
    else if (jline_parse(&r->j, line, len)) rc = rfail(r, "%s", r->j.msg);
    else rc = !have_meta ? read_meta(r) : best_line(r) ? read_best(r) : best_begun(r) ? rfail(r, "a row after the `best` lines") : read_row(r);
    /* clang-format on */
    have_meta = true;
  }
  free(line);
  if (rc) return -1;
  if (ferror(in)) return rfail(r, "cannot read the file: %s", strerror(errno));
  r->line++;
  if (!have_meta) return rfail(r, "an empty file: expected the output of llmp sweep --format json");
  if ((uint64_t)r->doc->nrows < r->expect)
    return rfail(r,
                 "the file ends after %d rows, but its header line promises %" PRIu64
                 " (the smaller of `kept` and `keep`): a truncated file?",
                 r->doc->nrows, r->expect);
  return 0;
}

int sweep_read(FILE *in, const char *name, SweepDoc *doc, FILE *err) {
  memset(doc, 0, sizeof *doc);
  arena_init(&doc->arena);
  doc->meta.elapsed = NAN;
  if (!in) return -1;
  Reader r;
  memset(&r, 0, sizeof r);
  r.name = name ? name : "(input)";
  r.err = err ? err : stderr;
  r.doc = doc;
  intern_init(&r.in, &doc->arena);
  int rc = read_lines(&r, in);
  doc->meta.nbest = doc->nbest, doc->meta.best = doc->best, doc->meta.best_of = doc->best_of;
  strbuf_free(&r.j.sb);
  free(r.j.top);
  free(r.j.kids);
  free(r.keys);
  return rc;
}

void sweep_doc_free(SweepDoc *doc) {
  if (!doc) return;
  arena_free(&doc->arena);
  free(doc->rows);
  free(doc->best);
  free(doc->best_of);
  memset(doc, 0, sizeof *doc);
}
