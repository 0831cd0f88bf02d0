/* test_report.c - unit tests of compiler/report/report.c and trace.c: the table (a plan that fits, one that
 * does not, which parts show), JSON Lines (parsed by a small strict JSON reader below:
 * nulls for NaN and for the times of a plan that does not fit, escapes, round-trip
 * numbers), CSV (field counts, RFC 4180 quoting), the unit formatters at their
 * boundaries, the fit message, and the Chrome trace (valid JSON, metadata, operators
 * tiling their parent event, sends, dp and optimizer events, write errors). */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "report/report.h"

#include "support.h"

/* --- capturing a FILE ------------------------------------------------------------------ */

static char *print(const Report *r, ReportFormat f) {
  Mem m;
  mem_open(&m);
  report_print(m.f, r, f);
  mem_text(&m);
  return m.p;
}

/* --- a strict JSON reader (RFC 8259), enough to check structure ------------------------- */

typedef enum { JNULL, JBOOL, JNUM, JSTR, JARR, JOBJ } JType;

typedef struct JVal {
  JType type;
  bool b;
  double num;
  char *str;   /* JSTR: the decoded string (\uXXXX kept as UTF-8 for BMP) */
  int n;       /* JARR, JOBJ: members */
  char **keys; /* JOBJ */
  struct JVal **items;
} JVal;

typedef struct JP {
  const char *s;
  bool err;
} JP;

static void jp_ws(JP *p) {
  while (*p->s == ' ' || *p->s == '\t' || *p->s == '\n' || *p->s == '\r') p->s++;
}

static JVal *jv_new(JType t) {
  JVal *v = calloc(1, sizeof *v);
  assert_non_null(v);
  v->type = t;
  return v;
}

static void jv_free(JVal *v) {
  if (!v) return;
  for (int i = 0; i < v->n; i++) {
    jv_free(v->items[i]);
    if (v->keys) free(v->keys[i]);
  }
  free(v->items);
  free(v->keys);
  free(v->str);
  free(v);
}

static void put_utf8(char **o, unsigned cp) {
  if (cp < 0x80) {
    *(*o)++ = (char)cp;
  } else if (cp < 0x800) {
    *(*o)++ = (char)(0xc0 | cp >> 6);
    *(*o)++ = (char)(0x80 | (cp & 0x3f));
  } else {
    *(*o)++ = (char)(0xe0 | cp >> 12);
    *(*o)++ = (char)(0x80 | (cp >> 6 & 0x3f));
    *(*o)++ = (char)(0x80 | (cp & 0x3f));
  }
}

static char *jp_string(JP *p) {
  if (*p->s != '"') {
    p->err = true;
    return NULL;
  }
  p->s++;
  char *out = malloc(strlen(p->s) * 3 + 1), *o = out;
  assert_non_null(out);
  for (;;) {
    unsigned char c = (unsigned char)*p->s;
    if (c == '"') break;
    if (c < 0x20) { /* unescaped control character, or the end of the text */
      p->err = true;
      free(out);
      return NULL;
    }
    p->s++;
    if (c != '\\') {
      *o++ = (char)c;
      continue;
    }
    char e = *p->s++;
    switch (e) {
    case '"': *o++ = '"'; break;
    case '\\': *o++ = '\\'; break;
    case '/': *o++ = '/'; break;
    case 'b': *o++ = '\b'; break;
    case 'f': *o++ = '\f'; break;
    case 'n': *o++ = '\n'; break;
    case 'r': *o++ = '\r'; break;
    case 't': *o++ = '\t'; break;
    case 'u': {
      unsigned cp = 0;
      for (int i = 0; i < 4; i++) {
        char h = *p->s++;
        int d = h >= '0' && h <= '9'   ? h - '0'
                : h >= 'a' && h <= 'f' ? h - 'a' + 10
                : h >= 'A' && h <= 'F' ? h - 'A' + 10
                                       : -1;
        if (d < 0) {
          p->err = true;
          free(out);
          return NULL;
        }
        cp = cp * 16 + (unsigned)d;
      }
      put_utf8(&o, cp);
      break;
    }
    default:
      p->err = true;
      free(out);
      return NULL;
    }
  }
  p->s++;
  *o = '\0';
  return out;
}

static JVal *jp_value(JP *p);

static void jv_push(JVal *v, char *key, JVal *item) {
  v->items = realloc(v->items, (size_t)(v->n + 1) * sizeof *v->items);
  assert_non_null(v->items);
  if (v->type == JOBJ) {
    v->keys = realloc(v->keys, (size_t)(v->n + 1) * sizeof *v->keys);
    assert_non_null(v->keys);
    v->keys[v->n] = key;
  }
  v->items[v->n++] = item;
}

static JVal *jp_container(JP *p, bool obj) {
  JVal *v = jv_new(obj ? JOBJ : JARR);
  p->s++;
  jp_ws(p);
  if (*p->s == (obj ? '}' : ']')) {
    p->s++;
    return v;
  }
  for (;;) {
    char *key = NULL;
    jp_ws(p);
    if (obj) {
      key = jp_string(p);
      jp_ws(p);
      if (p->err || *p->s != ':') {
        free(key);
        p->err = true;
        return v;
      }
      p->s++;
    }
    JVal *item = jp_value(p);
    jv_push(v, key, item);
    if (p->err) return v;
    jp_ws(p);
    if (*p->s == ',') {
      p->s++;
      continue;
    }
    if (*p->s == (obj ? '}' : ']')) {
      p->s++;
      return v;
    }
    p->err = true;
    return v;
  }
}

static JVal *jp_value(JP *p) {
  jp_ws(p);
  const char *s = p->s;
  if (*s == '{' || *s == '[') return jp_container(p, *s == '{');
  if (*s == '"') {
    JVal *v = jv_new(JSTR);
    v->str = jp_string(p);
    return v;
  }
  if (strncmp(s, "null", 4) == 0) return p->s += 4, jv_new(JNULL);
  if (strncmp(s, "true", 4) == 0 || strncmp(s, "false", 5) == 0) {
    JVal *v = jv_new(JBOOL);
    v->b = *s == 't';
    p->s += v->b ? 4 : 5;
    return v;
  }
  /* number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
  const char *q = s;
  if (*q == '-') q++;
  if (*q == '0')
    q++;
  else if (*q >= '1' && *q <= '9')
    while (*q >= '0' && *q <= '9') q++;
  else {
    p->err = true;
    return jv_new(JNULL);
  }
  if (*q == '.') {
    q++;
    if (!(*q >= '0' && *q <= '9')) p->err = true;
    while (*q >= '0' && *q <= '9') q++;
  }
  if (*q == 'e' || *q == 'E') {
    q++;
    if (*q == '+' || *q == '-') q++;
    if (!(*q >= '0' && *q <= '9')) p->err = true;
    while (*q >= '0' && *q <= '9') q++;
  }
  JVal *v = jv_new(JNUM);
  v->num = strtod(s, NULL);
  p->s = q;
  return v;
}

/* Parses all of text as one JSON value; fails the test if it is not valid. */
static JVal *parse_json(const char *text) {
  JP p = {text, false};
  JVal *v = jp_value(&p);
  jp_ws(&p);
  if (p.err || *p.s) fail_msg("invalid JSON near offset %d:\n%s", (int)(p.s - text), text);
  return v;
}

static JVal *jget(const JVal *v, const char *key) {
  if (!v || v->type != JOBJ) return NULL;
  for (int i = 0; i < v->n; i++)
    if (strcmp(v->keys[i], key) == 0) return v->items[i];
  return NULL;
}

static double jnum(const JVal *v, const char *key) {
  JVal *x = jget(v, key);
  if (!x || x->type != JNUM) fail_msg("`%s` is not a number", key);
  return x->num;
}

static const char *jstr(const JVal *v, const char *key) {
  JVal *x = jget(v, key);
  return x && x->type == JSTR ? x->str : NULL;
}

/* --- CSV -------------------------------------------------------------------------------- */

enum { CSV_FIELD = 1024 }; /* bytes of one field, unquoted (a note is a sentence) */

/* Splits one CSV record (RFC 4180) into at most max fields, unquoted; returns the count. */
static int csv_split(const char *line, char fields[][CSV_FIELD], int max) {
  int n = 0;
  const char *p = line;
  for (;;) {
    char buf[CSV_FIELD];
    size_t k = 0;
    if (*p == '"') {
      p++;
      for (;;) {
        assert_true(*p != '\0');
        if (*p == '"' && p[1] == '"') {
          buf[k++] = '"';
          p += 2;
        } else if (*p == '"') {
          p++;
          break;
        } else {
          buf[k++] = *p++;
        }
        assert_true(k < sizeof buf);
      }
    } else {
      while (*p && *p != ',' && *p != '\n') {
        assert_true(*p != '"');
        buf[k++] = *p++;
        assert_true(k < sizeof buf);
      }
    }
    buf[k] = '\0';
    assert_true(n < max);
    strcpy(fields[n++], buf);
    if (*p == ',') {
      p++;
      continue;
    }
    assert_true(*p == '\n' || *p == '\0');
    return n;
  }
}

static const char *csv_field(char names[][CSV_FIELD], char values[][CSV_FIELD], int n, const char *name) {
  for (int i = 0; i < n; i++)
    if (strcmp(names[i], name) == 0) return values[i];
  fail_msg("no CSV column %s", name);
  return NULL;
}

/* --- a report ---------------------------------------------------------------------------- */

static const double GiB = 1024.0 * 1024 * 1024;

static Report sample(void) {
  Report r;
  memset(&r, 0, sizeof r);
  r.scenario = "neox20b";
  r.file = "examples/quickstart.llmp";
  r.model = "gpt_neox_20b";
  r.cluster = "perlmutter";
  r.gpu = "a100_sxm4_80gb";
  r.gpus = 128;
  r.tp = 4, r.pp = 4, r.dp = 8, r.cp = 1, r.ep = 1, r.virtual_stages = 1;
  r.micro_batch = 4, r.global_batch = 512, r.micro_batches = 16;
  r.zero = 1;
  r.sequence_parallel = false;
  r.dtype = "fp16", r.schedule = "1f1b", r.recompute = "full";
  r.iteration = 12.5;
  r.part[RP_FORWARD] = 4;
  r.part[RP_BACKWARD] = 6;
  r.part[RP_TP_COMM] = 1;
  r.part[RP_BUBBLE] = 1.5;
  r.tokens_per_s = 512 * 2048 / 12.5;
  r.model_flops = 2.4e17;
  r.hardware_flops = 3.1e17;
  r.tflops_per_gpu = 2.4e17 / 12.5 / 128; /* 150 TFLOP/s */
  r.mfu = r.tflops_per_gpu / 312e12;
  r.memory[RM_WEIGHTS] = 10 * GiB;
  r.memory[RM_GRADIENTS] = 5 * GiB;
  r.memory[RM_OPTIMIZER] = 7.5 * GiB;
  r.memory[RM_ACTIVATIONS] = 38.7 * GiB;
  r.memory[RM_BUFFERS] = 0;
  r.peak = 61.2 * GiB;
  r.capacity = 80 * GiB;
  r.peak_stage = 0;
  r.fits = true;
  r.has_measured_iteration = true;
  r.measured_iteration = 12;
  r.error_pct = 100 * (12.5 - 12) / 12;
  r.calls = 140;
  r.calibrated_calls = 120;
  return r;
}

static Report not_fitting(void) {
  Report r = sample();
  r.memory[RM_ACTIVATIONS] = 61.2 * GiB;
  r.memory[RM_WEIGHTS] = 10 * GiB;
  r.memory[RM_OPTIMIZER] = 15 * GiB;
  r.memory[RM_GRADIENTS] = 5 * GiB;
  r.memory[RM_BUFFERS] = 1.9 * GiB;
  r.peak = 93.1 * GiB;
  r.fits = false;
  r.peak_stage = 3;
  return r;
}

/* The line of text that starts with `start`, copied into buf. */
static const char *line_starting(const char *text, const char *start, char *buf, size_t n) {
  for (const char *p = text; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL) {
    if (strncmp(p, start, strlen(start)) == 0) {
      size_t k = strcspn(p, "\n");
      if (k >= n) k = n - 1;
      memcpy(buf, p, k);
      buf[k] = '\0';
      return buf;
    }
  }
  fail_msg("no line starting `%s` in:\n%s", start, text);
  return NULL;
}

/* --- table ------------------------------------------------------------------------------- */

TEST(table_for_a_plan_that_fits) {
  Report r = sample();
  char *t = print(&r, REPORT_TABLE);
  char line[256];
  assert_true(strncmp(t, "scenario neox20b (examples/quickstart.llmp)\n", 44) == 0);
  assert_contains(t, "\n  model gpt_neox_20b on perlmutter (128 x a100_sxm4_80gb)\n");
  assert_contains(t, "\n  plan tp=4 pp=4 dp=8 cp=1 ep=1\n");
  assert_contains(t, "\n  micro_batch=4 global_batch=512: 16 micro-batches per iteration\n");
  assert_contains(t, "\n  dtype=fp16 schedule=1f1b recompute=full zero=1 sequence_parallel=false\n");
  assert_string_equal(line_starting(t, "  iteration ", line, sizeof line), "  iteration                     12.5 s");
  assert_string_equal(line_starting(t, "    forward ", line, sizeof line),
                      "    forward                        4 s   32.0 %");
  assert_string_equal(line_starting(t, "    TP communication ", line, sizeof line),
                      "    TP communication               1 s    8.0 %");
  assert_string_equal(line_starting(t, "    pipeline bubble ", line, sizeof line),
                      "    pipeline bubble              1.5 s   12.0 %");
  assert_not_contains(t, "recompute  "); /* parts that are 0 are left out */
  assert_not_contains(t, "optimizer step");
  assert_not_contains(t, "EP communication");
  assert_string_equal(line_starting(t, "  tokens/s", line, sizeof line), "  tokens/s                       83886");
  assert_string_equal(line_starting(t, "  model TFLOP/s", line, sizeof line), "  model TFLOP/s per GPU          150.0");
  assert_contains(t, "\n  MFU                           48.1 %\n");
  assert_contains(t, "\n  memory per GPU\n");
  assert_string_equal(line_starting(t, "    activations", line, sizeof line),
                      "    activations               38.7 GiB   63.2 %");
  assert_contains(t, "\n    communication buffers          0 B    0.0 %\n");
  assert_contains(t, "\n  peak 61.2 GiB of 80 GiB (stage 0), fits\n");
  assert_contains(t, "\n  measured 12 s, error +4.2 %\n");
  assert_not_contains(t, "does not fit");
  /* the last line */
  size_t n = strlen(t);
  assert_true(n > 0 && t[n - 1] == '\n');
  assert_contains(t, "\n  kernels: 120 of 140 calls calibrated\n");
  assert_int_equal(strlen(strstr(t, "\n  kernels: ")), strlen("\n  kernels: 120 of 140 calls calibrated\n"));
  free(t);
}

TEST(table_always_shows_forward_backward_bubble) {
  Report r = sample();
  r.part[RP_BUBBLE] = 0;
  r.part[RP_BACKWARD] = 0;
  r.part[RP_OPTIMIZER] = 0.25;
  r.part[RP_DP_COMM] = 0.0005;
  r.virtual_stages = 2;
  r.sequence_parallel = true;
  r.has_measured_tflops = true;
  r.measured_tflops = 150.04e12;
  char *t = print(&r, REPORT_TABLE);
  assert_contains(t, "\n    backward                       0 s    0.0 %\n");
  assert_contains(t, "\n    pipeline bubble                0 s    0.0 %\n");
  assert_contains(t, "\n    exposed DP communication    500 us    0.0 %\n");
  assert_contains(t, "\n    optimizer step              250 ms    2.0 %\n");
  assert_contains(t, "\n  plan tp=4 pp=4 dp=8 cp=1 ep=1 virtual_stages=2\n");
  assert_contains(t, "sequence_parallel=true\n");
  assert_contains(t, "\n  measured 150.0 TFLOP/s per GPU\n");
  free(t);
}

TEST(table_for_a_plan_that_does_not_fit) {
  Report r = not_fitting();
  char *t = print(&r, REPORT_TABLE);
  /* The message is the first line after the title. */
  const char *second = strchr(t, '\n') + 1;
  assert_true(strncmp(second,
                      "  does not fit: needs 93.1 GiB of 80 GiB: activations 61.2 GiB, optimizer state 15 GiB, "
                      "weights 10 GiB, gradients 5 GiB, communication buffers 1.9 GiB\n",
                      strlen("  does not fit: needs 93.1 GiB of 80 GiB: activations 61.2 GiB, optimizer state 15 GiB, "
                             "weights 10 GiB, gradients 5 GiB, communication buffers 1.9 GiB\n")) == 0);
  /* Never a time for a plan that does not fit. */
  assert_not_contains(t, "iteration  ");
  assert_not_contains(t, "tokens/s");
  assert_not_contains(t, "TFLOP/s");
  assert_not_contains(t, "MFU");
  assert_not_contains(t, "forward");
  assert_not_contains(t, "error");
  /* The breakdown of memory is there. */
  assert_contains(t, "\n  memory per GPU\n");
  assert_contains(t, "\n    activations               61.2 GiB   65.7 %\n");
  assert_contains(t, "\n  peak 93.1 GiB of 80 GiB (stage 3), does not fit by 13.1 GiB\n");
  assert_contains(t, "\n  no change of tp, pp, recompute, zero or micro_batch (one or two at a time) fits\n");
  assert_contains(t, "\n  measured 12 s (no prediction: the plan does not fit)\n");
  assert_contains(t, "\n  kernels: 120 of 140 calls calibrated\n");
  free(t);
}

/* The figures a planner asks first: parameters per GPU and per stage, tokens per iteration,
 * --tokens' days, GPU-hours and energy at the TDP, the uncalibrated calls by name. */
TEST(table_planner_figures) {
  Report r = sample();
  r.params_total = r.params_active = 20.55e9;
  r.params_per_gpu = 1.324e9, r.params_first_stage = 5.292e9, r.params_last_stage = 5.293e9;
  r.tokens_per_iteration = 512 * 2048;
  r.train_tokens = 15e12, r.tdp = 400;
  snprintf(r.uncalibrated, sizeof r.uncalibrated, "%s", "rope (rot), p2p (pipeline send)");
  r.uncalibrated_more = 3;
  char *t = print(&r, REPORT_TABLE);
  assert_contains(t, "\n  parameters 20.55 B, 1.324 B per GPU; first stage 5.292 B, last stage 5.293 B\n");
  assert_contains(t, "\n  micro_batch=4 global_batch=512: 16 micro-batches per iteration, 1.049 M tokens\n");
  /* 15e12 tokens at 83886.08 tokens/s: 2069.6 days, 6.358 M GPU-hours, 2543.1 MWh at 128 x 400 W */
  assert_contains(t, "\n  to train on 15.00 T tokens: 2069.6 days, 6.358 M GPU-hours, 2543.1 MWh at the GPUs' TDP (400 W each)\n");
  assert_contains(t, "\n  uncalibrated (datasheet or network tiers alone): rope (rot), p2p (pipeline send), 3 more\n");
  free(t);
  r.tdp = 0, r.pp = 1;
  t = print(&r, REPORT_TABLE);
  assert_contains(t, "\n  parameters 20.55 B, 1.324 B per GPU\n");
  assert_contains(t, "GPU-hours; no energy: gpu a100_sxm4_80gb declares no `tdp`\n");
  free(t);
}

/* A plan that does not fit lists the changes that do (lower_fit_changes fills them), in JSON
 * too, with no training time. */
TEST(fit_changes_table_and_json) {
  Report r = not_fitting();
  r.train_tokens = 1e12, r.tdp = 400;
  r.nfix = 2;
  r.fix[0] = (ReportFix){"zero=2", 13.25, 71 * GiB};
  r.fix[1] = (ReportFix){"recompute=selective zero=2", 14, 70.5 * GiB};
  char *t = print(&r, REPORT_TABLE);
  assert_contains(t, "\n  changes that fit, fastest first:\n"
                     "    zero=2                        13.25 s, peak 71 GiB\n"
                     "    recompute=selective zero=2       14 s, peak 70.5 GiB\n");
  assert_not_contains(t, "to train on");
  free(t);
  t = print(&r, REPORT_JSON);
  JVal *v = parse_json(t), *fix = jget(v, "fit_changes");
  assert_true(fix && fix->type == JARR && fix->n == 2);
  assert_string_equal(jget(fix->items[1], "change")->str, "recompute=selective zero=2");
  assert_true(jnum(fix->items[0], "iteration_s") == 13.25 && jnum(fix->items[0], "peak") == 71 * GiB);
  assert_true(jget(v, "train_days")->type == JNULL && jget(v, "train_energy_j")->type == JNULL);
  assert_true(jnum(v, "tdp_w") == 400);
  jv_free(v);
  free(t);
}

/* JSON lists the uncalibrated calls one string each. */
TEST(json_uncalibrated_calls) {
  Report r = sample();
  snprintf(r.uncalibrated, sizeof r.uncalibrated, "%s", "rope (rot), allreduce (dp gradients)");
  r.uncalibrated_more = 2;
  char *t = print(&r, REPORT_JSON);
  JVal *v = parse_json(t), *u = jget(v, "uncalibrated");
  assert_true(u && u->type == JARR && u->n == 2);
  assert_string_equal(u->items[0]->str, "rope (rot)");
  assert_string_equal(u->items[1]->str, "allreduce (dp gradients)");
  assert_true(jnum(v, "uncalibrated_more") == 2);
  jv_free(v);
  free(t);
}

/* The kernels line names the sustained figures that scaled the GPU's tensor-core rate: none for
 * a GPU without them, the bf16 one, and for an fp8 plan the fp8 one too; JSON has both (1 where
 * unset). */
TEST(kernels_line_names_sustained_figures) {
  Report r = sample();
  r.sustained = 1, r.sustained_fp8 = 1;
  char *t = print(&r, REPORT_TABLE);
  assert_contains(t, "\n  kernels: 120 of 140 calls calibrated\n");
  free(t);
  r.sustained = 0.615, r.sustained_fp8 = 0.575;
  t = print(&r, REPORT_TABLE);
  assert_contains(t, "\n  kernels: 120 of 140 calls calibrated; tensor-core rate x 0.615 (sustained_compute)\n");
  free(t);
  r.dtype = "fp8";
  t = print(&r, REPORT_TABLE);
  assert_contains(t, "\n  kernels: 120 of 140 calls calibrated; tensor-core rate x 0.615 (sustained_compute), "
                     "fp8 GEMMs x 0.575 (sustained_compute_fp8)\n");
  free(t);
  r.sustained = 1; /* an fp8 figure alone */
  t = print(&r, REPORT_TABLE);
  assert_contains(t, "\n  kernels: 120 of 140 calls calibrated; fp8 GEMMs x 0.575 (sustained_compute_fp8)\n");
  free(t);
  r.sustained = 0.615;
  t = print(&r, REPORT_JSON);
  JVal *v = parse_json(t);
  assert_true(jnum(v, "sustained_compute") == 0.615 && jnum(v, "sustained_compute_fp8") == 0.575);
  jv_free(v);
  free(t);
  r.sustained = r.sustained_fp8 = 0; /* not set: 1 */
  t = print(&r, REPORT_JSON);
  v = parse_json(t);
  assert_true(jnum(v, "sustained_compute") == 1 && jnum(v, "sustained_compute_fp8") == 1);
  jv_free(v);
  free(t);
}

TEST(null_names_and_empty_report) {
  Report r;
  memset(&r, 0, sizeof r);
  r.iteration = NAN;
  r.mfu = NAN;
  r.fits = true;
  char *t = print(&r, REPORT_TABLE);
  assert_true(strncmp(t, "scenario  ()\n", 13) == 0);
  assert_contains(t, "  iteration                        n/a\n");
  assert_contains(t, "  MFU                              n/a\n");
  free(t);
  t = print(&r, REPORT_JSON);
  JVal *v = parse_json(t);
  assert_int_equal(jget(v, "scenario")->type, JNULL);
  assert_int_equal(jget(jget(v, "plan"), "dtype")->type, JNULL);
  assert_int_equal(jget(v, "iteration_s")->type, JNULL);
  jv_free(v);
  free(t);
  t = print(&r, REPORT_CSV);
  static char f[80][CSV_FIELD];
  assert_int_equal(csv_split(t, f, 80), 57);
  free(t);
  r.fits = false;
  t = print(&r, REPORT_TABLE);
  assert_contains(t, "does not fit: needs 0 B of 0 B\n");
  free(t);
  report_print(NULL, &r, REPORT_TABLE); /* nothing happens */
  Mem m;
  mem_open(&m);
  report_print(m.f, NULL, REPORT_JSON);
  assert_string_equal(mem_text(&m), "");
  mem_free(&m);
}

/* --- JSON -------------------------------------------------------------------------------- */

TEST(json_for_a_plan_that_fits) {
  Report r = sample();
  char *t = print(&r, REPORT_JSON);
  size_t n = strlen(t);
  assert_true(n > 0 && t[n - 1] == '\n');
  assert_true(strchr(t, '\n') == t + n - 1); /* one line */
  JVal *v = parse_json(t);
  assert_int_equal(v->type, JOBJ);
  assert_string_equal(jstr(v, "scenario"), "neox20b");
  assert_string_equal(jstr(v, "file"), "examples/quickstart.llmp");
  assert_string_equal(jstr(v, "model"), "gpt_neox_20b");
  assert_string_equal(jstr(v, "cluster"), "perlmutter");
  assert_string_equal(jstr(v, "gpu"), "a100_sxm4_80gb");
  assert_true(jnum(v, "gpus") == 128);
  JVal *plan = jget(v, "plan");
  const char *ints[] = {"tp",  "pp", "dp", "cp", "ep", "virtual_stages", "micro_batch", "global_batch", "micro_batches",
                        "zero"};
  const double want[] = {4, 4, 8, 1, 1, 1, 4, 512, 16, 1};
  for (int i = 0; i < 10; i++) assert_true(jnum(plan, ints[i]) == want[i]);
  assert_int_equal(jget(plan, "sequence_parallel")->type, JBOOL);
  assert_string_equal(jstr(plan, "dtype"), "fp16");
  assert_string_equal(jstr(plan, "schedule"), "1f1b");
  assert_string_equal(jstr(plan, "recompute"), "full");
  assert_true(jnum(v, "iteration_s") == 12.5);
  JVal *bd = jget(v, "breakdown");
  assert_int_equal(bd->n, RP_N);
  assert_true(jnum(bd, "forward") == 4);
  assert_true(jnum(bd, "bubble") == 1.5);
  assert_true(jnum(bd, "optimizer") == 0);
  assert_true(jnum(v, "tokens_per_s") == r.tokens_per_s);
  assert_true(jnum(v, "model_flops") == 2.4e17);
  assert_true(jnum(v, "tflops_per_gpu") == r.tflops_per_gpu / 1e12);
  assert_true(jnum(v, "mfu") == r.mfu);
  JVal *mem = jget(v, "memory");
  assert_true(jnum(mem, "activations") == 38.7 * GiB);
  assert_true(jnum(mem, "buffers") == 0);
  assert_true(jnum(mem, "peak") == 61.2 * GiB);
  assert_true(jnum(mem, "capacity") == 80 * GiB);
  assert_true(jnum(v, "peak_stage") == 0);
  assert_true(jget(v, "fits")->type == JBOOL && jget(v, "fits")->b);
  assert_true(jnum(v, "measured_iteration_s") == 12);
  assert_true(jnum(v, "error_pct") == r.error_pct);
  assert_null(jget(v, "measured_tflops_per_gpu"));
  assert_true(jnum(v, "calls") == 140);
  assert_true(jnum(v, "calibrated_calls") == 120);
  assert_contains(t, "\"fits\":true");
  assert_contains(t, "\"iteration_s\":12.5,");
  jv_free(v);
  free(t);
}

TEST(json_for_a_plan_that_does_not_fit) {
  Report r = not_fitting();
  r.has_measured_tflops = true;
  r.measured_tflops = 150e12;
  char *t = print(&r, REPORT_JSON);
  JVal *v = parse_json(t);
  assert_contains(t, "\"fits\":false");
  assert_contains(t, "\"iteration_s\":null");
  assert_contains(t, "\"breakdown\":null");
  const char *nulls[] = {"iteration_s", "breakdown", "tokens_per_s", "tflops_per_gpu", "mfu", "error_pct"};
  for (int i = 0; i < 6; i++) {
    JVal *x = jget(v, nulls[i]);
    if (!x || x->type != JNULL) fail_msg("%s is not null in %s", nulls[i], t);
  }
  assert_true(jnum(v, "measured_iteration_s") == 12);
  assert_true(jnum(v, "measured_tflops_per_gpu") == 150);
  assert_true(jnum(jget(v, "memory"), "peak") == 93.1 * GiB);
  assert_true(jnum(v, "peak_stage") == 3);
  jv_free(v);
  free(t);
}

TEST(json_nan_and_infinity_are_null) {
  Report r = sample();
  r.tokens_per_s = NAN;
  r.capacity = INFINITY;
  r.part[RP_BUBBLE] = -INFINITY;
  r.error_pct = NAN;
  char *t = print(&r, REPORT_JSON);
  JVal *v = parse_json(t);
  assert_int_equal(jget(v, "tokens_per_s")->type, JNULL);
  assert_int_equal(jget(jget(v, "memory"), "capacity")->type, JNULL);
  assert_int_equal(jget(jget(v, "breakdown"), "bubble")->type, JNULL);
  assert_int_equal(jget(v, "error_pct")->type, JNULL);
  assert_not_contains(t, "nan");
  assert_not_contains(t, "inf");
  jv_free(v);
  free(t);
  t = print(&r, REPORT_CSV);
  assert_not_contains(t, "nan");
  assert_not_contains(t, "inf");
  free(t);
  t = print(&r, REPORT_TABLE);
  assert_contains(t, "  tokens/s                         n/a\n");
  free(t);
}

TEST(json_escapes_strings) {
  Report r = sample();
  r.scenario = "a \"quoted\" back\\slash\nnew\ttab\x01\x1f end";
  r.file = "caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80";      /* valid UTF-8 stays as it is */
  r.model = "bad \xff byte \xc3( \xed\xa0\x80 \xe0\x80\x80"; /* not UTF-8: U+FFFD */
  r.cluster = NULL;
  char *t = print(&r, REPORT_JSON);
  assert_contains(t, "\"scenario\":\"a \\\"quoted\\\" back\\\\slash\\nnew\\ttab\\u0001\\u001f end\"");
  assert_contains(t, "\"file\":\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
  assert_contains(t, "\"cluster\":null");
  JVal *v = parse_json(t);
  assert_string_equal(jstr(v, "scenario"), r.scenario);
  assert_string_equal(jstr(v, "model"), "bad \xef\xbf\xbd byte \xef\xbf\xbd( \xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd "
                                        "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");
  jv_free(v);
  free(t);
}

TEST(json_numbers_round_trip) {
  Report r = sample();
  r.iteration = 0.1;
  r.part[RP_FORWARD] = 1.0 / 3;
  r.peak = 65999925248.0;
  r.mfu = 0.4123456789012345;
  r.model_flops = 1e300;
  r.hardware_flops = 5e-324;
  char *t = print(&r, REPORT_JSON);
  assert_contains(t, "\"iteration_s\":0.1,");
  assert_contains(t, "\"peak\":65999925248,");
  JVal *v = parse_json(t);
  assert_true(jnum(jget(v, "breakdown"), "forward") == 1.0 / 3);
  assert_true(jnum(v, "mfu") == 0.4123456789012345);
  assert_true(jnum(v, "model_flops") == 1e300);
  assert_true(jnum(v, "hardware_flops") == 5e-324);
  jv_free(v);
  free(t);
}

/* --- CSV --------------------------------------------------------------------------------- */

TEST(csv_header_and_rows_agree) {
  Mem m;
  mem_open(&m);
  report_csv_header(m.f);
  Report r = sample();
  report_print(m.f, &r, REPORT_CSV);
  r = not_fitting();
  r.scenario = "with, comma";
  r.model = "say \"hi\"";
  r.cluster = NULL;
  report_print(m.f, &r, REPORT_CSV);
  const char *t = mem_text(&m);
  assert_true(strncmp(t,
                      "scenario,file,model,cluster,gpus,tp,pp,dp,cp,ep,virtual_stages,micro_batch,global_batch,"
                      "zero,sequence_parallel,cuda_graphs,dtype,schedule,recompute,iteration_s,forward_s,backward_s,",
                      strlen("scenario,file,model,cluster,gpus,tp,pp,dp,cp,ep,virtual_stages,micro_batch,global_batch,"
                             "zero,sequence_parallel,cuda_graphs,dtype,schedule,recompute,iteration_s,forward_s,"
                             "backward_s,")) ==
              0);
  assert_contains(t, ",optimizer_s,tokens_per_s,tflops_per_gpu,mfu,mem_weights_bytes,");
  assert_contains(
      t, ",mem_buffers_bytes,mem_reserved_bytes,peak_bytes,capacity_bytes,fits,measured_iteration_s,error_pct,"
         "parameters,active_parameters,parameters_first_stage,parameters_last_stage,parameters_per_gpu,"
         "tokens_per_iteration,train_tokens,train_days,train_gpu_hours,tdp_w,train_energy_j,notes\n");

  static char names[80][CSV_FIELD], row1[80][CSV_FIELD], row2[80][CSV_FIELD];
  const char *l1 = strchr(t, '\n') + 1, *l2 = strchr(l1, '\n') + 1;
  assert_string_equal(strchr(l2, '\n'), "\n"); /* three lines */
  int nh = csv_split(t, names, 80);
  assert_int_equal(nh, 20 + RP_N + 3 + RM_N + 5 + 12);
  assert_int_equal(csv_split(l1, row1, 80), nh);
  assert_int_equal(csv_split(l2, row2, 80), nh);

  assert_string_equal(csv_field(names, row1, nh, "scenario"), "neox20b");
  assert_string_equal(csv_field(names, row1, nh, "iteration_s"), "12.5");
  assert_string_equal(csv_field(names, row1, nh, "bubble_s"), "1.5");
  assert_string_equal(csv_field(names, row1, nh, "fits"), "true");
  assert_string_equal(csv_field(names, row1, nh, "sequence_parallel"), "false");
  assert_string_equal(csv_field(names, row1, nh, "cuda_graphs"), "false");
  assert_string_equal(csv_field(names, row1, nh, "capacity_bytes"), "85899345920");
  assert_string_equal(csv_field(names, row1, nh, "measured_iteration_s"), "12");
  assert_true(strtod(csv_field(names, row1, nh, "tflops_per_gpu"), NULL) == r.tflops_per_gpu / 1e12);

  assert_contains(l2, "\"with, comma\",examples/quickstart.llmp,\"say \"\"hi\"\"\",,128,");
  assert_string_equal(csv_field(names, row2, nh, "scenario"), "with, comma");
  assert_string_equal(csv_field(names, row2, nh, "model"), "say \"hi\"");
  assert_string_equal(csv_field(names, row2, nh, "cluster"), "");
  assert_string_equal(csv_field(names, row2, nh, "iteration_s"), ""); /* no time */
  assert_string_equal(csv_field(names, row2, nh, "forward_s"), "");
  assert_string_equal(csv_field(names, row2, nh, "mfu"), "");
  assert_string_equal(csv_field(names, row2, nh, "error_pct"), "");
  assert_string_equal(csv_field(names, row2, nh, "measured_iteration_s"), "12");
  assert_string_equal(csv_field(names, row2, nh, "fits"), "false");
  assert_true(strtod(csv_field(names, row2, nh, "peak_bytes"), NULL) == 93.1 * GiB);
  mem_free(&m);
}

/* The planner's figures in CSV: parameters and tokens always, --tokens' figures with it
 * (days and GPU-hours empty where the plan does not fit, energy where the gpu has no tdp). */
TEST(csv_planner_figures) {
  static char names[80][CSV_FIELD], row[80][CSV_FIELD];
  Mem m;
  mem_open(&m);
  report_csv_header(m.f);
  const char *t = mem_text(&m);
  int nh = csv_split(t, names, 80);
  Report r = sample();
  r.params_total = 20e9, r.params_active = 5e9, r.params_first_stage = 5.5e9, r.params_last_stage = 5.25e9;
  r.params_per_gpu = 1.5e9, r.tokens_per_iteration = 1048576;
  char *c = print(&r, REPORT_CSV);
  assert_int_equal(csv_split(c, row, 80), nh);
  assert_string_equal(csv_field(names, row, nh, "parameters"), "20000000000");
  assert_string_equal(csv_field(names, row, nh, "active_parameters"), "5000000000");
  assert_string_equal(csv_field(names, row, nh, "parameters_first_stage"), "5500000000");
  assert_string_equal(csv_field(names, row, nh, "parameters_last_stage"), "5250000000");
  assert_string_equal(csv_field(names, row, nh, "parameters_per_gpu"), "1500000000");
  assert_string_equal(csv_field(names, row, nh, "tokens_per_iteration"), "1048576");
  const char *train[] = {"train_tokens", "train_days", "train_gpu_hours", "tdp_w", "train_energy_j"};
  for (int i = 0; i < 5; i++) assert_string_equal(csv_field(names, row, nh, train[i]), ""); /* no --tokens */
  free(c);
  r.train_tokens = 1e12, r.tdp = 400;
  c = print(&r, REPORT_CSV);
  csv_split(c, row, 80);
  double s = 1e12 / r.tokens_per_s;
  assert_string_equal(csv_field(names, row, nh, "train_tokens"), "1000000000000");
  assert_true(strtod(csv_field(names, row, nh, "train_days"), NULL) == s / 86400);
  assert_true(strtod(csv_field(names, row, nh, "train_gpu_hours"), NULL) == s * 128 / 3600);
  assert_string_equal(csv_field(names, row, nh, "tdp_w"), "400");
  assert_true(strtod(csv_field(names, row, nh, "train_energy_j"), NULL) == s * 128 * 400);
  free(c);
  r.tdp = 0;
  c = print(&r, REPORT_CSV);
  csv_split(c, row, 80);
  assert_string_equal(csv_field(names, row, nh, "tdp_w"), "");
  assert_string_equal(csv_field(names, row, nh, "train_energy_j"), "");
  assert_string_not_equal(csv_field(names, row, nh, "train_days"), "");
  free(c);
  r = not_fitting();
  r.train_tokens = 1e12, r.tdp = 400;
  c = print(&r, REPORT_CSV);
  csv_split(c, row, 80);
  assert_string_equal(csv_field(names, row, nh, "train_tokens"), "1000000000000");
  assert_string_equal(csv_field(names, row, nh, "train_days"), "");
  assert_string_equal(csv_field(names, row, nh, "train_gpu_hours"), "");
  assert_string_equal(csv_field(names, row, nh, "train_energy_j"), "");
  free(c);
  mem_free(&m);
}

/* Notes (approximations that move the times): a line each at the end of the table, JSON's
 * `notes` array (empty without), CSV's `notes` joined by "; " (empty without). */
TEST(notes_in_table_json_and_csv) {
  static char names[80][CSV_FIELD], row[80][CSV_FIELD];
  Report r = sample();
  char *t = print(&r, REPORT_TABLE);
  assert_not_contains(t, "note:");
  free(t);
  t = print(&r, REPORT_JSON);
  assert_contains(t, ",\"notes\":[]}\n");
  free(t);
  snprintf(r.notes[0], sizeof r.notes[0], "%s", "`words` (reducescatter, 67 MB) may be overestimated by up to 66 %");
  snprintf(r.notes[1], sizeof r.notes[1], "%s", "a \"quoted\" second");
  r.nnotes = 2;
  t = print(&r, REPORT_TABLE);
  size_t n = strlen(t);
  const char *want = "\n  note: `words` (reducescatter, 67 MB) may be overestimated by up to 66 %\n"
                     "  note: a \"quoted\" second\n";
  assert_true(n > strlen(want) && strcmp(t + n - strlen(want), want) == 0); /* the last lines */
  free(t);
  t = print(&r, REPORT_JSON);
  JVal *v = parse_json(t);
  JVal *notes = jget(v, "notes");
  assert_int_equal(notes->type, JARR);
  assert_int_equal(notes->n, 2);
  assert_string_equal(notes->items[0]->str, r.notes[0]);
  assert_string_equal(notes->items[1]->str, r.notes[1]);
  jv_free(v);
  free(t);
  Mem m;
  mem_open(&m);
  report_csv_header(m.f);
  report_print(m.f, &r, REPORT_CSV);
  const char *csv = mem_text(&m);
  int nh = csv_split(csv, names, 80);
  assert_int_equal(csv_split(strchr(csv, '\n') + 1, row, 80), nh);
  assert_string_equal(csv_field(names, row, nh, "notes"),
                      "`words` (reducescatter, 67 MB) may be overestimated by up to 66 %; a \"quoted\" second");
  mem_free(&m);
}

/* --- units ------------------------------------------------------------------------------- */

TEST(time_units_at_their_boundaries) {
  char b[32];
  const struct {
    double s;
    const char *want;
  } cases[] = {
      {0, "0 s"},           {1, "1 s"},           {1.234, "1.234 s"}, {12.345678, "12.35 s"}, {999.94, "999.9 s"},
      {1234.6, "1235 s"},   {0.0567, "56.7 ms"},  {0.999, "999 ms"},  {0.99996, "1 s"},       {1e-3, "1 ms"},
      {0.00099999, "1 ms"}, {12.3e-6, "12.3 us"}, {1e-6, "1 us"},     {9.99999e-7, "1 us"},   {5e-9, "5 ns"},
      {999e-9, "999 ns"},   {-0.25, "-250 ms"},   {NAN, "n/a"},       {INFINITY, "n/a"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    report_time(b, sizeof b, cases[i].s);
    if (strcmp(b, cases[i].want) != 0)
      fail_msg("report_time(%.17g) = \"%s\", want \"%s\"", cases[i].s, b, cases[i].want);
  }
  /* Short buffers are truncated, never overrun. */
  char small[5] = "xxxx";
  assert_string_equal(report_time(small, 4, 1.234), "1.2");
  assert_int_equal(small[4], '\0');
  assert_string_equal(report_time(small, 0, 1.234), "");
  assert_string_equal(small, "1.2");
}

TEST(byte_units_at_their_boundaries) {
  char b[32];
  const struct {
    double bytes;
    const char *want;
  } cases[] = {
      {0, "0 B"},
      {512, "512 B"},
      {1023, "1023 B"},
      {1024, "1 KiB"},
      {1536, "1.5 KiB"},
      {1048575, "1 MiB"}, /* 1023.999 KiB */
      {80 * GiB, "80 GiB"},
      {93.1 * GiB, "93.1 GiB"},
      {93.04 * GiB, "93 GiB"},
      {1023.96 * GiB, "1 TiB"},
      {1024 * GiB, "1 TiB"},
      {2048 * 1024 * GiB, "2048 TiB"},
      {-3 * GiB, "-3 GiB"},
      {NAN, "n/a"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    report_bytes(b, sizeof b, cases[i].bytes);
    if (strcmp(b, cases[i].want) != 0)
      fail_msg("report_bytes(%.17g) = \"%s\", want \"%s\"", cases[i].bytes, b, cases[i].want);
  }
  assert_string_equal(report_bytes(b, 3, 512), "51");
  char big[8];
  report_bytes(big, sizeof big, 1e300); /* thousands of digits of TiB, truncated */
  assert_int_equal(strlen(big), 7);
}

TEST(fit_message_lists_parts_largest_first) {
  Report r = not_fitting();
  char b[256];
  assert_string_equal(report_fit_message(b, sizeof b, &r),
                      "does not fit: needs 93.1 GiB of 80 GiB: activations 61.2 GiB, optimizer state 15 GiB, "
                      "weights 10 GiB, gradients 5 GiB, communication buffers 1.9 GiB");
  r.memory[RM_BUFFERS] = 0;        /* parts that are 0 are left out */
  r.memory[RM_WEIGHTS] = 15 * GiB; /* a tie keeps the REPORT_MEMORY order */
  assert_string_equal(report_fit_message(b, sizeof b, &r),
                      "does not fit: needs 93.1 GiB of 80 GiB: activations 61.2 GiB, weights 15 GiB, "
                      "optimizer state 15 GiB, gradients 5 GiB");
  r = sample();
  assert_true(strncmp(report_fit_message(b, sizeof b, &r), "fits: needs 61.2 GiB of 80 GiB: activations", 43) == 0);
  char small[20];
  report_fit_message(small, sizeof small, &r);
  assert_string_equal(small, "fits: needs 61.2 Gi");
  assert_string_equal(report_fit_message(b, sizeof b, NULL), "");
}

/* --- trace ------------------------------------------------------------------------------- */

/* Two stages, two chunks each (interleaved): chunk c on device c % 2. */
typedef struct Pipe {
  RtPipeEvent ev[16];
  int nev;
  TraceOp ops0[4], ops1[2], ops2[1], ops3[1];
  const TraceOp *ops[4];
  int nops[4];
  Report r;
  TraceInput in;
} Pipe;

static void add_event(Pipe *p, int device, int chunk, int micro, char kind, double start, double end) {
  p->ev[p->nev++] = (RtPipeEvent){device, chunk, micro, kind, start, end};
}

static void pipe_init(Pipe *p) {
  memset(p, 0, sizeof *p);
  p->ops0[0] = (TraceOp){"embedding", 'c', 1e-3, 2e-3};
  p->ops0[1] = (TraceOp){"layer 0 qkv", 'c', 3e-3, 6e-3};
  p->ops0[2] = (TraceOp){"tp allreduce", 't', 1e-3, 1e-3};
  p->ops0[3] = (TraceOp){"layer 0 mlp", 'c', 2e-3, 0}; /* no backward: left out of B */
  p->ops1[0] = (TraceOp){"layer 1", 'c', 3e-3, 5e-3};
  p->ops1[1] = (TraceOp){"\"odd\" name", 't', 1e-3, 1e-3};
  p->ops2[0] = (TraceOp){"layer 2", 'c', 1e-3, 2e-3};
  p->ops3[0] = (TraceOp){NULL, 'c', 1e-3, 2e-3};
  p->ops[0] = p->ops0, p->nops[0] = 4;
  p->ops[1] = p->ops1, p->nops[1] = 2;
  p->ops[2] = p->ops2, p->nops[2] = 1;
  p->ops[3] = p->ops3, p->nops[3] = 1;
  /* Durations that are not the ops' sums, so the ops must be scaled. */
  add_event(p, 0, 0, 0, 'F', 0.000, 0.0143);
  add_event(p, 1, 1, 0, 'F', 0.0150, 0.0191);
  add_event(p, 0, 2, 0, 'F', 0.0200, 0.0213);
  add_event(p, 1, 3, 0, 'F', 0.0220, 0.0233);
  add_event(p, 1, 3, 0, 'B', 0.0233, 0.0260);
  add_event(p, 0, 2, 0, 'B', 0.0270, 0.0290);
  add_event(p, 1, 1, 0, 'R', 0.0300, 0.0340);
  add_event(p, 1, 1, 0, 'B', 0.0340, 0.0410);
  add_event(p, 0, 0, 0, 'B', 0.0420, 0.0512345678);
  add_event(p, 0, 0, 0, 'W', 0.0512345678, 0.06);
  p->r = sample();
  p->in = (TraceInput){.report = &p->r,
                       .events = p->ev,
                       .nevents = p->nev,
                       .stages = 2,
                       .chunks = 2,
                       .ops = p->ops,
                       .nops = p->nops,
                       .p2p = 0.0004,
                       .dp_start = 0.05,
                       .dp_comm = 0.02,
                       .optimizer_start = 0.07,
                       .optimizer = 0.003};
}

static JVal *trace_json(const TraceInput *in, char **text) {
  Mem m;
  mem_open(&m);
  assert_int_equal(report_trace(m.f, in), 0);
  mem_text(&m);
  JVal *v = parse_json(m.p);
  *text = m.p;
  return v;
}

static JVal *events_of(JVal *v) {
  JVal *evs = jget(v, "traceEvents");
  assert_non_null(evs);
  assert_int_equal(evs->type, JARR);
  return evs;
}

/* Times in the trace are microseconds with three decimals: compare in nanoseconds. */
static long long ns(const JVal *e, const char *key) { return llround(jnum(e, key) * 1000); }

TEST(trace_is_valid_json_with_metadata) {
  Pipe p;
  pipe_init(&p);
  char *text;
  JVal *v = trace_json(&p.in, &text);
  assert_string_equal(jstr(v, "displayTimeUnit"), "ms");
  assert_string_equal(jstr(jget(v, "otherData"), "scenario"), "neox20b");
  JVal *evs = events_of(v);
  int procs = 0, threads = 0;
  for (int i = 0; i < evs->n; i++) {
    JVal *e = evs->items[i];
    const char *ph = jstr(e, "ph");
    if (!ph) fail_msg("event %d has no ph", i);
    assert_non_null(jget(e, "pid"));
    assert_non_null(jstr(e, "name"));
    if (strcmp(ph, "M") == 0) {
      const char *name = jstr(e, "name");
      int pid = (int)jnum(e, "pid");
      if (strcmp(name, "process_name") == 0) {
        char want[16];
        snprintf(want, sizeof want, "stage %d", pid);
        assert_string_equal(jstr(jget(e, "args"), "name"), want);
        procs++;
      } else if (strcmp(name, "thread_name") == 0) {
        const char *want[] = {"compute", "tp/cp/ep comm", "pp send/recv", "dp comm"};
        int tid = (int)jnum(e, "tid");
        assert_true(tid >= 0 && tid < 4);
        assert_string_equal(jstr(jget(e, "args"), "name"), want[tid]);
        threads++;
      }
    } else {
      assert_string_equal(ph, "X");
      assert_non_null(jget(e, "tid"));
      assert_true(jnum(e, "dur") >= 0);
      assert_true(jnum(e, "ts") >= 0);
    }
  }
  assert_int_equal(procs, 2);
  assert_int_equal(threads, 8);
  /* The pipeline events themselves, with their args. */
  int found = 0;
  for (int i = 0; i < evs->n; i++) {
    JVal *e = evs->items[i];
    const char *name = jstr(e, "name");
    if (strcmp(name, "F mb0 chunk1") == 0) {
      found++;
      assert_true(jnum(e, "pid") == 1 && jnum(e, "tid") == 0);
      assert_int_equal(ns(e, "ts"), 15000000);
      assert_int_equal(ns(e, "dur"), 4100000);
      assert_true(jnum(jget(e, "args"), "micro") == 0);
      assert_true(jnum(jget(e, "args"), "chunk") == 1);
    }
  }
  assert_int_equal(found, 1);
  assert_contains(text, "\"name\":\"\\\"odd\\\" name\"");
  jv_free(v);
  free(text);
}

TEST(trace_ops_tile_their_parent_event) {
  Pipe p;
  pipe_init(&p);
  char *text;
  JVal *v = trace_json(&p.in, &text);
  JVal *evs = events_of(v);
  int parents = 0;
  for (int i = 0; i < evs->n; i++) {
    JVal *e = evs->items[i];
    const char *cat = jstr(e, "cat");
    if (!cat || strcmp(cat, "op") == 0 || strcmp(jstr(e, "ph"), "X") != 0 || jnum(e, "tid") != 0) continue;
    if (strcmp(cat, "dp") == 0 || strcmp(cat, "optimizer") == 0) continue;
    /* A pipeline event: its operators follow it, compute on tid 0 and comm on tid 1. */
    parents++;
    long long start = ns(e, "ts"), end = start + ns(e, "dur"), at = start;
    int chunk = (int)jnum(jget(e, "args"), "chunk");
    char kind = jstr(e, "name")[0];
    bool fwd = kind == 'F' || kind == 'R';
    double sum = 0;
    for (int k = 0; k < p.nops[chunk]; k++) sum += fwd ? p.ops[chunk][k].fwd : p.ops[chunk][k].bwd;
    int nops = 0;
    for (int k = i + 1; k < evs->n; k++) {
      JVal *o = evs->items[k];
      if (!jstr(o, "cat") || strcmp(jstr(o, "cat"), "op") != 0) break;
      const TraceOp *op = &p.ops[chunk][nops];
      while (!((fwd ? op->fwd : op->bwd) > 0)) op = &p.ops[chunk][++nops];
      nops++;
      assert_true(jnum(o, "pid") == jnum(e, "pid"));
      assert_true(jnum(o, "tid") == (op->stream == 't' ? 1 : 0));
      assert_string_equal(jstr(o, "name"), op->name ? op->name : "");
      assert_true(jnum(jget(o, "args"), "time_s") == (fwd ? op->fwd : op->bwd));
      long long s = ns(o, "ts"), d = ns(o, "dur");
      assert_int_equal(s, at);            /* end to end */
      assert_true(d > 0 && s + d <= end); /* inside the parent */
      /* scaled: its share of the parent is its share of the sum, to the nanosecond */
      double want = (double)(end - start) * (fwd ? op->fwd : op->bwd) / sum;
      assert_true(fabs((double)d - want) <= 1.0);
      at = s + d;
    }
    assert_true(nops > 0);
    assert_int_equal(at, end); /* they fill it */
  }
  assert_int_equal(parents, p.nev);
  jv_free(v);
  free(text);
}

TEST(trace_sends_dp_and_optimizer) {
  Pipe p;
  pipe_init(&p);
  char *text;
  JVal *v = trace_json(&p.in, &text);
  JVal *evs = events_of(v);
  int sends = 0, dp = 0, opt = 0;
  for (int i = 0; i < evs->n; i++) {
    JVal *e = evs->items[i];
    const char *cat = jstr(e, "cat");
    if (!cat) continue;
    if (strcmp(cat, "pp") == 0) {
      sends++;
      assert_true(jnum(e, "tid") == 2);
      assert_int_equal(ns(e, "dur"), 400000);
      int chunk = (int)jnum(jget(e, "args"), "chunk"), to = (int)jnum(jget(e, "args"), "to_chunk");
      /* It starts where its F or B ends. */
      bool parent = false;
      for (int k = 0; k < p.nev; k++)
        if (p.ev[k].chunk == chunk && llround(p.ev[k].end * 1e9) == ns(e, "ts") &&
            p.ev[k].device == (int)jnum(e, "pid"))
          parent = to == chunk + (p.ev[k].kind == 'F' ? 1 : -1), k = p.nev;
      assert_true(parent);
    } else if (strcmp(cat, "dp") == 0) {
      dp++;
      assert_true(jnum(e, "tid") == 3);
      assert_int_equal(ns(e, "ts"), 50000000);
      assert_int_equal(ns(e, "dur"), 20000000);
    } else if (strcmp(cat, "optimizer") == 0) {
      opt++;
      assert_true(jnum(e, "tid") == 0);
      assert_string_equal(jstr(e, "name"), "optimizer step");
      assert_int_equal(ns(e, "ts"), 70000000);
      assert_int_equal(ns(e, "dur"), 3000000);
    }
  }
  /* F of chunks 0, 1, 2 send forward (chunk 3 is the last); B of chunks 3, 2, 1 send back;
   * R and W never send. */
  assert_int_equal(sends, 6);
  assert_contains(text, "\"send F mb0 to stage 1\"");
  assert_contains(text, "\"send B mb0 to stage 0\"");
  assert_int_equal(dp, 2);
  assert_int_equal(opt, 2);
  jv_free(v);
  free(text);

  /* One stage: no sends; no dp or optimizer events when they take no time. */
  pipe_init(&p);
  p.nev = 0;
  add_event(&p, 0, 0, 0, 'F', 0, 0.01);
  add_event(&p, 0, 0, 0, 'B', 0.01, 0.03);
  p.in.nevents = p.nev;
  p.in.stages = 1;
  p.in.chunks = 1;
  p.in.dp_comm = 0;
  p.in.optimizer = 0;
  v = trace_json(&p.in, &text);
  assert_not_contains(text, "\"cat\":\"pp\"");
  assert_not_contains(text, "\"cat\":\"dp\"");
  assert_not_contains(text, "\"cat\":\"optimizer\"");
  assert_contains(text, "\"stage 0\"");
  assert_not_contains(text, "\"stage 1\"");
  jv_free(v);
  free(text);
}

TEST(trace_tolerates_odd_input) {
  Pipe p;
  pipe_init(&p);
  p.in.ops = NULL;    /* no operators: pipeline events alone */
  p.ev[1].end = NAN;  /* an event with no time is left out */
  p.ev[2].chunk = 99; /* a chunk out of range: no ops, no send */
  p.in.report = NULL;
  char *text;
  JVal *v = trace_json(&p.in, &text);
  assert_not_contains(text, "\"cat\":\"op\"");
  assert_not_contains(text, "F mb0 chunk1\"");
  assert_contains(text, "F mb0 chunk99\"");
  assert_null(jget(v, "otherData"));
  jv_free(v);
  free(text);

  TraceInput empty;
  memset(&empty, 0, sizeof empty);
  v = trace_json(&empty, &text);
  assert_int_equal(events_of(v)->n, 0);
  jv_free(v);
  free(text);

  errno = 0;
  assert_int_equal(report_trace(stdout, NULL), -1);
  assert_int_equal(errno, EINVAL);
}

TEST(trace_write_failure_returns_minus_one) {
  FILE *f = fopen("/dev/full", "w");
  if (!f) skip();
  Pipe p;
  pipe_init(&p);
  errno = 0;
  assert_int_equal(report_trace(f, &p.in), -1);
  assert_int_equal(errno, ENOSPC);
  fclose(f);
  /* A read-only stream fails too. */
  f = fopen("/dev/null", "r");
  assert_non_null(f);
  assert_int_equal(report_trace(f, &p.in), -1);
  assert_true(errno != 0);
  fclose(f);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(table_for_a_plan_that_fits),
      cmocka_unit_test(table_always_shows_forward_backward_bubble),
      cmocka_unit_test(table_for_a_plan_that_does_not_fit),
      cmocka_unit_test(kernels_line_names_sustained_figures),
      cmocka_unit_test(table_planner_figures),
      cmocka_unit_test(fit_changes_table_and_json),
      cmocka_unit_test(json_uncalibrated_calls),
      cmocka_unit_test(null_names_and_empty_report),
      cmocka_unit_test(json_for_a_plan_that_fits),
      cmocka_unit_test(json_for_a_plan_that_does_not_fit),
      cmocka_unit_test(json_nan_and_infinity_are_null),
      cmocka_unit_test(json_escapes_strings),
      cmocka_unit_test(json_numbers_round_trip),
      cmocka_unit_test(csv_header_and_rows_agree),
      cmocka_unit_test(csv_planner_figures),
      cmocka_unit_test(notes_in_table_json_and_csv),
      cmocka_unit_test(time_units_at_their_boundaries),
      cmocka_unit_test(byte_units_at_their_boundaries),
      cmocka_unit_test(fit_message_lists_parts_largest_first),
      cmocka_unit_test(trace_is_valid_json_with_metadata),
      cmocka_unit_test(trace_ops_tile_their_parent_event),
      cmocka_unit_test(trace_sends_dp_and_optimizer),
      cmocka_unit_test(trace_tolerates_odd_input),
      cmocka_unit_test(trace_write_failure_returns_minus_one),
  };
  return RUN_TESTS(tests);
}
