/* hw.c - filling RtGpu and RtCluster from checked declarations. */
#include "hw.h"

#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>

#include "alloc.h"
#include "hash.h"
#include "sorted.h"
#include "strbuf.h"

/* Every gpu, cluster and calibration built, without limit: a file of many scenarios makes a
 * cluster per inline extension (`eos { nodes = 16 }`).  Each is allocated alone and never
 * moves: callers keep the pointers, and a cluster points at its gpu. */
typedef struct Built {
  Decl *decl;      /* what it was built from; NULL for a calibration and a variant */
  void *item;      /* RtGpu, RtCluster or RtCalib */
  const void *key; /* a variant's cluster: the cluster it was made from */
} Built;

typedef struct BuiltList {
  Built *v;
  int n, cap;
} BuiltList;

struct HwSet {
  Sema *s;
  Diag *d;
  const SemaOptions *opt;
  BuiltList gpus, clusters, calibs;
  BuiltList variants; /* hw_cluster_variant's: a gpu, then its cluster */
  char **calib_dirs;  /* the folder of each of calibs */
  bool without_calib; /* hw_without_calibration(): tables named are not loaded */
};

static void *built_find(const BuiltList *l, const Decl *decl) {
  for (int i = 0; i < l->n; i++)
    if (l->v[i].decl == decl) return l->v[i].item;
  return NULL;
}

/* Appends a copy of the size bytes at item (or item itself, size 0); returns the copy. */
static void *built_add(BuiltList *l, Decl *decl, void *item, size_t size) {
  XGROW(l->v, l->n + 1, l->cap);
  if (size) item = memcpy(xmalloc(size), item, size);
  l->v[l->n++] = (Built){decl, item, NULL};
  return item;
}

static void built_free(BuiltList *l, void (*f)(void *)) {
  for (int i = 0; i < l->n; i++) f(l->v[i].item);
  free(l->v);
}

static void calib_free(void *c) { rt_calib_free(c); }

HwSet *hw_new(Sema *s, Diag *d, const SemaOptions *opt) {
  HwSet *h = xcalloc(1, sizeof *h);
  h->s = s;
  h->d = d;
  h->opt = opt;
  return h;
}

void hw_without_calibration(HwSet *h) { h->without_calib = true; }

void hw_free(HwSet *h) {
  if (!h) return;
  for (int i = 0; i < h->calibs.n; i++) free(h->calib_dirs[i]);
  free(h->calib_dirs);
  built_free(&h->calibs, calib_free);
  built_free(&h->gpus, free);
  built_free(&h->clusters, free);
  built_free(&h->variants, free);
  free(h);
}

static const RtCalib *load_calib_named(HwSet *h, Decl *decl, const char *name, bool *failed);

/* The folder of `calibration = "NAME"`, loaded; NULL when the declaration names none. */
static const RtCalib *load_calib(HwSet *h, Decl *decl, bool *failed) {
  return load_calib_named(h, decl, sema_word(h->s, decl, "calibration"), failed);
}

/* Why `calibration = "name"` (folder dir) does not load: at the field (else the declaration);
 * for a folder that is not there, where llmp looked and the folders hw/calibration/ has. */
static void calib_error(HwSet *h, Decl *decl, const char *name, const char *dir, const char *err) {
  SrcFile *f;
  Span sp;
  if (!sema_field_at(h->s, decl, "calibration", &f, &sp)) sema_decl_at(h->s, decl, &f, &sp);
  struct stat st;
  if (stat(dir, &st) == 0) {
    diag_error(h->d, f, sp, "%s `%s`: cannot load its calibration tables: %s", "declaration", sema_decl_name(decl),
               err);
    return;
  }
  char base[4096], list[1024] = "";
  snprintf(base, sizeof base, "%s/hw/calibration", sema_data_dir(h->opt));
  size_t len = 0;
  DIR *dp = opendir(base);
  char **names = NULL;
  int n = 0, cap = 0;
  for (struct dirent *e; dp && (e = readdir(dp));)
    if (e->d_name[0] != '.') {
      XGROW(names, n + 1, cap);
      names[n++] = xstrdup(e->d_name);
    }
  if (dp) closedir(dp);
  if (n) qsort(names, (size_t)n, sizeof *names, cmp_cstr);
  for (int i = 0; i < n; i++) str_appendf(list, sizeof list, &len, "%s%s", i ? ", " : "", names[i]);
  dir_list_free(names, n);
  diag_error(h->d, f, sp,
             "calibration folder `%s` not found: looked for %s (a name without `/` is a folder of %s; one with "
             "`/` is relative to the file that names it)%s%s",
             name, dir, base, n ? "; the folders there: " : "", list);
}

/* The folder `name` (NULL: none), relative to decl's file when it holds a `/`, loaded. */
static const RtCalib *load_calib_named(HwSet *h, Decl *decl, const char *name, bool *failed) {
  *failed = false;
  if (!name || h->without_calib) return NULL;
  char dir[4096];
  if (strchr(name, '/')) {
    const char *path = sema_decl_path(h->s, decl);
    const char *slash = strrchr(path, '/');
    if (name[0] == '/' || !slash)
      snprintf(dir, sizeof dir, "%s", name);
    else
      snprintf(dir, sizeof dir, "%.*s/%s", (int)(slash - path), path, name);
  } else {
    snprintf(dir, sizeof dir, "%s/hw/calibration/%s", sema_data_dir(h->opt), name);
  }
  for (int i = 0; i < h->calibs.n; i++) /* each folder is loaded (or reported) once */
    if (!strcmp(h->calib_dirs[i], dir)) {
      *failed = !h->calibs.v[i].item;
      return h->calibs.v[i].item;
    }
  char err[512] = "";
  RtCalib *c = rt_calib_load(dir, err, sizeof err);
  if (!c) {
    calib_error(h, decl, name, dir, err);
    *failed = true;
  }
  int cap = h->calibs.cap;
  built_add(&h->calibs, NULL, c, 0);
  if (h->calibs.cap != cap || !h->calib_dirs)
    h->calib_dirs = xrealloc(h->calib_dirs, (size_t)h->calibs.cap * sizeof *h->calib_dirs);
  h->calib_dirs[h->calibs.n - 1] = xstrdup(dir);
  return c;
}

uint64_t hw_tables_hash(const HwSet *h, uint64_t hash) {
  for (int i = 0; i < h->calibs.n; i++) {
    if (!h->calibs.v[i].item) continue; /* failed to load: reported */
    char **names;
    int n = dir_list(h->calib_dirs[i], ".tbl", &names);
    hash = hash_word(hash, (uint64_t)n);
    for (int k = 0; k < n; k++) {
      char path[4200], buf[8192];
      snprintf(path, sizeof path, "%s/%s", h->calib_dirs[i], names[k]);
      hash = hash_str(hash, names[k]);
      FILE *f = fopen(path, "rb");
      size_t got;
      while (f && (got = fread(buf, 1, sizeof buf, f)) > 0) hash = hash_bytes(hash, buf, got);
      hash = hash_word(hash, !f || ferror(f)); /* unreadable now: another identity */
      if (f) fclose(f);
    }
    if (n > 0) dir_list_free(names, n);
  }
  return hash;
}

static bool need(HwSet *h, Decl *decl, const char *field, double *out) {
  if (sema_number(h->s, decl, field, out)) return true;
  diag_plain(h->d, NULL, "`%s` has no value for `%s`", sema_decl_name(decl), field);
  return false;
}

/* A count the runtime holds in an int: false after saying so when it passes INT_MAX. */
static bool int_of(HwSet *h, Decl *decl, const char *field, double x, int *out) {
  if (x <= INT_MAX) return *out = (int)x, true;
  diag_plain(h->d, NULL, "`%s` of `%s` is %.0f: the model takes at most %d", field, sema_decl_name(decl), x, INT_MAX);
  return false;
}

/* ORDER RtDtype: mxfp8 runs at the fp8 rate (Blackwell's block-scaled fp8 MMA does), nvfp4 at
 * the fp4 one */
static const char *const peak_fields[RT_NDTYPES] = {"peak_fp32", "peak_tf32", "peak_fp16", "peak_bf16",
                                                    "peak_fp8",  "peak_fp8",  "peak_fp4"};

static const RtGpu *gpu_of(HwSet *h, Decl *decl) {
  const RtGpu *known = built_find(&h->gpus, decl);
  if (known) return known;
  RtGpu g = {0};
  double sms;
  g.name = sema_decl_name(decl);
  if (!need(h, decl, "memory", &g.memory) || !need(h, decl, "memory_bandwidth", &g.memory_bandwidth) ||
      !need(h, decl, "sms", &sms) || !need(h, decl, "peak_fp16", &g.peak[RT_FP16]) ||
      !int_of(h, decl, "sms", sms, &g.sms))
    return NULL;
  for (int t = 0; t < RT_NDTYPES; t++)
    if (t != RT_FP16) sema_number(h->s, decl, peak_fields[t], &g.peak[t]);
  sema_number(h->s, decl, "l2_cache", &g.l2_cache);
  sema_number(h->s, decl, "peak_exp", &g.peak_exp);
  sema_number(h->s, decl, "matmul_ceiling", &g.matmul_ceiling);
  sema_number(h->s, decl, "sustained_compute", &g.sustained_compute);
  sema_number(h->s, decl, "sustained_compute_fp8", &g.sustained_fp8);
  sema_number(h->s, decl, "sustained_compute_fp4", &g.sustained_fp4);
  bool failed;
  g.calib = load_calib(h, decl, &failed);
  if (failed) return NULL;
  return built_add(&h->gpus, decl, &g, sizeof g);
}

/* The declaration of that kind named name, or NULL after saying where such are declared. */
static Decl *hw_find(HwSet *h, const char *name, DeclKind kind, const char *what, const char *where) {
  Decl *decl = sema_find(h->s, name, kind);
  if (!decl) diag_plain(h->d, NULL, "no %s named `%s` (%s, or give a file with -f)", what, name, where);
  return decl;
}

const RtGpu *hw_gpu(HwSet *h, const char *name) {
  Decl *decl = hw_find(h, name, DK_GPU, "gpu", "the gpus are declared in hw/gpus.llmp");
  return decl ? gpu_of(h, decl) : NULL;
}

/* One tier: span node (0), system (-1) or a count of nodes. */
static bool tier_of(HwSet *h, Decl *decl, int i, RtTier *t) {
  const char *w = sema_sub_word(h->s, decl, "tier", i, "span");
  double span = 0, links = 0;
  t->name = sema_sub_label(decl, "tier", i);
  if (w)
    t->span_nodes = !strcmp(w, "node") ? 0 : -1;
  else if (sema_sub_number(h->s, decl, "tier", i, "span", &span) && !int_of(h, decl, "span", span, &t->span_nodes))
    return false;
  if (!sema_sub_number(h->s, decl, "tier", i, "bandwidth", &t->bandwidth) ||
      !sema_sub_number(h->s, decl, "tier", i, "latency", &t->latency)) {
    diag_plain(h->d, NULL, "tier `%s` of `%s` has no bandwidth or latency", t->name, sema_decl_name(decl));
    return false;
  }
  if (sema_sub_number(h->s, decl, "tier", i, "links_per_node", &links) &&
      !int_of(h, decl, "links_per_node", links, &t->links_per_node))
    return false;
  sema_sub_number(h->s, decl, "tier", i, "efficiency", &t->efficiency);
  bool red;
  if (sema_sub_bool(h->s, decl, "tier", i, "switch_reduction", &red)) t->switch_reduction = red ? 1 : -1;
  const char *topo = sema_sub_word(h->s, decl, "tier", i, "topology"); /* a ring or mesh: no switch */
  if (topo && (!strcmp(topo, "ring") || !strcmp(topo, "mesh"))) t->switch_reduction = -1;
  return true;
}

const RtCluster *hw_cluster(HwSet *h, const char *name) {
  Decl *decl = hw_find(h, name, DK_CLUSTER, "cluster", "the systems are declared in hw/systems/");
  return decl ? hw_cluster_decl(h, decl) : NULL;
}

const RtCluster *hw_cluster_decl(HwSet *h, Decl *decl) {
  const char *name = sema_decl_name(decl);
  const RtCluster *known = built_find(&h->clusters, decl);
  if (known) return known;
  RtCluster c = {0};
  double gpn, nodes;
  c.name = sema_decl_name(decl);
  Decl *g = sema_ref(h->s, decl, "gpu");
  if (!g || !(c.gpu = gpu_of(h, g)) || !need(h, decl, "gpus_per_node", &gpn) || !need(h, decl, "nodes", &nodes) ||
      !int_of(h, decl, "gpus_per_node", gpn, &c.gpus_per_node) || !int_of(h, decl, "nodes", nodes, &c.nodes))
    return NULL;
  int n = sema_nsubs(decl, "tier");
  if (n > RT_MAX_TIERS) {
    diag_plain(h->d, NULL, "cluster `%s` has %d tiers; the runtime models at most %d", name, n, RT_MAX_TIERS);
    return NULL;
  }
  for (int i = 0; i < n; i++)
    if (!tier_of(h, decl, i, &c.tiers[i])) return NULL;
  c.ntiers = n;
  bool failed;
  c.calib = load_calib(h, decl, &failed);
  if (failed) return NULL;
  return built_add(&h->clusters, decl, &c, sizeof c);
}

/* Whether two gpus carry the same stack calibration (tables, sustained figures, fusions). */
static bool same_tuning(const RtGpu *a, const RtGpu *b) {
  return a->calib == b->calib && a->sustained_compute == b->sustained_compute && a->sustained_fp8 == b->sustained_fp8 &&
         a->sustained_fp4 == b->sustained_fp4 && a->attention_rate == b->attention_rate && a->fused == b->fused;
}

const RtCluster *hw_cluster_variant(HwSet *h, const RtCluster *c, const RtGpu *g) {
  const RtGpu *o = c->gpu;
  if (same_tuning(g, o)) return c;
  for (int i = 0; i + 1 < h->variants.n; i += 2) { /* made from c before, the same */
    const RtGpu *v = h->variants.v[i].item;
    if (h->variants.v[i + 1].key == c && same_tuning(v, g))
      return h->variants.v[i + 1].item;
  }
  RtGpu *gp = built_add(&h->variants, NULL, (void *)g, sizeof *g);
  RtCluster v = *c;
  v.gpu = gp;
  RtCluster *vp = built_add(&h->variants, NULL, &v, sizeof v);
  h->variants.v[h->variants.n - 1].key = c;
  return vp;
}

const RtCalib *hw_calib_named(HwSet *h, const char *calibration, Decl *decl, bool *failed) {
  return load_calib_named(h, decl, calibration, failed);
}

/* The text of the root of the compilation, malloc'd: an import of every .llmp of hw/ that
 * declares hardware (hw/gpus.llmp, every file of hw/systems in name order), then of the -f
 * files. */
static char *hw_root_text(const SemaOptions *so, const char *const *files, int nfiles) {
  StrBuf t = {0};
  strbuf_puts(&t, "import \"hw/gpus\"\n");
  char dir[4096];
  snprintf(dir, sizeof dir, "%s/hw/systems", sema_data_dir(so));
  char **names;
  int n = dir_list(dir, ".llmp", &names);
  if (n == -2) alloc_fail("hw/systems");
  for (int i = 0; i < n; i++) strbuf_printf(&t, "import \"hw/systems/%.*s\"\n", (int)strlen(names[i]) - 5, names[i]);
  dir_list_free(names, n);
  for (int i = 0; i < nfiles; i++) {
    char *real = realpath(files[i], NULL);
    strbuf_printf(&t, "import \"%s\"\n", real ? real : files[i]);
    free(real);
  }
  return t.p;
}

HwSet *hw_session_open(HwSession *x, const char *name, const SemaOptions *so, const char *const *files, int nfiles) {
  diag_init(&x->diag, stderr);
  x->opt = *so;
  x->sema = sema_new(&x->diag, &x->opt);
  x->hw = NULL;
  char *root = hw_root_text(&x->opt, files, nfiles);
  if (!sema_run_text(x->sema, name, root)) x->hw = hw_new(x->sema, &x->diag, &x->opt);
  free(root);
  return x->hw;
}

void hw_session_close(HwSession *x) {
  hw_free(x->hw);
  sema_free(x->sema);
  diag_flush(&x->diag);
  diag_free(&x->diag);
}
