/* op.c - `llmp op`: one kernel's cost, or a batch of them, from the command line.
 *
 *   llmp op --gpu GPU [--dtype fp16] KIND ARGS...        ->  FWD_US BWD_US
 *   llmp op --cluster CLUSTER KIND BYTES NODES GPUS_PER_NODE  ->  US 0
 *   llmp op --gpu GPU --batch < queries                  ->  one line per query line
 *
 * The GPU and the cluster come from hw/ (hw/gpus.llmp and every file of hw/systems/), plus
 * the files given with -f: they are checked like any .llmp file, then handed to the runtime
 * through lower/hw.c.  A query's kind is looked up in one table (name, arity, what it needs). */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "cli.h"
#include "lower/hw.h"
#include "options.h"

typedef enum { NEED_GPU, NEED_CLUSTER } Need;

typedef struct QueryKind {
  const char *name;
  int nargs;
  int optional; /* of them, trailing ones that may be left out: they read as 1 */
  Need need;
  const char *args; /* for messages and --help */
  RtCost (*gpu_fn)(const RtGpu *g, RtDtype dt, const double *a);
  RtCost (*cluster_fn)(const RtCluster *c, double bytes, int nodes, int gpn);
} QueryKind;

/* Adapters from an argument vector to the runtime's signatures. */
static RtCost k_linear(const RtGpu *g, RtDtype dt, const double *a) { return rt_linear(g, dt, a[0], a[1], a[2], 1); }
static RtCost k_bmm(const RtGpu *g, RtDtype dt, const double *a) { return rt_bmm(g, dt, a[0], a[1], a[2], a[3]); }
static RtCost k_softmax_causal(const RtGpu *g, RtDtype dt, const double *a) { return rt_softmax(g, dt, a[0], a[1], 1); }
static RtCost k_softmax(const RtGpu *g, RtDtype dt, const double *a) { return rt_softmax(g, dt, a[0], a[1], 0); }
static RtCost k_attention(const RtGpu *g, RtDtype dt, const double *a) {
  return rt_attention(g, dt, a[0], a[1], a[2], a[3], 1);
}
static RtCost k_flash(const RtGpu *g, RtDtype dt, const double *a) {
  return rt_flash_attention(g, dt, a[0], a[1], a[2], a[2], a[3], 1);
}
static RtCost k_flash_ex(const RtGpu *g, RtDtype dt, const double *a) {
  return rt_flash_attention_ex(g, dt, a[0], a[1], a[2], a[3], a[4], a[5], 1, a[6], 0);
}
static RtCost k_layernorm(const RtGpu *g, RtDtype dt, const double *a) { return rt_layernorm(g, dt, a[0], a[1]); }
static RtCost k_rmsnorm(const RtGpu *g, RtDtype dt, const double *a) { return rt_rmsnorm(g, dt, a[0], a[1]); }
static RtCost k_gelu(const RtGpu *g, RtDtype dt, const double *a) { return rt_gelu(g, dt, a[0]); }
static RtCost k_swiglu(const RtGpu *g, RtDtype dt, const double *a) { return rt_swiglu(g, dt, a[0]); }
static RtCost k_add(const RtGpu *g, RtDtype dt, const double *a) { return rt_add(g, dt, a[0]); }
static RtCost k_rope(const RtGpu *g, RtDtype dt, const double *a) { return rt_rope(g, dt, a[0], a[1], a[2]); }
static RtCost k_embedding(const RtGpu *g, RtDtype dt, const double *a) { return rt_embedding(g, dt, a[0], a[1], a[2]); }
static RtCost k_cross_entropy(const RtGpu *g, RtDtype dt, const double *a) {
  return rt_cross_entropy(g, dt, a[0], a[1]);
}
static RtCost k_adam(const RtGpu *g, RtDtype dt, const double *a) { return rt_adam(g, dt, a[0], a[1]); }
static RtCost k_conv1d(const RtGpu *g, RtDtype dt, const double *a) { return rt_conv1d(g, dt, a[0], a[1], a[2]); }
static RtCost k_ssd(const RtGpu *g, RtDtype dt, const double *a) {
  return rt_ssd(g, dt, a[0], a[1], a[2], a[3], a[4], a[5]);
}

static const QueryKind kinds[] = {
    {"linear", 3, 0, NEED_GPU, "M K N", k_linear, NULL},
    {"bmm", 4, 0, NEED_GPU, "BATCH M K N", k_bmm, NULL},
    {"softmax_causal", 2, 0, NEED_GPU, "ROWS L", k_softmax_causal, NULL},
    {"softmax", 2, 0, NEED_GPU, "ROWS L", k_softmax, NULL},
    {"attention", 4, 0, NEED_GPU, "B L HEADS HEAD_DIM", k_attention, NULL},
    {"flash_attention", 4, 0, NEED_GPU, "B L HEADS HEAD_DIM", k_flash, NULL},
    {"flash_attention_ex", 7, 0, NEED_GPU, "B L HEADS KV_HEADS HEAD_DIM V_HEAD_DIM WINDOW", k_flash_ex, NULL},
    {"layernorm", 2, 0, NEED_GPU, "TOKENS HIDDEN", k_layernorm, NULL},
    {"rmsnorm", 2, 0, NEED_GPU, "TOKENS HIDDEN", k_rmsnorm, NULL},
    {"gelu", 1, 0, NEED_GPU, "ELEMENTS", k_gelu, NULL},
    {"swiglu", 1, 0, NEED_GPU, "ELEMENTS", k_swiglu, NULL},
    {"add", 1, 0, NEED_GPU, "ELEMENTS", k_add, NULL},
    {"rope", 3, 0, NEED_GPU, "TOKENS HEADS HEAD_DIM", k_rope, NULL},
    {"embedding", 3, 0, NEED_GPU, "TOKENS ROWS HIDDEN", k_embedding, NULL},
    {"cross_entropy", 2, 0, NEED_GPU, "TOKENS VOCAB", k_cross_entropy, NULL},
    {"adam", 2, 1, NEED_GPU, "PARAMS [TENSORS]", k_adam, NULL},
    {"conv1d", 3, 0, NEED_GPU, "TOKENS CHANNELS WIDTH", k_conv1d, NULL},
    {"ssd", 6, 0, NEED_GPU, "TOKENS HEADS HEAD_DIM STATE GROUPS CHUNK", k_ssd, NULL},
    {"allreduce", 3, 0, NEED_CLUSTER, "BYTES NODES GPUS_PER_NODE", NULL, rt_allreduce},
    {"allgather", 3, 0, NEED_CLUSTER, "BYTES NODES GPUS_PER_NODE", NULL, rt_allgather},
    {"reducescatter", 3, 0, NEED_CLUSTER, "BYTES NODES GPUS_PER_NODE", NULL, rt_reducescatter},
    {"alltoall", 3, 0, NEED_CLUSTER, "BYTES NODES GPUS_PER_NODE", NULL, rt_alltoall},
    {"p2p", 3, 0, NEED_CLUSTER, "BYTES NODES GPUS_PER_NODE", NULL, rt_p2p},
};
enum { NKINDS = sizeof kinds / sizeof kinds[0], MAX_ARGS = 8 };

const char cli_usage_op[] =
    "usage: llmp op --gpu GPU [--dtype DTYPE] KIND ARGS...\n"
    "       llmp op --cluster CLUSTER KIND BYTES NODES GPUS_PER_NODE\n"
    "       llmp op (--gpu GPU | --cluster CLUSTER) --batch < QUERIES\n"
    "\n"
    "Prints the time of one operator, `FWD_US BWD_US` in microseconds (forward and backward),\n"
    "or of one collective, `US 0`, as the runtime's cost kernels predict it: the datasheet\n"
    "physics of the GPU or the cluster's network tiers, corrected by the calibration tables the\n"
    "declaration names where it has them.\n"
    "\n"
    "operators (with --gpu):\n"
    "  linear M K N                Y[M,N] = X[M,K] W[K,N] + bias\n"
    "  bmm BATCH M K N             BATCH independent [M,K]x[K,N] products\n"
    "  softmax_causal ROWS L       fused scale-mask-softmax over ROWS rows of L x L\n"
    "  softmax ROWS L              softmax over ROWS rows of L\n"
    "  attention B L HEADS HEAD_DIM        unfused causal attention (bmm, softmax, bmm)\n"
    "  flash_attention B L HEADS HEAD_DIM  FlashAttention-2, causal\n"
    "  flash_attention_ex B L HEADS KV_HEADS HEAD_DIM V_HEAD_DIM WINDOW  causal, a value head dim of\n"
    "                              its own (MLA), a sliding window of WINDOW keys (0: none)\n"
    "  layernorm TOKENS HIDDEN     rmsnorm TOKENS HIDDEN\n"
    "  gelu ELEMENTS               swiglu ELEMENTS (of the output)    add ELEMENTS\n"
    "  rope TOKENS HEADS HEAD_DIM  embedding TOKENS ROWS HIDDEN       cross_entropy TOKENS VOCAB\n"
    "  adam PARAMS [TENSORS]       one optimizer step over PARAMS parameters in TENSORS\n"
    "                              parameter tensors (default 1) (FWD_US; BWD_US is 0)\n"
    "  conv1d TOKENS CHANNELS WIDTH       Mamba-2's causal depthwise conv1d (uncalibrated)\n"
    "  ssd TOKENS HEADS HEAD_DIM STATE GROUPS CHUNK  Mamba-2's SSD scan (uncalibrated)\n"
    "collectives (with --cluster; BYTES is the full tensor: the reduced tensor, the gathered\n"
    "output, the message sent):\n"
    "  allreduce | allgather | reducescatter | alltoall | p2p  BYTES NODES GPUS_PER_NODE\n"
    "\n"
    "options:\n"
    "  --gpu GPU         a gpu declared in hw/gpus.llmp (a100_sxm4_80gb, gh200, h100_sxm, ...)\n"
    "                    or in a file given with -f\n"
    "  --cluster NAME    a cluster declared in hw/systems/ (perlmutter, vista, selene, eos) or -f\n"
    "  --dtype DTYPE     fp32, tf32, fp16 (default), bf16, fp8 or mxfp8 (on a gpu with `peak_fp8`;\n"
    "                    mxfp8 also `peak_fp4`), nvfp4 (on a gpu with `peak_fp4`)\n"
    "  --batch           read one query `KIND ARGS...` per line from standard input and print\n"
    "                    one line per query, in order; a bad query's line reads `error` (its\n"
    "                    message goes to standard error as `<stdin>:LINE: error: ...`) and the\n"
    "                    others go on (exit status 1 if any was bad)\n"
    "  -f FILE           also read the gpus and clusters of FILE (may be repeated)\n"
    "  -I DIR            look for FILE's imports in DIR too\n"
    "  -v, --verbose     add a third column: calibrated, extrapolated or uncalibrated\n"
    "  -h, --help        this text\n";

typedef struct OpOptions {
  CliArgs a; /* -I, and the query KIND ARGS... from the command line */
  const char *gpu, *cluster;
  RtDtype dtype;
  bool batch, verbose;
  const char **files; /* -f */
  int nfiles;
} OpOptions;

enum { OPT_GPU, OPT_CLUSTER, OPT_DTYPE, OPT_FILE, OPT_BATCH, OPT_VERBOSE };

static const CliOption op_options[] = {
    {"--gpu", OPT_GPU, CLI_NEXT},     {"--cluster", OPT_CLUSTER, CLI_NEXT},
    {"--dtype", OPT_DTYPE, CLI_NEXT}, {"-f", OPT_FILE, CLI_NEXT},
    {"--batch", OPT_BATCH, 0},        {"-v", OPT_VERBOSE, 0},
    {"--verbose", OPT_VERBOSE, 0},    {NULL, 0, 0},
};

static int op_option(void *ctx, int id, const char *value) {
  OpOptions *o = ctx;
  switch (id) {
  case OPT_GPU: o->gpu = value; break;
  case OPT_CLUSTER: o->cluster = value; break;
  case OPT_DTYPE: {
    int dt = rt_dtype_lookup(value);
    if (dt < 0) return cli_usage_error("op", "unknown dtype `%s` (fp32, tf32, fp16, bf16, fp8, mxfp8, nvfp4)", value);
    o->dtype = (RtDtype)dt;
    break;
  }
  case OPT_FILE: o->files[o->nfiles++] = value; break;
  case OPT_BATCH: o->batch = true; break;
  case OPT_VERBOSE: o->verbose = true; break;
  }
  return -1;
}

/* The options, then the query: the first argument that is not an option (a number such as
 * -5 is not) and all after it.  Returns -1 to go on, else the exit status. */
static int op_parse(const CliCommand *c, int argc, char **argv, OpOptions *o) {
  o->dtype = RT_FP16;
  o->files = xcalloc((size_t)argc + 1, sizeof *o->files);
  CliSpec spec = {c, CLI_INCLUDE | CLI_OPERANDS_LAST, op_options, NULL, op_option, NULL, o};
  int rc = cli_parse(&spec, argc, argv, &o->a);
  if (rc >= 0) return rc;
  if (!o->gpu && !o->cluster) return cli_usage_error("op", "%s", "name a --gpu or a --cluster");
  if (o->batch && o->a.nargs)
    return cli_usage_error("op", "%s", "--batch reads its queries from standard input, not the command line");
  if (!o->batch && !o->a.nargs) return cli_usage_error("op", "%s", "no query: give KIND ARGS..., or --batch");
  return -1;
}

static const QueryKind *find_kind(const char *name) {
  for (int i = 0; i < NKINDS; i++)
    if (!strcmp(kinds[i].name, name)) return &kinds[i];
  return NULL;
}

static const char *flag_word(unsigned flags) {
  return flags & RT_EXTRAPOLATED ? "extrapolated" : flags & RT_CALIBRATED ? "calibrated" : "uncalibrated";
}

typedef struct OpCtx {
  const OpOptions *o;
  const RtGpu *gpu;
  const RtCluster *cluster;
  bool noted_uncalibrated;
  int line; /* --batch: the query's line of standard input; 0 without */
} OpCtx;

/* A bad query: its message on standard error, `llmp op: error: ...`, or in a batch
 * `<stdin>:LINE: error: ...` with `error` as the query's line of output.  Returns false. */
static bool query_error(const OpCtx *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool query_error(const OpCtx *x, const char *fmt, ...) {
  va_list ap;
  if (x->line) {
    puts("error");
    fflush(stdout);
    fprintf(stderr, "<stdin>:%d: error: ", x->line);
  } else {
    fputs("llmp op: error: ", stderr);
  }
  va_start(ap, fmt);
  vfprintf(stderr, fmt, ap);
  va_end(ap);
  fputc('\n', stderr);
  return false;
}

/* Runs one query; prints its result line, or reports why it is bad and returns false. */
static bool run_query(OpCtx *x, int n, const char **words) {
  const QueryKind *k = find_kind(words[0]);
  if (!k) return query_error(x, "unknown kind `%s` (see llmp op --help)", words[0]);
  if (n - 1 > k->nargs || n - 1 < k->nargs - k->optional) {
    if (k->optional)
      return query_error(x, "%s takes %d to %d arguments: %s %s", k->name, k->nargs - k->optional, k->nargs, k->name,
                         k->args);
    return query_error(x, "%s takes %d argument%s: %s %s", k->name, k->nargs, k->nargs == 1 ? "" : "s", k->name,
                       k->args);
  }
  double a[MAX_ARGS];
  for (int i = n - 1; i < k->nargs; i++) a[i] = 1; /* optional arguments left out */
  for (int i = 0; i < n - 1; i++) {
    char *end;
    errno = 0;
    a[i] = strtod(words[i + 1], &end);
    if (*end || end == words[i + 1] || errno || !isfinite(a[i]) || a[i] < 0)
      return query_error(x, "`%s` is not a size (a non-negative number) for %s", words[i + 1], k->name);
  }
  if (k->need == NEED_GPU && !x->gpu) return query_error(x, "%s is an operator: it needs --gpu", k->name);
  if (k->need == NEED_CLUSTER && !x->cluster) return query_error(x, "%s is a collective: it needs --cluster", k->name);
  if (k->need == NEED_CLUSTER && (a[1] != floor(a[1]) || a[2] != floor(a[2]) || a[1] > 1e6 || a[2] > 1e6))
    return query_error(x, "%s", "NODES and GPUS_PER_NODE are whole numbers up to 1000000");
  RtCost c =
      k->need == NEED_GPU ? k->gpu_fn(x->gpu, x->o->dtype, a) : k->cluster_fn(x->cluster, a[0], (int)a[1], (int)a[2]);
  if (c.flags & RT_BAD_ARGS || !isfinite(c.fwd) || !isfinite(c.bwd))
    return query_error(x, "%s cannot be evaluated for these arguments (out of range for the %s)", k->name,
                       k->need == NEED_GPU ? "gpu" : "cluster");
  if (!(c.flags & RT_CALIBRATED) && !x->noted_uncalibrated && !x->o->verbose) {
    fprintf(stderr, "llmp op: note: `%s` has no calibration table for %s: datasheet model only\n",
            k->need == NEED_GPU ? x->gpu->name : x->cluster->name, k->name);
    x->noted_uncalibrated = true;
  }
  printf("%.3f %.3f%s%s\n", c.fwd * 1e6, c.bwd * 1e6, x->o->verbose ? " " : "",
         x->o->verbose ? flag_word(c.flags) : "");
  return true;
}

/* --batch: one query per line of standard input, one output line per query line. */
static int run_batch(OpCtx *x) {
  char line[4096];
  int bad = 0;
  while (fgets(line, sizeof line, stdin)) {
    size_t l = strlen(line);
    x->line++;
    if (l == sizeof line - 1 && line[l - 1] != '\n') {
      int ch;
      while ((ch = getchar()) != EOF && ch != '\n') {}
      bad += !query_error(x, "query longer than %zu characters", sizeof line - 2);
      continue;
    }
    const char *words[MAX_ARGS + 2];
    int n = 0;
    for (char *w = strtok(line, " \t\r\n"); w; w = strtok(NULL, " \t\r\n"))
      if (n < MAX_ARGS + 2) words[n++] = w;
    if (n == 0) {
      bad += !query_error(x, "%s", "empty query");
      continue;
    }
    bad += !run_query(x, n, words);
    fflush(stdout);
  }
  return bad ? 1 : 0;
}

/* The peak field g lacks to run dt, or NULL, and why it needs it: a quantized format only
 * where the gpu declares its rate (the runtime would run it at fp16's, with the format's
 * bytes: faster than fp16, which no gpu without it is); mxfp8's block scales also need the
 * tensor cores of a gpu with an fp4 rate (the rule of `llmp check`, sema.c's dtype_needs). */
static const char *dtype_lacks(const RtGpu *g, RtDtype dt, const char **why) {
  *why = dt == RT_NVFP4 ? "declares its fp4 rate" : "declares its fp8 rate";
  if ((dt == RT_FP8 || dt == RT_MXFP8) && !(g->peak[RT_FP8] > 0)) return "peak_fp8";
  if (dt == RT_MXFP8) *why = "has block-scaled tensor cores, which it declares by its fp4 rate (Blackwell, CDNA 4)";
  if ((dt == RT_MXFP8 || dt == RT_NVFP4) && !(g->peak[RT_NVFP4] > 0)) return "peak_fp4";
  return NULL;
}

int cli_op(int argc, char **argv, const CliCommand *c) {
  OpOptions o = {0};
  int rc = op_parse(c, argc, argv, &o);
  if (rc < 0) {
    HwSession hs;
    SemaOptions so = {o.a.incdirs, o.a.nincdirs, NULL};
    HwSet *h = hw_session_open(&hs, "<llmp op>", &so, o.files, o.nfiles);
    OpCtx x = {&o, NULL, NULL, false, 0};
    rc = 1;
    if (h) {
      x.gpu = o.gpu ? hw_gpu(h, o.gpu) : NULL;
      x.cluster = o.cluster ? hw_cluster(h, o.cluster) : NULL;
      const char *why, *lacks = x.gpu ? dtype_lacks(x.gpu, o.dtype, &why) : NULL;
      if (lacks)
        fprintf(stderr, "llmp op: error: gpu `%s` has no `%s`: --dtype %s runs only on a gpu that %s\n", x.gpu->name,
                lacks, rt_dtype_name(o.dtype), why);
      else if ((!o.gpu || x.gpu) && (!o.cluster || x.cluster))
        rc = o.batch ? run_batch(&x) : !run_query(&x, o.a.nargs, o.a.args);
    }
    hw_session_close(&hs);
  }
  cli_args_free(&o.a);
  free(o.files);
  return rc;
}
