/* samples.c - reading measured operator samples: CSV files in the paper's raw-configuration
 * form or in the kernels' own argument form, mapped to kernel arguments.
 *
 * The paper's columns (mp, b, h, l, dim, ...) describe a GPT layer, not a shape; the mapping
 * below is shared/data/README.md's table, one row per operator file.  optimizer_fp16.csv is
 * not read: its rows carry a fixed ~9 ms that the per-stage optimizer files do not (another
 * harness), the paper fits no model to it, and pooled into the one `adam` table it would
 * spoil the stage files' fit. */
#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "llmp_fit.h"
#include "ops.h"
#include "sorted.h"

/* The raw columns a row can carry, by name; missing ones read as NAN. */
enum { C_MP, C_B, C_H, C_L, C_DIM, C_ENC, C_PARAMS, C_HIDSZ, C_F, C_B_DUR, C_DUR, NRAW };
static const char *const raw_names[NRAW] = {"mp",     "b",           "h",         "l",         "dim",    "encoders",
                                            "params", "hidden_size", "F_dur(us)", "B_dur(us)", "dur(us)"};

/* GPT-2's vocabulary padded to a multiple of 128*mp, per tensor-parallel rank. */
static double vocab_shard(double mp) { return ceil(50257 / (128 * mp)) * 128; }

/* Parameters of one GPT-NeoX layer per tensor-parallel rank: QKV (d x 3d/mp + bias), output
 * projection (d/mp x d + bias d), MLP (d x 4d/mp + bias, 4d/mp x d + bias d), two layernorms
 * (4d): 12 d^2/mp + 7 d/mp + 6 d. */
static double layer_params(double d, double mp) { return 12 * d * d / mp + 7 * d / mp + 6 * d; }
/* ... held in 12 parameter tensors: QKV, projection and the two MLP linears, weight and bias
 * each, and the two layernorms' weight and bias. */
enum { LAYER_TENSORS = 12 };

typedef struct PaperOp {
  const char *name;
  RtOp op;
  int (*map)(const double *r, double *a);
  unsigned need; /* the raw columns map() reads: bits 1 << C_... */
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
static int m_scores(const double *r, double *a) { /* (b, h/mp, l, l) as rows x cols */
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
/* The stage optimizers: (params, tensors) of the stage's layers and blocks. */
static int m_first(const double *r, double *a) { /* layers + the embedding shard (1 tensor) */
  a[0] = R(ENC) * layer_params(R(DIM), R(MP)) + vocab_shard(R(MP)) * R(DIM);
  a[1] = R(ENC) * LAYER_TENSORS + 1;
  return 0;
}
static int m_middle(const double *r, double *a) {
  a[0] = R(ENC) * layer_params(R(DIM), R(MP));
  a[1] = R(ENC) * LAYER_TENSORS;
  return 0;
}
static int m_last(const double *r, double *a) { /* layers + final norm (2) + LM head shard (1) */
  a[0] = R(ENC) * layer_params(R(DIM), R(MP)) + 2 * R(DIM) + vocab_shard(R(MP)) * R(DIM);
  a[1] = R(ENC) * LAYER_TENSORS + 3;
  return 0;
}
#undef R

#define N(c) (1u << C_##c)
#define LAYER (N(MP) | N(B) | N(L) | N(DIM))
#define SCORES (N(MP) | N(B) | N(H) | N(L))
#define STAGE (N(MP) | N(DIM) | N(ENC))
static const PaperOp paper_ops[] = {
    {"linear1", RT_OP_LINEAR, m_lin1, LAYER},
    {"linear2", RT_OP_LINEAR, m_lin2, LAYER},
    {"linear3", RT_OP_LINEAR, m_lin3, LAYER},
    {"linear4", RT_OP_LINEAR, m_lin4, LAYER},
    {"linear_final", RT_OP_LINEAR, m_linf, LAYER},
    {"baddbmm", RT_OP_BMM, m_baddbmm, SCORES | N(DIM)},
    {"bmm", RT_OP_BMM, m_bmm, SCORES | N(DIM)},
    {"ScaledUpperTriangMaskedSoftmax", RT_OP_MASKED_SOFTMAX, m_scores, SCORES},
    {"softmax", RT_OP_SOFTMAX, m_scores, SCORES},
    {"fillmask", RT_OP_MASKED_FILL, m_scores, SCORES},
    {"flash_atten", RT_OP_FLASH, m_flash, SCORES | N(DIM)},
    {"layernorm", RT_OP_LAYERNORM, m_norm, N(B) | N(L) | N(DIM)},
    {"RMSlayernorm", RT_OP_RMSNORM, m_norm, N(B) | N(L) | N(DIM)},
    {"gelu", RT_OP_GELU, m_gelu, LAYER},
    {"res_add", RT_OP_ADD, m_add, N(B) | N(L) | N(DIM)},
    {"RoPE", RT_OP_ROPE, m_rope, SCORES | N(DIM)},
    {"embedding", RT_OP_EMBEDDING, m_embed, LAYER},
    {"parallel_cross_entropy_128", RT_OP_CROSS_ENTROPY, m_xent, N(MP) | N(B) | N(L)},
    {"firstStage_optimizer", RT_OP_ADAM, m_first, STAGE},
    {"middleStage_optimizer", RT_OP_ADAM, m_middle, STAGE},
    {"lastStage_optimizer", RT_OP_ADAM, m_last, STAGE},
};
#undef N
#undef LAYER
#undef SCORES
#undef STAGE

/* The kernel-form files: NAME_DTYPE.csv whose NAME is one of these and whose columns are the
 * op's arguments by these names. ORDER ops.h argument vectors.  The columns past `required`
 * may be missing; they read as 1: adam's `tensors`, so that files written before the column
 * existed (hw/probe's step over one tensor) read as what they measured. */
typedef struct KernelForm {
  const char *name;
  RtOp op;
  const char *cols[RT_OP_MAX_ARGS];
  int required; /* 0: all of them */
} KernelForm;
static const KernelForm kernel_forms[] = {
    {"linear", RT_OP_LINEAR, {"m", "k", "n", "bias"}, 0},
    {"bmm", RT_OP_BMM, {"batch", "m", "k", "n"}, 0},
    {"softmax", RT_OP_SOFTMAX, {"rows", "cols"}, 0},
    {"masked_softmax", RT_OP_MASKED_SOFTMAX, {"rows", "cols"}, 0},
    {"masked_fill", RT_OP_MASKED_FILL, {"rows", "cols"}, 0},
    {"flash_attention", RT_OP_FLASH, {"b", "l", "heads", "kv_heads", "head_dim"}, 0},
    {"flash_attention_full", RT_OP_FLASH_FULL, {"b", "l", "heads", "kv_heads", "head_dim"}, 0},
    {"layernorm", RT_OP_LAYERNORM, {"tokens", "hidden"}, 0},
    {"rmsnorm", RT_OP_RMSNORM, {"tokens", "hidden"}, 0},
    {"gelu", RT_OP_GELU, {"elements"}, 0},
    {"swiglu", RT_OP_SWIGLU, {"elements"}, 0},
    {"add", RT_OP_ADD, {"elements"}, 0},
    {"rope", RT_OP_ROPE, {"tokens", "heads", "head_dim"}, 0},
    {"embedding", RT_OP_EMBEDDING, {"tokens", "rows", "hidden"}, 0},
    {"cross_entropy", RT_OP_CROSS_ENTROPY, {"tokens", "vocab"}, 0},
    {"adam", RT_OP_ADAM, {"params", "tensors"}, 1},
};

/* --- the CSV reader ------------------------------------------------------------------ */

int rt_csv_fail(RtCsv *c, const char *fmt, ...) {
  int n = snprintf(c->err, sizeof c->err, "%s:%d: ", c->path, c->line);
  if (n < 0 || (size_t)n >= sizeof c->err) return -1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(c->err + n, sizeof c->err - (size_t)n, fmt, ap);
  va_end(ap);
  return -1;
}

static char *trim(char *s) {
  while (*s == ' ' || *s == '\t') s++;
  size_t n = strlen(s);
  while (n > 0 && (s[n - 1] == ' ' || s[n - 1] == '\t')) s[--n] = '\0';
  return s;
}

/* `# KEY: value` (KEY case-insensitive) into out, if out is still empty. */
static void meta_line(const char *p, const char *key, char *out, size_t len) {
  size_t k = strlen(key);
  while (*p == '#' || *p == ' ' || *p == '\t') p++;
  if (out[0] || strncasecmp(p, key, k) != 0) return;
  p += k;
  while (*p == ' ' || *p == '\t') p++;
  if (*p++ != ':') return;
  while (*p == ' ' || *p == '\t') p++;
  snprintf(out, len, "%s", p);
  for (size_t n = strlen(out); n > 0 && (out[n - 1] == ' ' || out[n - 1] == '\t');) out[--n] = '\0';
}

/* The next line that is not blank or a comment, into c->buf without its line end (LF, CRLF
 * or CR): 1, 0 at the end of the file, -1 on error.  Comments feed c->meta. */
static int next_line(RtCsv *c) {
  for (;;) {
    size_t n = 0;
    int ch = EOF;
    while ((ch = getc(c->f)) != EOF && ch != '\n' && ch != '\r') {
      if (ch == '\0') {
        c->line++;
        return rt_csv_fail(c, "a NUL byte: not a text file");
      }
      if (n == RT_CSV_MAX_LINE) {
        c->line++;
        return rt_csv_fail(c, "line longer than %d bytes", RT_CSV_MAX_LINE);
      }
      c->buf[n++] = (char)ch;
    }
    if (ch == EOF && n == 0) {
      if (ferror(c->f)) return rt_csv_fail(c, "read error: %s", strerror(errno));
      return 0;
    }
    if (ch == '\r' && (ch = getc(c->f)) != '\n' && ch != EOF) ungetc(ch, c->f);
    c->line++;
    c->buf[n] = '\0';
    char *p = c->buf;
    if (c->line == 1 && strncmp(p, "\xEF\xBB\xBF", 3) == 0) p += 3; /* UTF-8 byte-order mark */
    while (*p == ' ' || *p == '\t') p++;
    if (*p == '\0') continue;
    if (*p == '#') {
      meta_line(p, "gpu", c->meta.gpu, sizeof c->meta.gpu);
      meta_line(p, "date", c->meta.date, sizeof c->meta.date);
      continue;
    }
    if (p != c->buf) memmove(c->buf, p, strlen(p) + 1);
    return 1;
  }
}

/* Splits c->buf at commas into out[] (trimmed); the number of fields, which may exceed
 * RT_CSV_MAX_COLS (only that many are stored). */
static int split(char *line, char **out) {
  int n = 0;
  for (char *p = line;;) {
    char *comma = strchr(p, ',');
    if (comma) *comma = '\0';
    if (n < RT_CSV_MAX_COLS) out[n] = trim(p);
    n++;
    if (!comma) return n;
    p = comma + 1;
  }
}

int rt_csv_open(RtCsv *c, const char *path) {
  memset(c, 0, sizeof *c);
  c->path = path;
  if (!(c->f = fopen(path, "r"))) return rt_csv_fail(c, "cannot open: %s", strerror(errno));
  if (!(c->buf = malloc(RT_CSV_MAX_LINE + 1))) return rt_csv_fail(c, "out of memory");
  int rc = next_line(c);
  if (rc < 0) return -1;
  if (rc == 0) {
    if (c->line == 0) return c->line = 1, rt_csv_fail(c, "empty file: no header line");
    return rt_csv_fail(c, "no header line: the file holds only comments and blank lines");
  }
  if (!(c->hdr = strdup(c->buf))) return rt_csv_fail(c, "out of memory");
  int n = split(c->hdr, c->col);
  if (n > RT_CSV_MAX_COLS) return rt_csv_fail(c, "%d columns in the header; at most %d", n, RT_CSV_MAX_COLS);
  c->ncols = n;
  for (int i = 0; i < c->ncols; i++)
    for (int j = 0; j < i; j++)
      if (c->col[i][0] && strcmp(c->col[i], c->col[j]) == 0)
        return rt_csv_fail(c, "column `%s` twice in the header", c->col[i]);
  return 0;
}

int rt_csv_column(const RtCsv *c, const char *name) {
  for (int i = 0; i < c->ncols; i++)
    if (strcmp(c->col[i], name) == 0) return i;
  return -1;
}

int rt_csv_row(RtCsv *c) {
  int rc = next_line(c);
  if (rc == 0 && c->rows == 0) return rt_csv_fail(c, "no rows under the header");
  if (rc <= 0) return rc;
  int n = split(c->buf, c->field);
  if (n != c->ncols) return rt_csv_fail(c, "%d field%s, the header has %d", n, n == 1 ? "" : "s", c->ncols);
  c->rows++;
  return 1;
}

int rt_csv_number(RtCsv *c, int col, double *v) {
  const char *s = c->field[col];
  char *end;
  *v = strtod(s, &end);
  if (end == s || *end != '\0')
    return rt_csv_fail(c, "column `%s`: `%.40s%s` is not a number", c->col[col], s, strlen(s) > 40 ? "..." : "");
  return 0;
}

void rt_csv_close(RtCsv *c) {
  if (c->f) fclose(c->f);
  free(c->buf), free(c->hdr);
  c->f = NULL, c->buf = c->hdr = NULL;
}

/* --- operator sample files ------------------------------------------------------------- */

/* Sizes are integers up to 2^53, where doubles hold every integer. */
static int is_size(double v) { return v >= 1 && v <= 0x1p53 && v == floor(v); }

/* A time column's value in seconds: microseconds > 0 and finite. */
static int time_of(RtCsv *c, int col, double *sec) {
  double us;
  if (rt_csv_number(c, col, &us) != 0) return -1;
  if (!(us > 0) || !isfinite(us))
    return rt_csv_fail(c, "column `%s`: time `%s` is not a positive number of microseconds", c->col[col],
                       c->field[col]);
  *sec = us * 1e-6;
  return 0;
}

/* A column the fit does not need but reads if it can (the model's width): NAN if not a number. */
static double lenient(const RtCsv *c, int col) {
  char *end;
  double v = strtod(c->field[col], &end);
  return end != c->field[col] && *end == '\0' ? v : NAN;
}

static void list_names(char *out, size_t len, const char *const *names, int n) {
  out[0] = '\0';
  for (int i = 0; i < n; i++) {
    size_t used = strlen(out);
    snprintf(out + used, len - used, "%s%s", i ? ", " : "", names[i]);
  }
}

/* How one file's columns are read: its form and where each column is. */
typedef struct CsvForm {
  const PaperOp *po; /* the paper's file of this name, or NULL */
  int kf;            /* its kernel_forms[] entry, or -1 */
  int kform;         /* read in kernel form (else the paper's) */
  int nargs, argcol[RT_OP_MAX_ARGS], rawcol[NRAW];
  int fcol, bcol; /* the forward and backward time columns (bcol -1: none) */
} CsvForm;

/* The form: a kernel-form header names the op's arguments (all of them; naming one is
 * enough to be read as that form), a paper-form header the raw columns.  0, or -1 with the
 * message in c. */
static int csv_form(RtCsv *c, const char *stem, CsvForm *f) {
  char names[256];
  if (f->kf >= 0) {
    const KernelForm *k = &kernel_forms[f->kf];
    int have = 0;
    while (f->nargs < RT_OP_MAX_ARGS && k->cols[f->nargs]) f->nargs++;
    for (int i = 0; i < f->nargs; i++) have += (f->argcol[i] = rt_csv_column(c, k->cols[i])) >= 0;
    f->kform = have > 0 || !f->po;
    list_names(names, sizeof names, k->cols, f->nargs);
    int required = k->required ? k->required : f->nargs;
    for (int i = 0; f->kform && i < required; i++)
      if (f->argcol[i] < 0)
        return rt_csv_fail(c, "no column `%s`: a %s file in kernel form has the columns %s", k->cols[i], stem, names);
  }
  for (int i = 0; i < NRAW; i++) f->rawcol[i] = rt_csv_column(c, raw_names[i]);
  if (!f->kform) {
    const char *need[NRAW];
    int nn = 0;
    for (int i = 0; i < NRAW; i++)
      if (f->po->need & (1u << i)) need[nn++] = raw_names[i];
    list_names(names, sizeof names, need, nn);
    for (int i = 0; i < NRAW; i++)
      if ((f->po->need & (1u << i)) && f->rawcol[i] < 0)
        return rt_csv_fail(c, "no column `%s`: the paper's %s file has the columns %s", raw_names[i], stem, names);
  }
  const int *raw = f->rawcol;
  f->fcol = raw[C_F] >= 0 ? raw[C_F] : raw[C_DUR] >= 0 ? raw[C_DUR] : rt_csv_column(c, "dur");
  f->bcol = raw[C_B_DUR];
  if (f->fcol < 0) return rt_csv_fail(c, "no time column: F_dur(us) (or dur(us), dur)");
  return 0;
}

/* A kernel-form row's arguments into s->a, checked (an optional column the file does not
 * have reads 1).  0, or -1 with the message in c. */
static int kernel_row(RtCsv *c, const CsvForm *f, RtSample *s) {
  s->op = kernel_forms[f->kf].op;
  for (int i = 0; i < f->nargs; i++) {
    int col = f->argcol[i];
    if (col < 0) {
      s->a[i] = 1;
      continue;
    }
    if (rt_csv_number(c, col, &s->a[i]) != 0) return -1;
    int bias = s->op == RT_OP_LINEAR && i == 3;
    if (bias && s->a[i] != 0 && s->a[i] != 1) return rt_csv_fail(c, "column `bias`: `%s` is not 0 or 1", c->field[col]);
    if (!bias && !is_size(s->a[i]))
      return rt_csv_fail(c, "column `%s`: `%s` is not a size (an integer from 1 to 2^53)", c->col[col], c->field[col]);
  }
  if (s->op == RT_OP_ADAM && s->a[1] > s->a[0]) /* a tensor holds a parameter or more */
    return rt_csv_fail(c, "column `tensors`: %s tensors cannot hold %s parameters", c->field[f->argcol[1]],
                       c->field[f->argcol[0]]);
  return 0;
}

/* A paper-form row: the raw columns its op needs into r, mapped to the arguments s->a.  0, or
 * -1 with the message in c. */
static int paper_row(RtCsv *c, const CsvForm *f, const char *stem, RtSample *s, double *r) {
  s->op = f->po->op;
  for (int i = 0; i < NRAW; i++) {
    if (!(f->po->need & (1u << i))) continue;
    if (rt_csv_number(c, f->rawcol[i], &r[i]) != 0) return -1;
    if (!is_size(r[i]))
      return rt_csv_fail(c, "column `%s`: `%s` is not a positive integer (up to 2^53)", raw_names[i],
                         c->field[f->rawcol[i]]);
  }
  f->po->map(r, s->a);
  for (int i = 0; i < (s->op == RT_OP_LINEAR ? 3 : rt_op_nargs((RtOp)s->op)); i++) {
    if (!(s->a[i] >= 1)) /* as ops.c's op_args_ok() wants them */
      return rt_csv_fail(c, "the row maps to a %s shape with a size below 1 (more mp than heads?)", stem);
    if (!is_size(s->a[i]))
      return rt_csv_fail(c,
                         "the row maps to a %s shape with a size that is not an integer up to 2^53 (a column "
                         "that does not divide by mp or h?)",
                         stem);
  }
  return 0;
}

/* Reads one file whose name (without _DTYPE.csv) is stem. */
static int load_csv(RtSampleSet *set, const char *path, const char *stem, RtDtype dt, FILE *err) {
  CsvForm f = {.kf = -1};
  for (size_t i = 0; i < sizeof paper_ops / sizeof paper_ops[0]; i++)
    if (strcmp(stem, paper_ops[i].name) == 0) f.po = &paper_ops[i];
  for (size_t i = 0; i < sizeof kernel_forms / sizeof kernel_forms[0]; i++)
    if (strcmp(stem, kernel_forms[i].name) == 0) f.kf = (int)i;
  if (!f.po && f.kf < 0) return 0; /* not a sample file we know: skip (paper-regressors.csv) */
  RtCsv c;
  int rc = rt_csv_open(&c, path);
  if (rc == 0) rc = csv_form(&c, stem, &f);
  if (rc == 0 && set->nfiles == RT_FIT_MAX_FILES) rc = rt_csv_fail(&c, "more than %d sample files", RT_FIT_MAX_FILES);
  int fi = set->nfiles;
  if (rc == 0) {
    snprintf(set->file[fi], sizeof set->file[fi], "%s", stem);
    snprintf(set->path[fi], sizeof set->path[fi], "%.*s", (int)sizeof set->path[fi] - 1, path);
    set->nfiles++;
  }
  while (rc == 0 && (rc = rt_csv_row(&c)) == 1) {
    rc = 0;
    RtSample s = {.file = fi, .line = c.line, .dtype = dt, .bwd = -1};
    double r[NRAW];
    for (int i = 0; i < NRAW; i++) r[i] = NAN;
    if (time_of(&c, f.fcol, &s.fwd) != 0 || (f.bcol >= 0 && time_of(&c, f.bcol, &s.bwd) != 0) ||
        (f.kform ? kernel_row(&c, &f, &s) : paper_row(&c, &f, stem, &s, r)) != 0) {
      rc = -1;
      break;
    }
    if (f.rawcol[C_DIM] >= 0 && !isfinite(r[C_DIM])) r[C_DIM] = lenient(&c, f.rawcol[C_DIM]);
    if (f.rawcol[C_HIDSZ] >= 0) r[C_HIDSZ] = lenient(&c, f.rawcol[C_HIDSZ]);
    s.hidden = isfinite(r[C_DIM]) ? r[C_DIM] : isfinite(r[C_HIDSZ]) ? r[C_HIDSZ] : 0;
    if (!mem_grow((void **)&set->s, &set->cap, (size_t)set->n + 1, sizeof *set->s)) {
      rc = rt_csv_fail(&c, "out of memory");
      break;
    }
    set->s[set->n++] = s;
  }
  if (rc == 0)
    set->meta[fi] = c.meta;
  else
    fprintf(err, "%s\n", c.err);
  rt_csv_close(&c);
  return rc == 0 ? 0 : -1;
}

int rt_samples_load(const char *dir, RtSampleSet *set, FILE *err) {
  char sub[1024];
  memset(set, 0, sizeof *set);
  if (!err) err = stderr;
  snprintf(sub, sizeof sub, "%s/operator", dir);
  char **names;
  int n = dir_list(sub, ".csv", &names);
  if (n == -1)
    n = dir_list(dir, ".csv", &names);
  else
    dir = sub;
  if (n == -1) fprintf(err, "%s:0: cannot open folder: %s\n", dir, strerror(errno));
  if (n == -2) fprintf(err, "%s:0: out of memory\n", dir);
  if (n < 0) return -1;
  int rc = 0;
  for (int i = 0; i < n; i++) {
    char stem[256], path[1536];
    snprintf(stem, sizeof stem, "%s", names[i]);
    stem[strlen(stem) - 4] = '\0'; /* drop .csv */
    char *us = strrchr(stem, '_');
    int dt = us ? rt_dtype_lookup(us + 1) : -1;
    if (rc == 0 && dt >= 0) {
      *us = '\0';
      snprintf(path, sizeof path, "%s/%s", dir, names[i]);
      rc = load_csv(set, path, stem, (RtDtype)dt, err);
    }
  }
  dir_list_free(names, n);
  if (rc != 0) rt_samples_free(set);
  return rc;
}

void rt_samples_free(RtSampleSet *set) {
  free(set->s);
  set->s = NULL;
  set->n = 0;
  set->cap = 0;
}
