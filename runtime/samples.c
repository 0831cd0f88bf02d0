/* samples.c - reading measured operator samples: CSV files in the paper's raw-configuration
 * form or in the kernels' own argument form, mapped to kernel arguments.
 *
 * The paper's columns (mp, b, h, l, dim, ...) describe a GPT layer, not a shape; the mapping
 * below is shared/data/README.md's table, one row per operator file.  optimizer_fp16.csv is
 * not read: its rows carry a fixed ~9 ms that the per-stage optimizer files do not (another
 * harness), the paper fits no model to it, and pooled into the one `adam` table it would
 * spoil the stage files' fit. */
#include <ctype.h>
#include <dirent.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "llmp_fit.h"
#include "ops.h"

/* The raw columns a row can carry, by name; missing ones read as NAN. */
enum { C_MP, C_B, C_H, C_L, C_DIM, C_ENC, C_PARAMS, C_HIDSZ, C_F, C_B_DUR, C_DUR, NRAW };
static const char *const raw_names[NRAW] = {"mp", "b", "h", "l", "dim", "encoders", "params",
                                            "hidden_size", "F_dur(us)", "B_dur(us)", "dur(us)"};

/* GPT-2's vocabulary padded to a multiple of 128*mp, per tensor-parallel rank. */
static double vocab_shard(double mp) { return ceil(50257 / (128 * mp)) * 128; }

/* Parameters of one GPT-NeoX layer per tensor-parallel rank: QKV (d x 3d/mp + bias), output
 * projection (d/mp x d + bias d), MLP (d x 4d/mp + bias, 4d/mp x d + bias d), two layernorms
 * (4d): 12 d^2/mp + 7 d/mp + 6 d. */
static double layer_params(double d, double mp) { return 12 * d * d / mp + 7 * d / mp + 6 * d; }

typedef struct PaperOp {
  const char *name;
  RtOp op;
  int (*map)(const double *r, double *a);
} PaperOp;

#define R(c) r[C_##c]
static int m_lin1(const double *r, double *a) {
  a[0] = R(B) * R(L), a[1] = R(DIM), a[2] = 3 * R(DIM) / R(MP), a[3] = 1;
  return 0;
}
static int m_lin2(const double *r, double *a) {
  a[0] = R(B) * R(L), a[1] = R(DIM) / R(MP), a[2] = R(DIM), a[3] = 0;
  return 0;
}
static int m_lin3(const double *r, double *a) {
  a[0] = R(B) * R(L), a[1] = R(DIM), a[2] = 4 * R(DIM) / R(MP), a[3] = 0;
  return 0;
}
static int m_lin4(const double *r, double *a) {
  a[0] = R(B) * R(L), a[1] = 4 * R(DIM) / R(MP), a[2] = R(DIM), a[3] = 0;
  return 0;
}
static int m_linf(const double *r, double *a) {
  a[0] = R(B) * R(L), a[1] = R(DIM), a[2] = vocab_shard(R(MP)), a[3] = 0;
  return 0;
}
static int m_baddbmm(const double *r, double *a) {
  a[0] = R(B) * R(H) / R(MP), a[1] = R(L), a[2] = R(DIM) / R(H), a[3] = R(L);
  return 0;
}
static int m_bmm(const double *r, double *a) {
  a[0] = R(B) * R(H) / R(MP), a[1] = R(L), a[2] = R(L), a[3] = R(DIM) / R(H);
  return 0;
}
static int m_scores(const double *r, double *a) {   /* (b, h/mp, l, l) as rows x cols */
  a[0] = R(B) * R(H) / R(MP) * R(L), a[1] = R(L);
  return 0;
}
static int m_flash(const double *r, double *a) {
  a[0] = R(B), a[1] = R(L), a[2] = a[3] = R(H) / R(MP), a[4] = R(DIM) / R(H);
  return 0;
}
static int m_norm(const double *r, double *a) {
  a[0] = R(B) * R(L), a[1] = R(DIM);
  return 0;
}
static int m_gelu(const double *r, double *a) {
  a[0] = R(L) * R(B) * 4 * R(DIM) / R(MP);
  return 0;
}
static int m_add(const double *r, double *a) {
  a[0] = R(B) * R(L) * R(DIM);
  return 0;
}
static int m_rope(const double *r, double *a) {
  a[0] = R(L) * R(B), a[1] = R(H) / R(MP), a[2] = R(DIM) / R(H);
  return 0;
}
static int m_embed(const double *r, double *a) {
  a[0] = R(B) * R(L), a[1] = vocab_shard(R(MP)), a[2] = R(DIM);
  return 0;
}
static int m_xent(const double *r, double *a) {
  a[0] = R(B) * R(L), a[1] = vocab_shard(R(MP));
  return 0;
}
static int m_first(const double *r, double *a) {   /* layers + the embedding shard */
  a[0] = R(ENC) * layer_params(R(DIM), R(MP)) + vocab_shard(R(MP)) * R(DIM);
  return 0;
}
static int m_middle(const double *r, double *a) {
  a[0] = R(ENC) * layer_params(R(DIM), R(MP));
  return 0;
}
static int m_last(const double *r, double *a) {    /* layers + final norm + LM head shard */
  a[0] = R(ENC) * layer_params(R(DIM), R(MP)) + 2 * R(DIM) + vocab_shard(R(MP)) * R(DIM);
  return 0;
}
#undef R

static const PaperOp paper_ops[] = {
    {"linear1", RT_OP_LINEAR, m_lin1},
    {"linear2", RT_OP_LINEAR, m_lin2},
    {"linear3", RT_OP_LINEAR, m_lin3},
    {"linear4", RT_OP_LINEAR, m_lin4},
    {"linear_final", RT_OP_LINEAR, m_linf},
    {"baddbmm", RT_OP_BMM, m_baddbmm},
    {"bmm", RT_OP_BMM, m_bmm},
    {"ScaledUpperTriangMaskedSoftmax", RT_OP_MASKED_SOFTMAX, m_scores},
    {"softmax", RT_OP_SOFTMAX, m_scores},
    {"fillmask", RT_OP_MASKED_FILL, m_scores},
    {"flash_atten", RT_OP_FLASH, m_flash},
    {"layernorm", RT_OP_LAYERNORM, m_norm},
    {"RMSlayernorm", RT_OP_RMSNORM, m_norm},
    {"gelu", RT_OP_GELU, m_gelu},
    {"res_add", RT_OP_ADD, m_add},
    {"RoPE", RT_OP_ROPE, m_rope},
    {"embedding", RT_OP_EMBEDDING, m_embed},
    {"parallel_cross_entropy_128", RT_OP_CROSS_ENTROPY, m_xent},
    {"firstStage_optimizer", RT_OP_ADAM, m_first},
    {"middleStage_optimizer", RT_OP_ADAM, m_middle},
    {"lastStage_optimizer", RT_OP_ADAM, m_last},
};

/* The kernel-form files: NAME_DTYPE.csv whose NAME is one of these and whose columns are the
 * op's arguments by these names. ORDER ops.h argument vectors. */
static const struct {
  const char *name;
  RtOp op;
  const char *cols[RT_OP_MAX_ARGS];
} kernel_forms[] = {
    {"linear", RT_OP_LINEAR, {"m", "k", "n", "bias"}},
    {"bmm", RT_OP_BMM, {"batch", "m", "k", "n"}},
    {"softmax", RT_OP_SOFTMAX, {"rows", "cols"}},
    {"masked_softmax", RT_OP_MASKED_SOFTMAX, {"rows", "cols"}},
    {"masked_fill", RT_OP_MASKED_FILL, {"rows", "cols"}},
    {"flash_attention", RT_OP_FLASH, {"b", "l", "heads", "kv_heads", "head_dim"}},
    {"flash_attention_full", RT_OP_FLASH_FULL, {"b", "l", "heads", "kv_heads", "head_dim"}},
    {"layernorm", RT_OP_LAYERNORM, {"tokens", "hidden"}},
    {"rmsnorm", RT_OP_RMSNORM, {"tokens", "hidden"}},
    {"gelu", RT_OP_GELU, {"elements"}},
    {"swiglu", RT_OP_SWIGLU, {"elements"}},
    {"add", RT_OP_ADD, {"elements"}},
    {"rope", RT_OP_ROPE, {"tokens", "heads", "head_dim"}},
    {"embedding", RT_OP_EMBEDDING, {"tokens", "rows", "hidden"}},
    {"cross_entropy", RT_OP_CROSS_ENTROPY, {"tokens", "vocab"}},
    {"adam", RT_OP_ADAM, {"params"}},
};

enum { MAX_COLS = 16 };

/* Splits a CSV line (no quoting: sample files hold numbers) into at most MAX_COLS fields. */
static int split(char *line, char **f) {
  int n = 0;
  line[strcspn(line, "\r\n")] = '\0';
  for (char *p = line;; p++) {
    if (n == MAX_COLS) return -1;
    f[n++] = p;
    p = strchr(p, ',');
    if (!p) break;
    *p = '\0';
  }
  return n;
}

static int col_of(char **hdr, int nh, const char *name) {
  for (int i = 0; i < nh; i++) {
    const char *h = hdr[i];
    while (isspace((unsigned char)*h)) h++;
    if (strcmp(h, name) == 0) return i;
  }
  return -1;
}

/* Reads one file whose name (without _DTYPE.csv) is stem. */
static int load_csv(RtSampleSet *set, const char *path, const char *stem, RtDtype dt, FILE *err) {
  const PaperOp *po = NULL;
  int kf = -1;
  for (size_t i = 0; i < sizeof paper_ops / sizeof paper_ops[0]; i++)
    if (strcmp(stem, paper_ops[i].name) == 0) po = &paper_ops[i];
  for (size_t i = 0; i < sizeof kernel_forms / sizeof kernel_forms[0]; i++)
    if (strcmp(stem, kernel_forms[i].name) == 0) kf = (int)i;
  if (!po && kf < 0) return 0;   /* not a sample file we know: skip (paper-regressors.csv) */
  FILE *f = fopen(path, "r");
  if (!f) {
    fprintf(err, "%s:0: cannot open: %s\n", path, strerror(errno));
    return -1;
  }
  char *line = NULL;
  size_t cap = 0;
  char *hdr[MAX_COLS], *fld[MAX_COLS];
  int nh = 0, lineno = 1, rc = 0;
  char *hdrbuf = NULL;
  if (getline(&line, &cap, f) < 0 || (hdrbuf = strdup(line)) == NULL || (nh = split(hdrbuf, hdr)) < 1) {
    fprintf(err, "%s:1: no header line\n", path);
    rc = -1;
  }
  /* A kernel-form header names the op's arguments; otherwise it is the paper's form. */
  int argcol[RT_OP_MAX_ARGS], rawcol[NRAW];
  int kform = 0;
  if (rc == 0 && kf >= 0) {
    kform = 1;
    for (int i = 0; i < RT_OP_MAX_ARGS && kernel_forms[kf].cols[i]; i++)
      if ((argcol[i] = col_of(hdr, nh, kernel_forms[kf].cols[i])) < 0) kform = 0;
    if (!kform && !po) {
      fprintf(err, "%s:1: kernel-form sample file needs the columns of kernel %s\n", path, stem);
      rc = -1;
    }
  }
  for (int i = 0; i < NRAW; i++) rawcol[i] = rc == 0 ? col_of(hdr, nh, raw_names[i]) : -1;
  if (rc == 0 && rawcol[C_F] < 0 && rawcol[C_DUR] < 0 && col_of(hdr, nh, "dur") < 0) {
    fprintf(err, "%s:1: no time column (F_dur(us), dur(us) or dur)\n", path);
    rc = -1;
  }
  int fcol = rawcol[C_F] >= 0 ? rawcol[C_F] : rawcol[C_DUR] >= 0 ? rawcol[C_DUR] : col_of(hdr, nh, "dur");
  if (rc == 0 && set->nfiles == RT_FIT_MAX_FILES) {
    fprintf(err, "%s:0: more than %d sample files\n", path, RT_FIT_MAX_FILES);
    rc = -1;
  }
  int fi = set->nfiles;
  if (rc == 0) {
    snprintf(set->file[fi], sizeof set->file[fi], "%s", stem);
    snprintf(set->path[fi], sizeof set->path[fi], "%.*s", (int)sizeof set->path[fi] - 1, path);
    set->nfiles++;
  }
  while (rc == 0 && getline(&line, &cap, f) >= 0) {
    lineno++;
    int n = split(line, fld);
    if (n == 1 && fld[0][0] == '\0') continue;
    if (n != nh) {
      fprintf(err, "%s:%d: %d fields, the header has %d\n", path, lineno, n, nh);
      rc = -1;
      break;
    }
    double v[MAX_COLS];
    for (int i = 0; i < n; i++) {
      char *end;
      v[i] = strtod(fld[i], &end);
      if (end == fld[i] || *end != '\0') v[i] = NAN;
    }
    RtSample s = {.file = fi, .dtype = dt, .bwd = -1};
    double r[NRAW];
    for (int i = 0; i < NRAW; i++) r[i] = rawcol[i] >= 0 ? v[rawcol[i]] : NAN;
    if (kform) {
      s.op = kernel_forms[kf].op;
      for (int i = 0; i < RT_OP_MAX_ARGS && kernel_forms[kf].cols[i]; i++) s.a[i] = v[argcol[i]];
    } else {
      s.op = po->op;
      po->map(r, s.a);
    }
    s.hidden = isfinite(r[C_DIM]) ? r[C_DIM] : isfinite(r[C_HIDSZ]) ? r[C_HIDSZ] : 0;
    s.fwd = v[fcol] * 1e-6;
    if (rawcol[C_B_DUR] >= 0) s.bwd = v[rawcol[C_B_DUR]] * 1e-6;
    int ok = isfinite(s.fwd) && s.fwd > 0 && !(rawcol[C_B_DUR] >= 0 && !(s.bwd > 0));
    for (int i = 0; ok && i < rt_op_nargs((RtOp)s.op); i++) ok = isfinite(s.a[i]);
    if (!ok) {
      fprintf(err, "%s:%d: a field is not a number, or a time is not positive\n", path, lineno);
      rc = -1;
      break;
    }
    if (set->n % 1024 == 0) {
      RtSample *ns = realloc(set->s, (size_t)(set->n + 1024) * sizeof *ns);
      if (!ns) {
        fprintf(err, "%s:%d: out of memory\n", path, lineno);
        rc = -1;
        break;
      }
      set->s = ns;
    }
    set->s[set->n++] = s;
  }
  free(hdrbuf);
  free(line);
  fclose(f);
  return rc;
}

static int cmp_name(const void *a, const void *b) {
  return strcmp(*(char *const *)a, *(char *const *)b);
}

int rt_samples_load(const char *dir, RtSampleSet *set, FILE *err) {
  char sub[1024];
  memset(set, 0, sizeof *set);
  if (!err) err = stderr;
  snprintf(sub, sizeof sub, "%s/operator", dir);
  DIR *d = opendir(sub);
  if (d) dir = sub;
  else d = opendir(dir);
  if (!d) {
    fprintf(err, "%s:0: cannot open folder: %s\n", dir, strerror(errno));
    return -1;
  }
  char *names[256];
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL && n < 256;)
    if (strlen(e->d_name) > 4 && strcmp(e->d_name + strlen(e->d_name) - 4, ".csv") == 0)
      names[n++] = strdup(e->d_name);
  closedir(d);
  qsort(names, (size_t)n, sizeof names[0], cmp_name);
  int rc = 0;
  for (int i = 0; i < n; i++) {
    char stem[256], path[1536];
    snprintf(stem, sizeof stem, "%s", names[i] ? names[i] : "");
    stem[strlen(stem) - 4] = '\0';                      /* drop .csv */
    char *us = strrchr(stem, '_');
    int dt = us ? rt_dtype_lookup(us + 1) : -1;
    if (rc == 0 && dt >= 0) {
      *us = '\0';
      snprintf(path, sizeof path, "%s/%s", dir, names[i]);
      rc = load_csv(set, path, stem, (RtDtype)dt, err);
    }
    free(names[i]);
  }
  if (rc != 0) rt_samples_free(set);
  return rc;
}

void rt_samples_free(RtSampleSet *set) {
  free(set->s);
  set->s = NULL;
  set->n = 0;
}
