/* fit_cmd.c - `llmp fit`: calibration tables from measured samples.
 *
 *   llmp fit --gpu GPU SAMPLES_DIR -o OUT_DIR          operator tables (the operator CSVs)
 *   llmp fit --cluster CLUSTER SAMPLES_DIR -o OUT_DIR  collective tables (the nccl CSVs)
 *
 * The GPU or cluster is a declaration of hw/ (or of a file given with -f), so the physics
 * model the tables correct is the one `llmp op` and every prediction use.  The fitter itself
 * is the runtime's (runtime/llmp_fit.h); this file is the command line around it. */
#include "fit_cmd.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "cli.h"
#include "fit_collectives.h"
#include "hw.h"
#include "llmp_fit.h"

static const char usage_fit[] =
    "usage: llmp fit --gpu GPU SAMPLES_DIR -o OUT_DIR\n"
    "       llmp fit --cluster CLUSTER SAMPLES_DIR -o OUT_DIR\n"
    "\n"
    "Fits calibration tables from samples measured on a real GPU (operators) or system\n"
    "(collectives), writes them to OUT_DIR (created if missing), and prints the 5-fold\n"
    "cross-validated error per sample file, so you see how good the calibration is before you\n"
    "use it. Name OUT_DIR hw/calibration/NAME and set `calibration = \"NAME\"` in the gpu or\n"
    "cluster declaration to use the tables.\n"
    "\n"
    "Sample files (docs/calibration.md): operator CSVs NAME_DTYPE.csv, either in the format of\n"
    "arXiv 2509.22832's samples (linear1_fp16.csv, ...) or with the kernel's own arguments as\n"
    "columns (linear_fp16.csv: m,k,n,bias,F_dur(us),B_dur(us)); collective CSVs\n"
    "KIND_fp16_NODES_GPUSPERNODE.csv with columns shape,nodes,GPUsPerNode,dur(us). A folder with\n"
    "operator/ or nccl/ subfolders is read there.\n"
    "\n"
    "options:\n"
    "  --gpu GPU         fit operator tables for this gpu (hw/gpus.llmp or -f)\n"
    "  --cluster NAME    fit collective tables for this cluster (hw/systems/ or -f)\n"
    "  -o OUT_DIR        where the .tbl files go\n"
    "  -f FILE           also read the gpus and clusters of FILE\n"
    "  -h, --help        this text\n";

static int make_dir(const char *path) {
  struct stat st;
  if (stat(path, &st) == 0) return S_ISDIR(st.st_mode) ? 0 : -1;
  return mkdir(path, 0777);
}

/* "a/b" -> "a/b/sub" when that folder exists, else "a/b". */
static void sub_or_self(char *out, size_t n, const char *dir, const char *sub) {
  struct stat st;
  snprintf(out, n, "%s/%s", dir, sub);
  if (stat(out, &st) != 0 || !S_ISDIR(st.st_mode)) snprintf(out, n, "%s", dir);
}

static int fit_gpu(const RtGpu *g, const char *samples, const char *out) {
  char dir[4096], prov[4096 + 256];
  sub_or_self(dir, sizeof dir, samples, "operator");
  RtSampleSet set;
  memset(&set, 0, sizeof set);
  if (rt_samples_load(dir, &set, stderr)) return 1;
  double (*mape)[2] = calloc((size_t)set.nfiles + 1, sizeof *mape);
  if (!mape) abort();
  rt_fit_cv(g, &set, 5, mape);
  printf("%-34s %8s %8s\n", "sample file", "fwd err", "bwd err");
  for (int f = 0; f < set.nfiles; f++) {
    printf("%-34s", set.file[f]);
    for (int k = 0; k < 2; k++)
      if (mape[f][k] < 0) printf(" %8s", "-");
      else printf(" %7.2f%%", 100 * mape[f][k]);
    printf("\n");
  }
  RtCalib *c = rt_fit(g, &set, NULL);
  time_t now = time(NULL);
  char date[32];
  strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
  snprintf(prov, sizeof prov, "derived by llmp fit --gpu %s on %s from %d rows of %s", g->name, date, set.n, dir);
  int rc = c && rt_calib_write_dir(c, out, prov) == 0 ? 0 : 1;
  if (rc) fprintf(stderr, "llmp fit: cannot write the tables to %s\n", out);
  else printf("wrote %d tables to %s\n", rt_calib_ntables(c), out);
  rt_calib_free(c);
  rt_samples_free(&set);
  free(mape);
  return rc;
}

static int fit_cluster(const RtCluster *c, const char *samples, const char *out) {
  char dir[4096], header[4096 + 256], err[512] = "";
  sub_or_self(dir, sizeof dir, samples, "nccl");
  time_t now = time(NULL);
  char date[32];
  strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
  snprintf(header, sizeof header, "derived by llmp fit --cluster %s on %s from %s", c->name, date, dir);
  int written = rt_fit_collectives_dir(c, dir, out, header, err, sizeof err);   /* tables, or -1 */
  if (written < 0) {
    fprintf(stderr, "llmp fit: %s\n", err);
    return 1;
  }
  printf("wrote %d collective tables of %s to %s\n", written, c->name, out);
  return 0;
}

int fit_main(int argc, char **argv) {
  const char *gpu = NULL, *cluster = NULL, *out = NULL, *samples = NULL, *files[16];
  int nfiles = 0;
  for (int i = 0; i < argc; i++) {
    const char *a = argv[i];
    bool next = i + 1 < argc;
    if (!strcmp(a, "-h") || !strcmp(a, "--help")) {
      fputs(usage_fit, stdout);
      return 0;
    } else if ((!strcmp(a, "--gpu") || !strcmp(a, "--cluster") || !strcmp(a, "-o") || !strcmp(a, "-f")) && !next)
      return cli_usage_error("fit", "%s needs a value", a);
    else if (!strcmp(a, "--gpu")) gpu = argv[++i];
    else if (!strcmp(a, "--cluster")) cluster = argv[++i];
    else if (!strcmp(a, "-o")) out = argv[++i];
    else if (!strcmp(a, "-f") && nfiles < 16) files[nfiles++] = argv[++i];
    else if (a[0] == '-') return cli_usage_error("fit", "unknown option `%s`", a);
    else if (samples) return cli_usage_error("fit", "one SAMPLES_DIR at a time (`%s` is a second)", a);
    else samples = a;
  }
  if (!gpu == !cluster) return cli_usage_error("fit", "%s", "name a --gpu or a --cluster (one of them)");
  if (!samples || !out) return cli_usage_error("fit", "%s", "give SAMPLES_DIR and -o OUT_DIR");
  if (make_dir(out)) {
    fprintf(stderr, "llmp fit: cannot create %s: %s\n", out, strerror(errno));
    return 1;
  }
  HwSession hs;
  HwSet *h = hw_session_open(&hs, "<llmp fit>", files, nfiles, NULL, 0);
  int rc = 1;
  if (h && gpu) {
    const RtGpu *g = hw_gpu(h, gpu);
    if (g) rc = fit_gpu(g, samples, out);
  } else if (h) {
    const RtCluster *c = hw_cluster(h, cluster);
    if (c) rc = fit_cluster(c, samples, out);
  }
  hw_session_close(&hs);
  return rc;
}
