/* support.h - what every cmocka test program (tests/unit, tests/runtime) shares: the TEST()
 * signature, text assertions, a diagnostic writer that captures into a growable buffer, a FILE
 * captured in memory, files and temporary folders, and the main() that runs one named test (for
 * CTest) or all of them.  Include after cmocka.h; the programs are built with _XOPEN_SOURCE=700
 * and LLMP_SOURCE_DIR (tests/cmake/LlmpTests.cmake). */
#ifndef LLMP_TEST_SUPPORT_H
#define LLMP_TEST_SUPPORT_H

#include <errno.h>
#include <ftw.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define TEST(name) static void name(void **state __attribute__((unused)))

#define assert_contains(hay, needle) \
  do { \
    const char *h_ = (hay), *n_ = (needle); \
    if (!strstr(h_, n_)) fail_msg("expected to find\n  %s\nin\n%s", n_, h_); \
  } while (0)

#define assert_not_contains(hay, needle) \
  do { \
    const char *h_ = (hay), *n_ = (needle); \
    if (strstr(h_, n_)) fail_msg("did not expect\n  %s\nin\n%s", n_, h_); \
  } while (0)

/* The same double, bit for bit up to -0 == 0 (a == b), with both printed in full. */
#define assert_dbl_eq(a, b) \
  do { \
    double a_ = (a), b_ = (b); \
    if (!(a_ == b_)) fail_msg("%s = %.17g, expected %s = %.17g", #a, a_, #b, b_); \
  } while (0)

typedef struct Cap {
  char *p;
  size_t n, cap;
  int calls; /* writes received: one per diagnostic */
} Cap;

/* A DiagWriteFn: appends to the Cap, NUL-terminated. */
static inline void cap_write(void *user, const char *text, size_t len) {
  Cap *c = user;
  c->calls++;
  if (c->n + len + 1 > c->cap) {
    c->cap = (c->n + len + 1) * 2;
    c->p = realloc(c->p, c->cap);
    assert_non_null(c->p);
  }
  memcpy(c->p + c->n, text, len);
  c->n += len;
  c->p[c->n] = '\0';
}

/* The text captured so far, "" for none. */
static inline const char *cap_text(const Cap *c) { return c->p ? c->p : ""; }

/* --- fixed-seed random numbers: the same sequence on every run ------------------------- */

static inline uint64_t xorshift64(uint64_t *s) {
  *s ^= *s << 13;
  *s ^= *s >> 7;
  *s ^= *s << 17;
  return *s;
}

static inline uint64_t splitmix64(uint64_t *s) {
  uint64_t z = (*s += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/* A double in [0, 1) from the top 53 bits. */
static inline double unit_double(uint64_t x) { return (double)(x >> 11) * 0x1p-53; }

/* --- a FILE captured in memory ---------------------------------------------------------- */

typedef struct Mem {
  FILE *f;
  char *p;
  size_t n;
} Mem;

static inline FILE *mem_open(Mem *m) {
  memset(m, 0, sizeof *m);
  m->f = open_memstream(&m->p, &m->n);
  assert_non_null(m->f);
  return m->f;
}

/* Closes the stream; the text stays in m->p until mem_free. */
static inline const char *mem_text(Mem *m) {
  if (m->f) {
    assert_int_equal(fclose(m->f), 0);
    m->f = NULL;
  }
  return m->p ? m->p : "";
}

/* Closes the stream and returns the text (the caller frees it). */
static inline char *mem_take(Mem *m) {
  mem_text(m);
  char *p = m->p ? m->p : calloc(1, 1);
  memset(m, 0, sizeof *m);
  return p;
}

static inline void mem_free(Mem *m) {
  if (m->f) fclose(m->f);
  free(m->p);
  memset(m, 0, sizeof *m);
}

/* --- files and temporary folders ------------------------------------------------------- */

/* The whole file, NUL-terminated (the caller frees it); fails the test when it cannot be read. */
static inline char *read_file(const char *path, size_t *len) {
  FILE *fp = fopen(path, "rb");
  if (!fp) fail_msg("cannot read %s: %s", path, strerror(errno));
  fseek(fp, 0, SEEK_END);
  long n = ftell(fp);
  fseek(fp, 0, SEEK_SET);
  char *s = malloc((size_t)n + 1);
  assert_non_null(s);
  size_t got = fread(s, 1, (size_t)n, fp);
  fclose(fp);
  s[got] = '\0';
  if (len) *len = got;
  return s;
}

/* mkdir -p. */
static inline void mkdirs(const char *path) {
  char buf[512];
  snprintf(buf, sizeof buf, "%s", path);
  for (char *p = buf + 1; *p; p++)
    if (*p == '/') {
      *p = '\0';
      mkdir(buf, 0700);
      *p = '/';
    }
  mkdir(buf, 0700);
}

static inline int support_rm_one(const char *path, const struct stat *st, int flag, struct FTW *ftw) {
  (void)st;
  (void)flag;
  (void)ftw;
  return remove(path);
}

/* rm -rf. */
static inline void rm_rf(const char *dir) { nftw(dir, support_rm_one, 16, FTW_DEPTH | FTW_PHYS); }

/* Writes len bytes to path, creating its folders. */
static inline void write_bytes(const char *path, const void *p, size_t len) {
  char dir[512];
  snprintf(dir, sizeof dir, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash && slash != dir) {
    *slash = '\0';
    mkdirs(dir);
  }
  FILE *fp = fopen(path, "wb");
  if (!fp) fail_msg("cannot write %s: %s", path, strerror(errno));
  assert_int_equal(fwrite(p, 1, len, fp), len);
  assert_int_equal(fclose(fp), 0);
}

/* Writes dir/rel (creating its folders). */
static inline void write_at(const char *dir, const char *rel, const char *text) {
  char path[512];
  snprintf(path, sizeof path, "%s/%s", dir, rel);
  write_bytes(path, text, strlen(text));
}

/* A temporary folder /tmp/llmp_TAG_XXXXXX and the paths of the files written into it. */
typedef struct TmpDir {
  char dir[64];
  char paths[64][160];
  int n;
} TmpDir;

static inline void tmp_open(TmpDir *t, const char *tag) {
  memset(t, 0, sizeof *t);
  snprintf(t->dir, sizeof t->dir, "/tmp/llmp_%s_XXXXXX", tag);
  assert_non_null(mkdtemp(t->dir));
}

/* dir/name: a path that stays valid until tmp_close. */
static inline const char *tmp_path(TmpDir *t, const char *name) {
  assert_true(t->n < 64);
  char *p = t->paths[t->n++], path[sizeof t->paths[0]]; /* (a local: name may lie in *t) */
  assert_true((size_t)snprintf(path, sizeof path, "%s/%s", t->dir, name) < sizeof path);
  memcpy(p, path, sizeof path);
  return p;
}

/* Writes text to dir/name (creating its folders); returns its path. */
static inline const char *tmp_file(TmpDir *t, const char *name, const char *text, size_t len) {
  const char *p = tmp_path(t, name);
  write_bytes(p, text, len);
  return p;
}

/* dir/name opened for writing. */
static inline FILE *tmp_fopen(TmpDir *t, const char *name) {
  char path[256];
  snprintf(path, sizeof path, "%s/%s", t->dir, name);
  FILE *f = fopen(path, "w");
  assert_non_null(f);
  return f;
}

/* Removes the folder and everything in it. */
static inline void tmp_close(TmpDir *t) {
  if (t->dir[0]) rm_rf(t->dir);
  t->dir[0] = '\0';
  t->n = 0;
}

/* Runs argv[1] alone, or every test.  A name that matches no test is an error (cmocka's
 * filter would run nothing and pass). */
static inline int llmp_run_tests(int argc, char **argv, const struct CMUnitTest *tests, size_t n,
                                 CMFixtureFunction teardown) {
  if (argc > 2) {
    fprintf(stderr, "usage: %s [TEST]\n", argv[0]);
    return 2;
  }
  if (argc > 1) {
    size_t i = 0;
    while (i < n && strcmp(tests[i].name, argv[1]) != 0) i++;
    if (i == n) {
      fprintf(stderr, "%s: no test named `%s`\n", argv[0], argv[1]);
      return 2;
    }
    cmocka_set_test_filter(argv[1]);
  }
  return _cmocka_run_group_tests("tests", tests, n, NULL, teardown);
}

#define RUN_TESTS(tests) llmp_run_tests(argc, argv, tests, sizeof tests / sizeof tests[0], NULL)

#endif
