/* bench_front.c - throughput of the front end on one (large) file.
 *
 *   bench_front FILE [REPS]      (default 5 repetitions; `make bench` runs it on gen_big's file)
 *
 * Times, REPS times each:
 *   parse        scanner and parser over the text already in memory (a fresh arena each time)
 *   parse+check  sema_run(check = true): reading the file, parsing, imports, every check
 *   parse+fmt    parsing and the canonical layout (fmt_file)
 * and prints the best and median throughput of each in MB/s (10^6 bytes a second), the file
 * size, the declaration count and the peak resident memory of the process (getrusage).
 * Exits 1 when the file has errors: the benchmark is only meaningful on a clean file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>

#include "front/fmt.h"
#include "front/parse.h"
#include "front/sema.h"
#include "bench.h"
#include "sorted.h"

enum { MAX_REPS = 1000 };

static void discard(void *user, const char *text, size_t len) {
  (void)user;
  (void)text;
  (void)len;
}

/* Diagnostics go to stderr, the first 8 KB of them only. */
static size_t shown;
static void show_some(void *user, const char *text, size_t len) {
  (void)user;
  if (shown >= 8192) return;
  if (len > 8192 - shown) len = 8192 - shown;
  fwrite(text, 1, len, stderr);
  shown += len;
}

typedef struct Timing {
  const char *name;
  double t[MAX_REPS];
} Timing;

/* One parse of the in-memory file; returns 0 when it parsed without errors. */
static int run_parse(Diag *d, SrcFile *f, bool format) {
  Parsed x;
  AstNode *root = parse_alone(&x, d, f);
  if (root && format) {
    size_t n;
    free(fmt_file(root, f, x.p.comments, x.p.ncomments, &n));
  }
  parsed_free(&x);
  return !root;
}

/* One full check; returns the error count and sets *ndecls. */
static int run_check(const char *path, DiagWriteFn write, int *ndecls) {
  Diag d;
  diag_init(&d, NULL);
  diag_set_writer(&d, write, NULL);
  SemaOptions so = {NULL, 0, NULL};
  Sema *s = sema_new(&d, &so);
  int errors = sema_run(s, path, true);
  *ndecls = sema_ndecls(s);
  sema_free(s);
  diag_free(&d);
  return errors;
}

int main(int argc, char **argv) {
  if (argc < 2 || argc > 3) {
    fprintf(stderr, "usage: bench_front FILE [REPS]\n");
    return 2;
  }
  const char *path = argv[1];
  int reps = argc == 3 ? atoi(argv[2]) : 5;
  if (reps < 1 || reps > MAX_REPS) {
    fprintf(stderr, "bench_front: REPS must be 1 to %d\n", MAX_REPS);
    return 2;
  }

  /* A first, untimed check: the file must be clean (and this warms the page cache). */
  int ndecls = 0;
  if (run_check(path, show_some, &ndecls)) {
    fprintf(stderr, "bench_front: %s has errors (run `llmp check %s`); no benchmark\n", path, path);
    return 1;
  }

  Diag d;
  diag_init(&d, NULL);
  diag_set_writer(&d, discard, NULL);
  const char *why;
  SrcFile *f = diag_load_file(&d, path, &why);
  if (!f) {
    fprintf(stderr, "%s: %s\n", path, why);
    return 1;
  }
  double mb = (double)f->len / 1e6;

  static Timing tm[3] = {{"parse", {0}}, {"parse+check", {0}}, {"parse+fmt", {0}}};
  for (int r = 0; r < reps; r++) {
    double t0 = bench_now();
    if (run_parse(&d, f, false)) return 1;
    double t1 = bench_now();
    int nd;
    if (run_check(path, discard, &nd)) return 1;
    double t2 = bench_now();
    if (run_parse(&d, f, true)) return 1;
    double t3 = bench_now();
    tm[0].t[r] = t1 - t0;
    tm[1].t[r] = t2 - t1;
    tm[2].t[r] = t3 - t2;
  }

  struct rusage ru;
  getrusage(RUSAGE_SELF, &ru);
  printf("file          %s\n", path);
  printf("size          %.2f MB (%zu bytes)\n", mb, f->len);
  printf("declarations  %d\n", ndecls);
  printf("repetitions   %d\n\n", reps);
  printf("%-12s %12s %12s %10s %10s\n", "phase", "best MB/s", "median MB/s", "best ms", "median ms");
  for (int k = 0; k < 3; k++) {
    qsort(tm[k].t, (size_t)reps, sizeof tm[k].t[0], cmp_double);
    double best = tm[k].t[0];
    double median = reps % 2 ? tm[k].t[reps / 2] : 0.5 * (tm[k].t[reps / 2 - 1] + tm[k].t[reps / 2]);
    printf("%-12s %12.1f %12.1f %10.1f %10.1f\n", tm[k].name, mb / best, mb / median, 1e3 * best, 1e3 * median);
  }
  printf("\npeak RSS      %.1f MB\n", (double)ru.ru_maxrss / 1024.0);
  diag_free(&d);
  return 0;
}
