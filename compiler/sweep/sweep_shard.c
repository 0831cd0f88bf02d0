/* sweep_shard.c - a shard's slice of a sweep's points, and --shard K/N or auto, which
 * asks the launcher (a Slurm job array, srun, Open MPI, PMI) which shard this process is. */
#include "sweep_io.h"

#include <limits.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "strbuf.h"
#include "sweep_io_internal.h"

/* --- shards ---------------------------------------------------------------------------------- */

void sweep_shard_range(uint64_t points, int k, int n, uint64_t *begin, uint64_t *end) {
  if (n < 1 || k < 0 || k >= n) {
    *begin = *end = 0;
    return;
  }
  /* P = q*n + r: k*P/n = k*q + k*r/n, and k*r < n*n < 2^62 */
  uint64_t un = (uint64_t)n, q = points / un, r = points % un;
  *begin = (uint64_t)k * q + (uint64_t)k * r / un;
  *end = (uint64_t)(k + 1) * q + (uint64_t)(k + 1) * r / un;
}

/* A count from 0 to INT_MAX in decimal, nothing else: 1, or 0 when s is not digits, -1 when
 * they are but the count is larger. */
static int parse_count(const char *s, size_t n, int *v) {
  if (!n) return 0;
  long long x = 0;
  for (size_t i = 0; i < n; i++) {
    if (!sweep_is_digit(s[i])) return 0;
    if (x <= INT_MAX) x = x * 10 + (s[i] - '0');
  }
  if (x > INT_MAX) return -1;
  *v = (int)x;
  return 1;
}

static int shard_fail(StrBuf *err, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int shard_fail(StrBuf *err, const char *fmt, ...) {
  if (err) {
    va_list ap;
    va_start(ap, fmt);
    strbuf_vprintf(err, fmt, ap);
    va_end(ap);
  }
  return -1;
}

/* The launchers --shard auto knows, in the order it tries them.  A launcher is there when its
 * rank variable is set; base, when not NULL, is subtracted from it. */
static const struct {
  const char *name, *rank, *base, *size;
} launchers[] = {
    {"a Slurm job array", "SLURM_ARRAY_TASK_ID", "SLURM_ARRAY_TASK_MIN", "SLURM_ARRAY_TASK_COUNT"},
    {"Slurm tasks", "SLURM_PROCID", NULL, "SLURM_NTASKS"},
    {"Open MPI", "OMPI_COMM_WORLD_RANK", NULL, "OMPI_COMM_WORLD_SIZE"},
    {"PMI", "PMI_RANK", NULL, "PMI_SIZE"},
};
enum { NLAUNCHERS = sizeof launchers / sizeof launchers[0] };

static const char *env_value(SweepGetenv env, const char *name) {
  const char *v = name ? env(name) : NULL;
  return v && *v ? v : NULL;
}

/* K and N from launcher l, whose rank variable is set. */
static int shard_from(int l, SweepGetenv env, int *k, int *n, StrBuf *err) {
  const char *names[3] = {launchers[l].rank, launchers[l].base, launchers[l].size};
  int v[3] = {0, 0, 0};
  for (int i = 0; i < 3; i++) {
    if (!names[i]) continue;
    const char *s = env_value(env, names[i]);
    if (!s) return shard_fail(err, "--shard auto: %s is set but %s is not", names[0], names[i]);
    int got = parse_count(s, strlen(s), &v[i]);
    if (got < 0) return shard_fail(err, "--shard auto: %s=%s is more than %d", names[i], s, INT_MAX);
    if (!got) return shard_fail(err, "--shard auto: %s=%s is not a whole number", names[i], s);
  }
  int rank = v[0] - v[1];
  if (v[2] < 1) return shard_fail(err, "--shard auto: %s=%d: there must be at least one shard", names[2], v[2]);
  if (rank < 0 || rank >= v[2]) {
    if (names[1])
      return shard_fail(
          err, "--shard auto: %s - %s = %d is not in [0, %s = %d): the array must be contiguous (--array=0-%d)",
          names[0], names[1], rank, names[2], v[2], v[2] - 1);
    return shard_fail(err, "--shard auto: %s=%d is not below %s=%d", names[0], v[0], names[2], v[2]);
  }
  *k = rank;
  *n = v[2];
  return 0;
}

static int shard_auto(SweepGetenv env, int *k, int *n, StrBuf *err) {
  for (int l = 0; l < NLAUNCHERS; l++)
    if (env_value(env, launchers[l].rank)) return shard_from(l, env, k, n, err);
  return shard_fail(err,
                    "--shard auto: no launcher found: none of SLURM_ARRAY_TASK_ID (a Slurm job array, with "
                    "SLURM_ARRAY_TASK_MIN and SLURM_ARRAY_TASK_COUNT), SLURM_PROCID (srun, with SLURM_NTASKS), "
                    "OMPI_COMM_WORLD_RANK (Open MPI, with OMPI_COMM_WORLD_SIZE) or PMI_RANK (MPICH, with PMI_SIZE) "
                    "is set; give --shard K/N");
}

int sweep_shard_parse_env(const char *spec, SweepGetenv env, int *k, int *n, StrBuf *err) {
  if (!spec) return shard_fail(err, "--shard needs K/N or auto");
  if (!strcmp(spec, "auto")) return shard_auto(env, k, n, err);
  const char *slash = strchr(spec, '/');
  int kk = 0, nn = 0, gk = 0, gn = 0;
  if (slash) {
    gk = parse_count(spec, (size_t)(slash - spec), &kk);
    gn = parse_count(slash + 1, strlen(slash + 1), &nn);
  }
  if (!gk || !gn) return shard_fail(err, "--shard `%s`: expected K/N (shard K of N, from 0: 0/4 .. 3/4) or auto", spec);
  if (gk < 0 || gn < 0) return shard_fail(err, "--shard `%s`: K and N are at most %d", spec, INT_MAX);
  if (nn < 1) return shard_fail(err, "--shard `%s`: N must be at least 1", spec);
  if (kk >= nn)
    return shard_fail(err, "--shard `%s`: K must be below N (shards count from 0: 0/%d .. %d/%d)", spec, nn, nn - 1,
                      nn);
  *k = kk;
  *n = nn;
  return 0;
}

static const char *process_getenv(const char *name) { return getenv(name); }

int sweep_shard_parse(const char *spec, int *k, int *n, StrBuf *err) {
  return sweep_shard_parse_env(spec, process_getenv, k, n, err);
}
