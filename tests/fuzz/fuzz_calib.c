/* fuzz_calib.c - libFuzzer harness for the runtime's readers of user files: calibration
 * tables (the .tbl files of hw/calibration/NAME/, docs/calibration.md) and the sample CSVs
 * that `llmp fit` reads (operator files in the paper's form and in the kernels' own, nccl/
 * collective files).
 *
 * The first input byte picks what the rest is:
 *   0-95     a table file, in.tbl in a folder of its own: rt_calib_load() on the folder; when
 *            it loads, every operator kernel (fp16, on the A100 model with those tables) and
 *            every collective (on Perlmutter's tiers with them) is evaluated on shapes in and
 *            out of any grid, and the harness aborts unless each answer is a positive finite
 *            time or rejected as bad arguments (RT_BAD_ARGS): a table must not turn into a
 *            silently wrong number;
 *   96-223   an operator sample file named by the second byte (a paper stem or a kernel name,
 *            `_fp16.csv`): rt_samples_load(), and when it loads, rt_samples_clean()
 *            and rt_fit() (which must give a table set or fail cleanly);
 *   224-255  a collective sample file (`allreduce_fp16_2_4.csv` and the like, by the second
 *            byte): rt_collective_csv_read(), and rt_fit_collective() on what it read:
 *            as llmp fit --cluster does, on the samples rt_collective_keep_possible() keeps,
 *            unless rt_collective_absurd() refuses the file (then on all of them).
 * Every table fitted from samples that llmp fit accepts must load back as it writes it
 * (rt_table_check()): else the harness aborts, since llmp fit would refuse to write it.
 * Errors go to a discarded stream.  Every reader must not crash, leak, hang or trip a
 * sanitizer on any input.
 *
 * Seeds (corpus_calib/): the mode byte (and the pick byte) followed by the first lines of a
 * shipped table of hw/calibration/ or of a sample file of shared/data/paper-samples/ (the
 * samples of arXiv 2509.22832, MIT licence, copyright 2025 ICICLE,
 * github.com/DebarghaG/estimate-train-time), or by a few hand-written rows.
 *
 * Build: tests/fuzz/CMakeLists.txt (LLMP_FUZZ=ON, clang).  As a plain program,
 * `fuzz_calib FILE...` runs each FILE once (libFuzzer's driver). */
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "calib.h"
#include "clusters.h"
#include "fit_collectives.h"
#include "llmp_fit.h"
#include "llmp_rt.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[4096], tbl_dir[4200], ops_dir[4200], nccl_dir[4200];
static FILE *sink;

/* clang-format off */
static const char *const op_stems[] = {
    "linear1", "linear2", "linear3", "linear4", "linear_final", "baddbmm", "bmm",
    "ScaledUpperTriangMaskedSoftmax", "softmax", "fillmask", "flash_atten", "layernorm",
    "RMSlayernorm", "gelu", "res_add", "RoPE", "embedding", "parallel_cross_entropy_128",
    "firstStage_optimizer", "middleStage_optimizer", "lastStage_optimizer", "linear",
    "masked_softmax", "masked_fill", "flash_attention", "flash_attention_full", "rmsnorm",
    "swiglu", "add", "rope", "cross_entropy", "adam"};
/* clang-format on */
enum { NSTEMS = sizeof op_stems / sizeof op_stems[0] };
static const int layouts[][2] = {{1, 2}, {1, 4}, {1, 8}, {2, 1}, {2, 4}, {4, 1}, {8, 1}, {16, 4}};

static void clean(const char *d) {
  char path[4400];
  snprintf(path, sizeof path, "%s/in.tbl", d);
  unlink(path);
  for (int i = 0; i < NSTEMS; i++) {
    snprintf(path, sizeof path, "%s/%s_fp16.csv", d, op_stems[i]);
    unlink(path);
  }
}

static void cleanup(void) {
  if (!dir[0]) return;
  clean(tbl_dir);
  clean(ops_dir);
  rmdir(tbl_dir);
  rmdir(ops_dir);
  char path[4400];
  for (int k = 0; k < RT_NCOLLS; k++)
    for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++) {
      snprintf(path, sizeof path, "%s/%s_fp16_%d_%d.csv", nccl_dir, rt_coll_kernels[k], layouts[l][0], layouts[l][1]);
      unlink(path);
    }
  rmdir(nccl_dir);
  rmdir(dir);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  const char *base = getenv("TMPDIR");
  if (!base || !*base) base = "/tmp";
  snprintf(dir, sizeof dir, "%s/llmp-fuzz-calib-XXXXXX", base);
  if (!mkdtemp(dir)) {
    fprintf(stderr, "fuzz_calib: cannot make a temporary folder under %s: %s\n", base, strerror(errno));
    abort();
  }
  snprintf(tbl_dir, sizeof tbl_dir, "%s/tables", dir);
  snprintf(ops_dir, sizeof ops_dir, "%s/operator", dir);
  snprintf(nccl_dir, sizeof nccl_dir, "%s/nccl", dir);
  if (mkdir(tbl_dir, 0700) != 0 || mkdir(ops_dir, 0700) != 0 || mkdir(nccl_dir, 0700) != 0) abort();
  sink = fopen("/dev/null", "w");
  if (!sink) abort();
  atexit(cleanup);
  return 0;
}

static void write_file(const char *path, const uint8_t *data, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!f || (size && fwrite(data, 1, size, f) != size) || fclose(f) != 0) {
    fprintf(stderr, "fuzz_calib: cannot write %s\n", path);
    abort();
  }
}

/* A table fitted from accepted samples: its text must load back (rt_table_save()'s check). */
static void check_fitted(const RtTable *t) {
  char err[1400];
  if (rt_table_check(t, "fitted.tbl", err, sizeof err) != 0) {
    fprintf(stderr, "fuzz_calib: a table fitted from accepted samples does not load back: %s\n", err);
    abort();
  }
}

/* A kernel's answer: RT_BAD_ARGS, or positive finite times (bwd may be 0: Adam, collectives). */
static void check(const char *what, RtCost c) {
  if (c.flags & RT_BAD_ARGS) return;
  if (!(c.fwd > 0 && isfinite(c.fwd) && c.bwd >= 0 && isfinite(c.bwd))) {
    fprintf(stderr, "fuzz_calib: %s gave fwd %g bwd %g (flags %#x) from a loaded table\n", what, c.fwd, c.bwd, c.flags);
    abort();
  }
}

static void run_tables(const uint8_t *data, size_t size) {
  char path[4400], err[1024];
  snprintf(path, sizeof path, "%s/in.tbl", tbl_dir);
  write_file(path, data, size);
  RtCalib *cal = rt_calib_load(tbl_dir, err, sizeof err);
  unlink(path);
  if (!cal) return;
  RtGpu g = *rt_gpu_builtin("a100_sxm4_80gb");
  g.calib = cal;
  RtCluster cl = *rt_cluster_builtin("perlmutter");
  cl.gpu = &g;
  cl.calib = cal;
  static const double sizes[] = {1, 7, 64, 100, 1024, 3000, 8192, 65536, 1e6, 1e9};
  enum { NS = sizeof sizes / sizeof sizes[0] };
  for (int i = 0; i < NS; i++) {
    double s = sizes[i], t = sizes[(i + 3) % NS], u = sizes[(i + 7) % NS];
    check("linear", rt_linear(&g, RT_FP16, s, t, u, i & 1));
    check("bmm", rt_bmm(&g, RT_FP16, t, s, u, 64));
    check("softmax", rt_softmax(&g, RT_FP16, s, t, i & 1));
    check("masked_fill", rt_masked_fill(&g, RT_FP16, s, t));
    check("attention", rt_attention(&g, RT_FP16, 1 + i, t, 8, 64 + 8 * i, i & 1));
    check("flash_attention", rt_flash_attention(&g, RT_FP16, 1 + i, t, 16, 4, 128, i & 1));
    check("layernorm", rt_layernorm(&g, RT_FP16, s, t));
    check("rmsnorm", rt_rmsnorm(&g, RT_FP16, s, t));
    check("gelu", rt_gelu(&g, RT_FP16, s * t));
    check("swiglu", rt_swiglu(&g, RT_FP16, s * t));
    check("add", rt_add(&g, RT_FP16, s * t));
    check("rope", rt_rope(&g, RT_FP16, s, 1 + i, 128));
    check("embedding", rt_embedding(&g, RT_FP16, s, t, u));
    check("cross_entropy", rt_cross_entropy(&g, RT_FP16, s, t));
    check("adam", rt_adam(&g, RT_FP16, s * t, s < t ? s : t));
    for (size_t l = 0; l < sizeof layouts / sizeof layouts[0]; l++) {
      int n = layouts[l][0], p = layouts[l][1];
      check("allreduce", rt_allreduce(&cl, s * 16, n, p));
      check("allgather", rt_allgather(&cl, s * 16, n, p));
      check("reducescatter", rt_reducescatter(&cl, s * 16, n, p));
      check("alltoall", rt_alltoall(&cl, s * 16, n, p));
      check("p2p", rt_p2p(&cl, s * 16, n, p));
    }
  }
  rt_calib_free(cal);
}

static void run_op_samples(uint8_t pick, const uint8_t *data, size_t size) {
  char path[4400];
  const char *stem = op_stems[pick % NSTEMS];
  snprintf(path, sizeof path, "%s/%s_fp16.csv", ops_dir, stem);
  write_file(path, data, size);
  RtSampleSet set;
  if (rt_samples_load(dir, &set, sink) == 0) {
    const RtGpu *g = rt_gpu_builtin(pick & 0x80 ? "gh200" : "a100_sxm4_80gb");
    if (rt_samples_clean(g, &set, sink) >= 0 && set.n > 0) {
      RtCalib *c = rt_fit(g, &set, NULL);
      for (int i = 0; c && i < c->ntables; i++) check_fitted(&c->tables[i]);
      rt_calib_free(c);
    }
    rt_samples_free(&set);
  }
  unlink(path);
}

static void run_coll_samples(uint8_t pick, const uint8_t *data, size_t size) {
  char path[4400], err[1024];
  int k = pick % RT_NCOLLS;
  int l = (pick / RT_NCOLLS) % (int)(sizeof layouts / sizeof layouts[0]);
  int nodes = layouts[l][0], gpn = layouts[l][1];
  snprintf(path, sizeof path, "%s/%s_fp16_%d_%d.csv", nccl_dir, rt_coll_kernels[k], nodes, gpn);
  write_file(path, data, size);
  double *bytes = NULL, *secs = NULL;
  int n = rt_collective_csv_read(path, rt_coll_kernels[k], nodes, gpn, &bytes, &secs, NULL, err, sizeof err);
  RtCluster cl = *rt_cluster_builtin("perlmutter");
  /* As llmp fit --cluster: refused, or fitted on the samples not ruled out (the refused ones
   * are fitted too, for the fitter's sake, but not checked) */
  int refused = n > 0 && rt_collective_absurd(rt_coll_kernels[k], &cl, nodes, gpn, bytes, secs, n) >= 0;
  if (n > 0 && !refused) n = rt_collective_keep_possible(rt_coll_kernels[k], &cl, nodes, gpn, bytes, secs, NULL, n);
  if (n >= 2) {
    RtTable t;
    double cv;
    if (rt_fit_collective_cv(&cl, rt_coll_kernels[k], nodes, gpn, bytes, secs, n, 0, &t, &cv, err, sizeof err) == 0) {
      if (!refused) check_fitted(&t);
      rt_table_release(&t);
    }
  }
  free(bytes);
  free(secs);
  unlink(path);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size < 2) return 0;
  uint8_t mode = data[0], pick = data[1];
  if (mode < 96)
    run_tables(data + 1, size - 1);
  else if (mode < 224)
    run_op_samples(pick, data + 2, size - 2);
  else
    run_coll_samples(pick, data + 2, size - 2);
  return 0;
}
