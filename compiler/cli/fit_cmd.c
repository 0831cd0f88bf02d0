/* fit_cmd.c - `llmp fit`: calibration tables from measured samples.
 *
 *   llmp fit --gpu GPU SAMPLES_DIR -o OUT_DIR          operator tables (the operator CSVs)
 *   llmp fit --cluster CLUSTER SAMPLES_DIR -o OUT_DIR  collective tables (the nccl CSVs)
 *
 * The GPU or cluster is a declaration of hw/ (or of a file given with -f), so the physics
 * model the tables correct is the one `llmp op` and every prediction use.  The fitter itself
 * is the runtime's (runtime/fit/llmp_fit.h); this file is the command line around it. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include "alloc.h"
#include "cli.h"
#include "fit_collectives.h"
#include "llmp_fit.h"
#include "lower/hw.h"
#include "options.h"

const char cli_usage_fit[] =
    "usage: llmp fit --gpu GPU SAMPLES_DIR -o OUT_DIR\n"
    "       llmp fit --cluster CLUSTER SAMPLES_DIR -o OUT_DIR\n"
    "\n"
    "Fits calibration tables from samples measured on a real GPU (operators) or system\n"
    "(collectives), writes them to OUT_DIR (created if missing), and prints the 5-fold\n"
    "cross-validated error (MAPE on the rows each fit did not see): per sample file, per table\n"
    "and over all rows for operators, per table for collectives, so you see how good the\n"
    "calibration is before you use it. Name OUT_DIR hw/calibration/NAME and set\n"
    "`calibration = \"NAME\"` in the gpu or cluster declaration to use the tables.\n"
    "\n"
    "Sample files (docs/calibration.md): operator CSVs NAME_DTYPE.csv, either in the format of\n"
    "arXiv 2509.22832's samples (linear1_fp16.csv, ...) or with the kernel's own arguments as\n"
    "columns (linear_fp16.csv: m,k,n,bias,F_dur(us),B_dur(us)); collective CSVs\n"
    "KIND_fp16_NODES_GPUSPERNODE.csv with columns shape (or bytes) and dur(us). Lines starting\n"
    "with # are comments; `# gpu:` and `# date:` go into the tables' provenance. A folder with\n"
    "operator/ or nccl/ subfolders is read there. A malformed file is an error FILE:LINE:.\n"
    "\n"
    "options:\n"
    "  --gpu GPU         fit operator tables for this gpu (hw/gpus.llmp or -f)\n"
    "  --cluster NAME    fit collective tables for this cluster (hw/systems/ or -f)\n"
    "  -o OUT_DIR        where the .tbl files go\n"
    "  -f FILE           also read the gpus and clusters of FILE\n"
    "  -h, --help        this text\n";

/* mkdir -p: path and its missing parents; 0, or -1 with errno. */
static int make_dir(const char *path) {
  struct stat st;
  char buf[4096];
  if (stat(path, &st) == 0) return S_ISDIR(st.st_mode) ? 0 : (errno = ENOTDIR, -1);
  if (strlen(path) >= sizeof buf) return errno = ENAMETOOLONG, -1;
  strcpy(buf, path);
  for (char *p = buf + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (stat(buf, &st) != 0 && mkdir(buf, 0777) != 0 && errno != EEXIST) return -1;
    *p = '/';
  }
  return mkdir(buf, 0777) == 0 || errno == EEXIST ? 0 : -1;
}

/* "a/b" -> "a/b/sub" when that folder exists, else "a/b". */
static void sub_or_self(char *out, size_t n, const char *dir, const char *sub) {
  struct stat st;
  snprintf(out, n, "%s/%s", dir, sub);
  if (stat(out, &st) != 0 || !S_ISDIR(st.st_mode)) snprintf(out, n, "%s", dir);
}

/* Reads SAMPLES (its operator/ subfolder if it has one), prints the cross-validated error
 * per sample file, per table and over all rows, writes the tables with their provenance. */
static int fit_gpu(const RtGpu *g, const char *samples, const char *out) {
  fflush(stdout);
  return rt_fit_gpu_dir(g, samples, out, stdout, stderr);
}

static int fit_cluster(const RtCluster *c, const char *samples, const char *out) {
  char dir[4096], header[4096 + 256], err[512] = "";
  sub_or_self(dir, sizeof dir, samples, "nccl");
  time_t now = time(NULL);
  char date[32];
  strftime(date, sizeof date, "%Y-%m-%d", gmtime(&now));
  snprintf(header, sizeof header, "derived by llmp fit --cluster %s on %s from %s", c->name, date, dir);
  fflush(stdout);
  int written = rt_fit_collectives_dir_report(c, dir, out, header, stdout, stderr, err, sizeof err);
  if (written < 0) { /* "FILE:LINE: message" */
    fflush(stdout);
    fprintf(stderr, "%s\n", err);
    return 1;
  }
  printf("wrote %d collective tables of %s to %s\n", written, c->name, out);
  return 0;
}

typedef struct FitOptions {
  const char *gpu, *cluster, *out, *samples;
  const char **files; /* -f */
  int nfiles;
} FitOptions;

enum { OPT_GPU, OPT_CLUSTER, OPT_OUT, OPT_FILE };

static const CliOption fit_options[] = {
    {"--gpu", OPT_GPU, CLI_NEXT},
    {"--cluster", OPT_CLUSTER, CLI_NEXT},
    {"-o", OPT_OUT, CLI_NEXT},
    {"-f", OPT_FILE, CLI_NEXT},
    {NULL, 0, 0},
};

static int fit_option(void *ctx, int id, const char *value) {
  FitOptions *o = ctx;
  switch (id) {
  case OPT_GPU: o->gpu = value; break;
  case OPT_CLUSTER: o->cluster = value; break;
  case OPT_OUT: o->out = value; break;
  case OPT_FILE: o->files[o->nfiles++] = value; break;
  }
  return -1;
}

/* SAMPLES_DIR, the one operand ("-" is no folder: an unknown option). */
static int fit_operand(void *ctx, const char *arg) {
  FitOptions *o = ctx;
  if (!strcmp(arg, "-")) return cli_usage_error("fit", "unknown option `%s`", arg);
  if (o->samples) return cli_usage_error("fit", "one SAMPLES_DIR at a time (`%s` is a second)", arg);
  o->samples = arg;
  return -1;
}

/* Returns -1 to go on, else the exit status. */
static int fit_parse(const CliCommand *c, int argc, char **argv, FitOptions *o) {
  CliArgs a;
  CliSpec spec = {c, 0, fit_options, NULL, fit_option, fit_operand, o};
  o->files = xcalloc((size_t)argc + 1, sizeof *o->files);
  int rc = cli_parse(&spec, argc, argv, &a);
  cli_args_free(&a);
  if (rc >= 0) return rc;
  if (!o->gpu == !o->cluster) return cli_usage_error("fit", "%s", "name a --gpu or a --cluster (one of them)");
  if (!o->samples || !o->out) return cli_usage_error("fit", "%s", "give SAMPLES_DIR and -o OUT_DIR");
  return -1;
}

/* Creates OUT_DIR and fits the tables of the gpu or cluster named, against its datasheet
 * model alone. */
static int fit_run(const FitOptions *o) {
  if (make_dir(o->out)) {
    fprintf(stderr, "llmp fit: cannot create %s: %s\n", o->out, strerror(errno));
    return 1;
  }
  HwSession hs;
  SemaOptions so = {NULL, 0, NULL};
  HwSet *h = hw_session_open(&hs, "<llmp fit>", &so, o->files, o->nfiles);
  int rc = 1;
  if (h) hw_without_calibration(h); /* the fit needs the datasheet model, not the old tables */
  if (h && o->gpu) {
    const RtGpu *g = hw_gpu(h, o->gpu);
    if (g) rc = fit_gpu(g, o->samples, o->out);
  } else if (h) {
    const RtCluster *c = hw_cluster(h, o->cluster);
    if (c) rc = fit_cluster(c, o->samples, o->out);
  }
  hw_session_close(&hs);
  return rc;
}

int cli_fit(int argc, char **argv, const CliCommand *c) {
  FitOptions o = {0};
  int rc = fit_parse(c, argc, argv, &o);
  if (rc < 0) rc = fit_run(&o);
  free(o.files);
  return rc;
}
