/* sweep_set.c - a sweep over fields that change the graph (sweep_part.h): one graph per
 * structural point, lowered one by one, compiled in parallel (once per distinct graph), run
 * over the shard's slice and ranked together. */
#include <math.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "strbuf.h"
#include "front/units.h"
#include "lower/lower.h"
#include "sweep_part.h"

/* Each structure is a graph to lower and compile: more are refused at the `vary`. */
enum { MAX_STRUCTURES = 4096, MAX_STRUCTURAL = 64, MAX_DEPTH = 8 };

typedef struct SAxis {
  AstNode *vary;
  AstNode *path[MAX_DEPTH]; /* the root's name, then each field */
  int depth;
  const char *key; /* "cluster.nodes" */
  int n;
  AstNode **vals;
  const char **words; /* the values as written, or NULL for numbers (nums) */
  const char **texts; /* the values as written */
  double *nums;
} SAxis;

struct SweepSet {
  Sema *s;
  HwSet *hw;
  Decl *decl;
  Arena arena;
  SAxis *ax;
  int nax;
  int n;            /* structures */
  Sweep **part;     /* per structure; NULL where it failed */
  int *fail;        /* per structure: its reason, or -1 */
  int **map;        /* per structure: its part's reasons -> ours */
  uint64_t inner;   /* points of a structure */
  uint64_t points;  /* n * inner */
  const char **reasons;
  int nreasons, ncheck;
  bool maximize;
  const char *objective;
  int nvary;   /* the sweep's `vary` statements */
  bool gpus;   /* a structural axis sets the cluster: the rows show cluster.gpus */
  uint64_t pruned;
  const SweepOptions *opt; /* sweep_set_new's */
  Sweep *estimated;        /* the part whose rate estimated the last run */
  SweepRow *best; /* each structure's best point of the last run, where it kept one */
  uint64_t *best_of; /* its structure */
  const char *best_axes;
  int nbest;
  int compiled;         /* distinct graphs compiled */
  double lower_seconds; /* deriving and lowering every structure */
  double jit_seconds;   /* compiling every distinct graph, summed */
  int sample_k;          /* sweep_set_keep_sample's; 0: none */
  SweepDotKind *kind;    /* per reason: what its sampled points are */
  SweepTop **sample;     /* per reason, then the ranked: the points of the whole run */
  SweepDot *dots;        /* the last run's sample */
  SweepSample smp;
};

bool sweep_vary_structural(Sema *s, Decl *decl, AstNode *vary) {
  AstNode *p = vary->u.bin.lhs;
  if (p->kind != AST_MEMBER || p->u.bin.lhs->kind != AST_NAME) return true;
  return !lower_axis_is_input(s, decl, p->u.bin.lhs->name, p->name);
}

bool sweep_lets_ok(Sema *s, Decl *decl, Diag *d) {
  bool ok = true;
  for (AstNode *c = sema_block_body(decl).first; c; c = c->next) {
    if (c->kind != AST_LET || !sweep_vary_structural(s, decl, c)) continue;
    SrcFile *f;
    Span at;
    sema_decl_at(s, decl, &f, &at);
    const char *path = f && c->u.bin.lhs->span.end <= f->len ? f->text + c->u.bin.lhs->span.start : "?";
    int n = f ? (int)(c->u.bin.lhs->span.end - c->u.bin.lhs->span.start) : 1;
    diag_error(d, f, c->u.bin.lhs->span,
               "`let %.*s` cannot set a field that changes the graph point by point: write `vary %.*s in [VALUE]`, "
               "or set it in the scenario",
               n, path, n, path);
    ok = false;
  }
  return ok;
}

bool sweep_set_wanted(Sema *s, Decl *decl) {
  for (AstNode *c = sema_block_body(decl).first; c; c = c->next)
    if (c->kind == AST_VARY && sweep_vary_structural(s, decl, c)) return true;
  return false;
}

static const char *src_text(SweepSet *set, AstNode *n) { return sweep_src_text(set->s, set->decl, &set->arena, n); }

/* The structural axes, in declaration order; false after reporting too many structures. */
static bool read_structural(SweepSet *set, Diag *d) {
  SrcFile *f;
  Span at;
  sema_decl_at(set->s, set->decl, &f, &at);
  AstList body = sema_block_body(set->decl);
  for (AstNode *c = body.first; c; c = c->next) {
    set->nvary += c->kind == AST_VARY;
    set->nax += c->kind == AST_VARY && sweep_vary_structural(set->s, set->decl, c);
  }
  if (set->nax > MAX_STRUCTURAL) {
    diag_error(d, f, at, "sweep `%s` varies %d fields that change its graph; llmp varies at most %d",
               sema_decl_name(set->decl), set->nax, MAX_STRUCTURAL);
    return false;
  }
  set->ax = arena_alloc(&set->arena, (size_t)set->nax * sizeof *set->ax);
  set->n = 1;
  int i = 0;
  for (AstNode *c = body.first; c; c = c->next) {
    if (c->kind != AST_VARY || !sweep_vary_structural(set->s, set->decl, c)) continue;
    SAxis *a = &set->ax[i++];
    a->vary = c;
    AstNode *chain[MAX_DEPTH];
    AstNode *up = c->u.bin.lhs;
    for (; up && a->depth < MAX_DEPTH; up = up->kind == AST_MEMBER ? up->u.bin.lhs : NULL) chain[a->depth++] = up;
    if (up) {
      diag_error(d, f, c->u.bin.lhs->span, "a sweep varies a path of at most %d names", MAX_DEPTH);
      return false;
    }
    for (int k = 0; k < a->depth; k++) a->path[k] = chain[a->depth - 1 - k];
    a->key = src_text(set, c->u.bin.lhs);
    set->gpus |= !strcmp(a->path[0]->name, "cluster");
    a->n = c->u.bin.rhs->u.list.count;
    a->vals = arena_alloc(&set->arena, (size_t)a->n * sizeof *a->vals);
    a->nums = arena_alloc(&set->arena, (size_t)a->n * sizeof *a->nums);
    a->texts = arena_alloc(&set->arena, (size_t)a->n * sizeof *a->texts);
    int k = 0, words = 0;
    for (AstNode *x = c->u.bin.rhs->u.list.first; x; x = x->next, k++) {
      a->vals[k] = x;
      a->texts[k] = src_text(set, x);
      if (x->kind == AST_NUM)
        a->nums[k] = unit_value(x->u.num.value, x->u.num.unit, NULL);
      else
        words++;
    }
    if (words) a->words = a->texts;
    if ((double)set->n * a->n > MAX_STRUCTURES) {
      diag_error(d, f, c->span,
                 "sweep `%s` has more than %d values of the fields that change its graph (one graph each): "
                 "narrow these axes or write several sweeps",
                 sema_decl_name(set->decl), MAX_STRUCTURES);
      return false;
    }
    set->n *= a->n;
  }
  return true;
}

/* --- a structure: its declaration, its graph -------------------------------------------------- */

/* base with path[0 .. depth-1] (fields, each a declaration but the last) set to val. */
static Decl *derive_chain(SweepSet *set, Decl *base, AstNode *const *path, int depth, AstNode *val, Diag *d) {
  if (depth == 1) return sema_derive(set->s, base, path[0]->name, val, NULL, set->decl, d);
  Decl *sub = sema_ref(set->s, base, path[0]->name);
  Decl *x = sub ? derive_chain(set, sub, path + 1, depth - 1, val, d) : NULL;
  return x ? sema_derive(set->s, base, path[0]->name, NULL, x, set->decl, d) : NULL;
}

/* Structure i's value of each structural axis, by index (the last axis varies fastest). */
static void structure_digits(const SweepSet *set, int i, int *digit) {
  for (int a = set->nax - 1; a >= 0; a--) digit[a] = i % set->ax[a].n, i /= set->ax[a].n;
}

/* Structure i's declaration: the sweep with each structural axis's value set, whole
 * declarations (`vary cluster`) before their fields.  NULL after reporting to d. */
static Decl *structure_decl(SweepSet *set, int i, Diag *d) {
  int digit[MAX_STRUCTURAL];
  structure_digits(set, i, digit);
  Decl *sc = set->decl;
  for (int depth = 1; depth <= MAX_DEPTH && sc; depth++)
    for (int a = 0; a < set->nax && sc; a++)
      if (set->ax[a].depth == depth) sc = derive_chain(set, sc, set->ax[a].path, depth, set->ax[a].vals[digit[a]], d);
  return d->errors ? NULL : sc;
}

/* What a structure's diagnostics say: the first error's message, without its place or the
 * sweep's name (the reason counts the sweep's own points). */
typedef struct Caught {
  char *first;
} Caught;

static void catch_write(void *user, const char *text, size_t len) {
  Caught *c = user;
  if (c->first) return;
  const char *e = strstr(text, "error: ");
  if (!e) return;
  e += 7;
  const char *tick = strstr(e, "`: ");
  if ((!strncmp(e, "sweep `", 7) || !strncmp(e, "scenario `", 10)) && tick && !memchr(e, '\n', (size_t)(tick - e)))
    e = tick + 3;
  size_t n = (size_t)(text + len - e);
  const char *nl = memchr(e, '\n', n);
  c->first = strndup(e, nl ? (size_t)(nl - e) : n);
}

/* Lowers structure i, its diagnostics to d; NULL after reporting. */
static Sweep *structure_lower(SweepSet *set, int i, Diag *d) {
  Decl *sc = structure_decl(set, i, d);
  return sc ? sweep_part_new(set->s, set->hw, set->decl, sc, d, set->opt) : NULL;
}

/* --- reasons ---------------------------------------------------------------------------------- */

static int reason_add(SweepSet *set, const char *text) {
  int r = 0;
  while (r < set->nreasons && strcmp(set->reasons[r], text)) r++;
  if (r == set->nreasons) set->reasons[set->nreasons++] = arena_strdup(&set->arena, text);
  return r;
}

/* Ours: every graph's checks (by text, first seen first), the requires, then why structures
 * failed; so every shard lists the same reasons in the same order. */
static void collect(SweepSet *set, char **failed) {
  int cap = set->n + 1;
  for (int i = 0; i < set->n; i++) {
    int n;
    bool mx;
    const char *obj;
    if (set->part[i]) sweep_part_drops(set->part[i], &n, &mx, &obj), cap += n;
  }
  set->reasons = arena_alloc(&set->arena, (size_t)cap * sizeof *set->reasons);
  set->kind = arena_alloc(&set->arena, (size_t)cap * sizeof *set->kind);
  set->map = arena_alloc(&set->arena, (size_t)set->n * sizeof *set->map);
  for (int pass = 0; pass < 2; pass++)
    for (int i = 0; i < set->n; i++) {
      if (!set->part[i]) continue;
      int ncheck = sweep_part_ncheck(set->part[i]), n;
      const char *const *texts = sweep_part_reasons(set->part[i], &n);
      if (!set->map[i]) set->map[i] = arena_alloc(&set->arena, (size_t)(n + 1) * sizeof **set->map);
      for (int r = pass ? ncheck : 0; r < (pass ? n : ncheck); r++) {
        set->map[i][r] = reason_add(set, texts[r]);
        set->kind[set->map[i][r]] = sweep_part_kind(set->part[i], r);
      }
      if (!pass) set->ncheck = set->nreasons;
    }
  set->fail = arena_alloc(&set->arena, (size_t)set->n * sizeof *set->fail);
  for (int i = 0; i < set->n; i++) set->fail[i] = set->part[i] ? -1 : reason_add(set, failed[i]);
}

/* --- compiling ---------------------------------------------------------------------------------- */

typedef struct Compile {
  SweepSet *set;
  int *todo, ntodo;
  char **msg;
  atomic_int next;
} Compile;

static void *compile_main(void *arg) {
  Compile *c = arg;
  for (int k; (k = atomic_fetch_add(&c->next, 1)) < c->ntodo;)
    c->msg[k] = sweep_part_compile(c->set->part[c->todo[k]], NULL);
  return NULL;
}

/* Compiles each distinct graph once, on up to `threads` threads; the others share its code.
 * Returns 0, or -1 after reporting. */
static int compile_all(SweepSet *set, const SweepOptions *opt, Diag *d) {
  int *owner = xcalloc((size_t)set->n, sizeof *owner);
  Compile c = {set, xcalloc((size_t)set->n, sizeof *c.todo), 0, NULL, 0};
  for (int i = 0; i < set->n; i++) {
    owner[i] = i;
    if (!set->part[i]) continue;
    for (int j = 0; j < i && owner[i] == i; j++)
      if (set->part[j] && owner[j] == j && sweep_part_same(set->part[i], set->part[j])) owner[i] = j;
    if (owner[i] == i) c.todo[c.ntodo++] = i;
  }
  c.msg = xcalloc((size_t)c.ntodo + 1, sizeof *c.msg);
  if (opt->dump_ir) { /* in order, on this thread */
    for (int k = 0; k < c.ntodo; k++) c.msg[k] = sweep_part_compile(set->part[c.todo[k]], opt->dump_ir);
  } else {
    int T = opt->threads < c.ntodo ? opt->threads : c.ntodo, started = 0;
    pthread_t *th = xcalloc((size_t)(T > 0 ? T : 1), sizeof *th);
    for (; started < T - 1; started++)
      if (pthread_create(&th[started], NULL, compile_main, &c)) break;
    compile_main(&c); /* this thread is the T-th, and does it all where no thread started */
    for (int t = 0; t < started; t++) pthread_join(th[t], NULL);
    free(th);
  }
  int rc = 0;
  for (int k = 0; k < c.ntodo; k++)
    if (c.msg[k] && !rc) {
      diag_plain(d, sema_decl_path(set->s, set->decl), "the JIT could not compile sweep `%s`: %s",
                 sema_decl_name(set->decl), c.msg[k]);
      rc = -1;
    }
  for (int k = 0; k < c.ntodo; k++) {
    set->jit_seconds += sweep_jit_seconds(set->part[c.todo[k]]);
    free(c.msg[k]);
  }
  for (int i = 0; !rc && i < set->n; i++)
    if (set->part[i] && owner[i] != i) sweep_part_share(set->part[i], set->part[owner[i]]);
  set->compiled = c.ntodo;
  free(c.msg);
  free(c.todo);
  free(owner);
  return rc;
}

SweepSet *sweep_set_new(Sema *s, HwSet *hw, Decl *decl, Diag *d, const SweepOptions *opt) {
  SweepSet *set = xcalloc(1, sizeof *set);
  set->s = s, set->hw = hw, set->decl = decl, set->opt = opt;
  arena_init(&set->arena);
  if (!read_structural(set, d)) goto fail;
  set->part = xcalloc((size_t)set->n, sizeof *set->part);
  char **failed = xcalloc((size_t)set->n, sizeof *failed);
  int nok = 0;
  double t0 = sweep_now();
  for (int i = 0; i < set->n; i++) { /* sema and lowering are not thread-safe: one by one */
    Diag own;
    Caught caught = {NULL};
    diag_init(&own, stderr);
    diag_set_writer(&own, catch_write, &caught);
    own.format = DIAG_SHORT;
    set->part[i] = structure_lower(set, i, &own);
    diag_free(&own);
    if (set->part[i]) {
      sweep_part_diag(set->part[i], d);
      nok++;
      free(caught.first);
    } else {
      failed[i] = caught.first ? caught.first : xstrdup("the structure could not be lowered");
    }
  }
  set->lower_seconds = sweep_now() - t0;
  if (!nok) { /* every structure fails: say why, as a sweep of one graph does */
    Sweep *again = structure_lower(set, 0, d);
    sweep_free(again);
  }
  if (nok) collect(set, failed);
  for (int i = 0; i < set->n; i++) free(failed[i]);
  free(failed);
  if (!nok) goto fail;
  Sweep *first = sweep_set_first(set);
  int n;
  sweep_part_drops(first, &n, &set->maximize, &set->objective);
  set->inner = sweep_points(first);
  if ((double)set->inner * set->n > 9.0e18) {
    diag_plain(d, sema_decl_path(s, decl), "sweep `%s` has more than 9e18 points", sema_decl_name(decl));
    goto fail;
  }
  set->points = set->inner * (uint64_t)set->n;
  if (opt->jit && compile_all(set, opt, d) < 0) goto fail;
  return set;
fail:
  sweep_set_free(set);
  return NULL;
}

/* --- the sample ------------------------------------------------------------------------------- */

static void sample_clear(SweepSet *set) {
  for (int c = 0; set->sample && c <= set->nreasons; c++) sweep_top_free(set->sample[c]);
  free(set->sample);
  free(set->dots);
  set->sample = NULL, set->dots = NULL, set->smp = (SweepSample){0, 0, NULL};
}

void sweep_set_keep_sample(SweepSet *set, int per_class) { set->sample_k = per_class; }
const SweepSample *sweep_set_sample(const SweepSet *set) { return set->dots ? &set->smp : NULL; }

/* Structure i's sample (its points from lo), into ours by our reasons. */
static void sample_take(SweepSet *set, int i, uint64_t lo) {
  SweepTop *const *tops = sweep_part_sample_tops(set->part[i]);
  int nr;
  bool mx;
  const char *obj;
  sweep_part_drops(set->part[i], &nr, &mx, &obj);
  for (int r = 0; tops && r <= nr; r++) {
    int k = sweep_top_count(tops[r]), c = r < nr ? set->map[i][r] : set->nreasons;
    SweepRow *rows = xcalloc((size_t)k + 1, sizeof *rows);
    sweep_top_rows(tops[r], rows);
    for (int j = 0; j < k; j++) /* the key stays: it was of the point in the whole sweep */
      sweep_top_push(set->sample[c], &(SweepRow){rows[j].point + lo, rows[j].objective, 0, NULL});
    free(rows);
  }
  sweep_part_sample_free(set->part[i]);
}

/* The whole run's sample with its figures, each evaluated by its structure's graph. */
static void sample_build(SweepSet *set) {
  int n;
  set->dots = sweep_sample_dots(set->sample, set->nreasons + 1, 0, &n);
  sweep_sample_sort(set->dots, n, true);
  for (int j = 0, k; j < n; j = k) { /* a run of one structure's points */
    uint64_t i = set->dots[j].point / set->inner;
    for (k = j + 1; k < n && set->dots[k].point / set->inner == i; k++) {}
    sweep_part_figures(set->part[i], set->dots + j, k - j, i * set->inner);
  }
  for (int j = 0; j < n; j++)
    set->dots[j].kind = set->dots[j].reason < 0 ? SWEEP_DOT_RANKED : set->kind[set->dots[j].reason];
  sweep_sample_sort(set->dots, n, false);
  set->smp = (SweepSample){set->sample_k, n, set->dots};
}

void sweep_set_free(SweepSet *set) {
  if (!set) return;
  for (int i = 0; set->part && i < set->n; i++) /* the sharers first: the owners hold the code */
    if (set->part[i] && sweep_part_shares(set->part[i])) sweep_free(set->part[i]), set->part[i] = NULL;
  for (int i = 0; set->part && i < set->n; i++) sweep_free(set->part[i]);
  free(set->part);
  free(set->best);
  free(set->best_of);
  sample_clear(set);
  arena_free(&set->arena);
  free(set);
}

uint64_t sweep_set_points(const SweepSet *set) { return set->points; }
uint64_t sweep_set_pruned(const SweepSet *set) { return set->pruned; }
double sweep_set_jit_seconds(const SweepSet *set) { return set->jit_seconds; }
int sweep_set_structures(const SweepSet *set, int *compiled, double *lower_seconds) {
  *compiled = set->compiled, *lower_seconds = set->lower_seconds;
  return set->n;
}

Sweep *sweep_set_part(const SweepSet *set, uint64_t point, uint64_t *inner) {
  *inner = point % set->inner;
  return set->part[point / set->inner];
}

int sweep_set_axes(const SweepSet *set) { return set->nvary; }
Sweep *sweep_set_estimated(const SweepSet *set) { return set->estimated; }

const char *sweep_set_axis_at(const SweepSet *set, int a, uint64_t point, const char **root, const char **field,
                              char *buf, size_t n) {
  int i = (int)(point / set->inner), digit[MAX_STRUCTURAL], s = 0, k = 0;
  *root = *field = "";
  structure_digits(set, i, digit);
  for (AstNode *c = sema_block_body(set->decl).first; c; c = c->next) {
    if (c->kind != AST_VARY) continue;
    if (s < set->nax && set->ax[s].vary == c) {
      const SAxis *x = &set->ax[s];
      if (a-- == 0) {
        *root = x->path[0]->name;
        *field = x->depth == 1 ? NULL : x->depth == 2 ? x->path[1]->name : x->key + strlen(*root) + 1;
        return x->texts[digit[s]];
      }
      s++;
    } else if (a-- == 0) {
      return set->part[i] ? sweep_axis_at(set->part[i], k, point % set->inner, root, field, buf, n) : "?";
    } else {
      k++;
    }
  }
  return "?";
}

int sweep_set_best(SweepSet *set, const SweepRow **rows, const char **axes) {
  *axes = set->best_axes;
  *rows = set->best;
  return set->nbest;
}

Sweep *sweep_set_first(const SweepSet *set) {
  for (int i = 0; i < set->n; i++)
    if (set->part[i]) return set->part[i];
  return NULL;
}

double sweep_set_point_objective(SweepSet *set, uint64_t point, int *reason) {
  int i = (int)(point / set->inner);
  if (!set->part[i]) {
    *reason = set->fail[i];
    return NAN;
  }
  double obj = sweep_point_objective(set->part[i], point % set->inner, reason);
  if (*reason >= 0) *reason = set->map[i][*reason];
  return obj;
}

/* --- running ------------------------------------------------------------------------------------ */

/* A row of structure i (fields from its part, point its own) as the set's: every axis in
 * declaration order, the structural ones from the structure's values, cluster.gpus where the
 * cluster changes, then the part's figures; the point made the set's. */
static void set_row(SweepSet *set, int i, SweepRow *row) {
  int digit[MAX_STRUCTURAL], ninput = set->nvary - set->nax;
  structure_digits(set, i, digit);
  SweepField *f = arena_alloc(&set->arena, (size_t)(row->nfields + set->nax + 1) * sizeof *f);
  int n = 0, a = 0, k = 0;
  for (AstNode *c = sema_block_body(set->decl).first; c; c = c->next) {
    if (c->kind != AST_VARY) continue;
    if (a < set->nax && set->ax[a].vary == c) {
      const SAxis *x = &set->ax[a];
      f[n++] = x->words ? (SweepField){x->key, NAN, x->words[digit[a]], false}
                        : (SweepField){x->key, x->nums[digit[a]], NULL, false};
      a++;
    } else if (k < ninput && k < row->nfields) {
      f[n++] = row->fields[k++];
    }
  }
  if (set->gpus) {
    double g = NAN;
    Decl *c = sema_ref(set->s, sweep_part_scenario(set->part[i]), "cluster");
    if (c) sema_number(set->s, c, "gpus", &g);
    f[n++] = (SweepField){"cluster.gpus", g, NULL, false};
  }
  for (; k < row->nfields; k++) f[n++] = row->fields[k];
  row->fields = f;
  row->nfields = n;
  row->point += (uint64_t)i * set->inner;
}

int sweep_set_run(SweepSet *set, const SweepOptions *opt, SweepMeta *meta, SweepRow **rows, int *nrows) {
  uint64_t begin = 0, end = set->points, kept = 0;
  if (opt->shard_n > 1) sweep_shard_range(set->points, opt->shard_k, opt->shard_n, &begin, &end);
  SweepDrop *drops = arena_alloc(&set->arena, (size_t)(set->nreasons + 1) * sizeof *drops);
  for (int r = 0; r < set->nreasons; r++) drops[r].reason = set->reasons[r];
  SweepTop *top = sweep_top_new(meta->keep, set->maximize);
  double elapsed = 0;
  int stopped = 0;
  set->pruned = 0, set->estimated = NULL;
  sample_clear(set);
  if (set->sample_k > 0) {
    set->sample = xcalloc((size_t)set->nreasons + 1, sizeof *set->sample);
    for (int c = 0; c <= set->nreasons; c++) set->sample[c] = sweep_top_new(set->sample_k, false);
  }
  free(set->best);
  free(set->best_of);
  set->best = xcalloc((size_t)set->n, sizeof *set->best);
  set->best_of = xcalloc((size_t)set->n, sizeof *set->best_of);
  if (!set->best_axes) {
    StrBuf b = {0};
    for (int a = 0; a < set->nax; a++) strbuf_printf(&b, "%s%s", a ? ", " : "", set->ax[a].key);
    set->best_axes = arena_strdup(&set->arena, b.p ? b.p : "");
    strbuf_free(&b);
  }
  set->nbest = 0;
  for (int i = 0; i < set->n; i++) {
    uint64_t lo = (uint64_t)i * set->inner, hi = lo + set->inner;
    if (hi <= begin || lo >= end) continue;
    uint64_t b = (begin > lo ? begin : lo) - lo, e = (end < hi ? end : hi) - lo;
    if (!set->part[i]) {
      drops[set->fail[i]].count += e - b;
      continue;
    }
    uint64_t k;
    double t;
    SweepOptions first = *opt; /* the first graph run estimates the whole slice's time */
    if (set->estimated) first.max_seconds = 0, first.notes = NULL;
    else set->estimated = set->part[i];
    sweep_part_sample(set->part[i], set->sample_k, lo);
    SweepTop *part = sweep_part_eval(set->part[i], &first, b, e, end - (lo + b), &k, &t, &stopped);
    if (set->sample) sample_take(set, i, lo);
    kept += k, elapsed += t, set->pruned += sweep_part_pruned(set->part[i]);
    int nr;
    bool mx;
    const char *obj;
    const SweepDrop *pd = sweep_part_drops(set->part[i], &nr, &mx, &obj);
    for (int r = 0; r < nr; r++) drops[set->map[i][r]].count += pd[r].count;
    int nk = sweep_top_count(part);
    SweepRow *got = xcalloc((size_t)nk + 1, sizeof *got);
    sweep_top_rows(part, got);
    for (int j = 0; j < nk; j++) {
      SweepRow g = {got[j].point + lo, got[j].objective, 0, NULL};
      if (sweep_top_wants(top, g.objective, g.point)) sweep_top_push(top, &g);
    }
    if (nk) set->best_of[set->nbest] = (uint64_t)i, set->best[set->nbest++] = (SweepRow){got[0].point, got[0].objective, 0, NULL};
    free(got);
    sweep_top_free(part);
    if (stopped) break;
  }
  int n = stopped ? 0 : sweep_top_count(top), rc = stopped;
  if (!stopped && set->sample) sample_build(set);
  *rows = xcalloc((size_t)n + 1, sizeof **rows);
  *nrows = stopped ? 0 : sweep_top_rows(top, *rows);
  if (stopped) set->nbest = 0;
  for (int j = 0; j < *nrows; j++) { /* the rows point into top until each is filled */
    SweepRow *row = &(*rows)[j];
    int i = (int)(row->point / set->inner);
    row->point %= set->inner;
    int pr = sweep_part_row(set->part[i], row);
    if (pr != 0) rc = -1;
    if (pr < 0) {
      row->point += (uint64_t)i * set->inner;
      continue;
    }
    set_row(set, i, row);
  }
  sweep_top_free(top);
  for (int j = 0; j < set->nbest; j++) { /* in structure order */
    SweepRow *row = &set->best[j];
    int i = (int)set->best_of[j];
    int pr = sweep_part_row(set->part[i], row);
    if (pr != 0) rc = -1;
    if (pr < 0) continue;
    set_row(set, i, row);
    double tps = NAN; /* and the days 10^12 tokens take at its rate */
    for (int k = 0; k < row->nfields; k++)
      if (!strcmp(row->fields[k].key, "tokens_per_s")) tps = row->fields[k].num;
    SweepField *f = arena_alloc(&set->arena, (size_t)(row->nfields + 1) * sizeof *f);
    memcpy(f, row->fields, (size_t)row->nfields * sizeof *f);
    f[row->nfields++] = (SweepField){"days_per_1T_tokens", 1e12 / tps / 86400, NULL, false};
    row->fields = f;
  }
  meta->objective = set->objective;
  meta->maximize = set->maximize;
  meta->points = set->points;
  meta->evaluated = end - begin;
  meta->kept = kept;
  meta->ndropped = set->nreasons;
  meta->dropped = drops;
  meta->elapsed = elapsed;
  meta->nbest = set->nbest, meta->best = set->best, meta->best_of = set->best_of, meta->best_axes = set->best_axes;
  return rc;
}
