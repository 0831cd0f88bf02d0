/* sweep_emit.c - `llmp sweep --emit PATH`: the kept plans as .llmp scenarios that `llmp run`
 * evaluates to the same bits.
 *
 * A plan's scenario imports the sweep's file and sets model, cluster, plan (and framework)
 * as the sweep's scenario does, as written, with the fields the sweep sets per point (its
 * axes and its `let`s) as an inline extension:
 *
 *   scenario search_1 {
 *     model   = gpt3_175b
 *     cluster = selene { nodes = 128 }
 *     plan    = base_plan { tp = 8; pp = 8; dp = 16 }
 *   }
 *
 * A `let`'s value is the one the point's report echoes; a let of a field the report does not
 * echo is refused by name. */
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "alloc.h"
#include "fileio.h"
#include "strbuf.h"
#include "sweep.h"

static const char *const parts[] = {"model", "cluster", "plan", "framework"};

/* The statement `part = ...` of the sweep as assembled (its own, else its scenario's, ...),
 * and the file it is in; NULL if none. */
static AstNode *part_field(Sema *s, Decl *d, const char *part, SrcFile **file) {
  for (; d; d = sema_parent(d))
    for (AstNode *c = sema_block_body(d).first; c; c = c->next)
      if (c->kind == AST_FIELD && !strcmp(c->name, part)) {
        Span at;
        sema_decl_at(s, d, file, &at);
        return c;
      }
  return NULL;
}

static void put_text(StrBuf *b, const SrcFile *f, Span sp) {
  if (f && sp.end <= f->len && sp.start < sp.end) strbuf_put(b, f->text + sp.start, sp.end - sp.start);
}

/* A `let`'s value for a point, from its report: 0, or -1 if the report does not echo it. */
static int let_value(const Report *r, const char *field, char *buf, size_t n) {
  static const char *const ints[] = {"tp",          "pp",           "dp",  "cp", "ep", "virtual_stages",
                                     "micro_batch", "global_batch", "zero"};
  const int vals[] = {r->tp, r->pp, r->dp, r->cp, r->ep, r->virtual_stages, r->micro_batch, r->global_batch, r->zero};
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
    if (!strcmp(field, ints[i])) {
      snprintf(buf, n, "%d", vals[i]);
      return 0;
    }
  const char *word = !strcmp(field, "schedule")            ? r->schedule
                     : !strcmp(field, "recompute")         ? r->recompute
                     : !strcmp(field, "dtype")             ? r->dtype
                     : !strcmp(field, "sequence_parallel") ? (r->sequence_parallel ? "true" : "false")
                     : !strcmp(field, "cuda_graphs")       ? (r->cuda_graphs ? "true" : "false")
                     : !strcmp(field, "overlap_ep")        ? (r->overlap_ep ? "true" : "false")
                                                           : NULL;
  if (!word) return -1;
  snprintf(buf, n, "%s", word);
  return 0;
}

/* The fields of `part` a point sets, "tp = 8  dp = 16", into b; 0, or -1 after reporting. */
static int point_overrides(Sweep *sw, uint64_t point, const Report *r, const char *part, StrBuf *b) {
  char buf[64];
  for (int a = 0; a < sweep_axes(sw); a++) {
    const char *root, *field, *v = sweep_axis_at(sw, a, point, &root, &field, buf, sizeof buf);
    if (strcmp(root, part)) continue;
    if (!field || strchr(field, '.')) { /* `vary cluster in [...]`, `vary cluster.gpu.memory in [...]` */
      diag_plain(sweep_diag(sw), sema_decl_path(sweep_sema(sw), sweep_decl(sw)),
                 "--emit cannot write a sweep that varies `%s%s%s`: it writes the fields of a declaration", root,
                 field ? "." : "", field ? field : "");
      return -1;
    }
    strbuf_printf(b, "%s%s = %s", b->n ? "; " : "", field, v);
  }
  for (AstNode *c = sema_block_body(sweep_decl(sw)).first; c; c = c->next) {
    AstNode *p = c->kind == AST_LET ? c->u.bin.lhs : NULL;
    if (!p || p->kind != AST_MEMBER || p->u.bin.lhs->kind != AST_NAME || strcmp(p->u.bin.lhs->name, part)) continue;
    if (strcmp(part, "plan") || let_value(r, p->name, buf, sizeof buf) < 0) {
      SrcFile *f;
      Span at;
      sema_decl_at(sweep_sema(sw), sweep_decl(sw), &f, &at);
      diag_error(sweep_diag(sw), f, c->span, "--emit cannot write `let %s.%s`: a plan's report does not echo its value",
                 part, p->name);
      return -1;
    }
    strbuf_printf(b, "%s%s = %s", b->n ? "; " : "", p->name, buf);
  }
  return 0;
}

/* `  part = VALUE` with the point's fields of part: 0, or -1 after reporting. */
static int emit_part(Sweep *sw, uint64_t point, const Report *r, const char *part, StrBuf *out) {
  Sema *s = sweep_sema(sw);
  SrcFile *f = NULL;
  AstNode *c = part_field(s, sweep_decl(sw), part, &f);
  StrBuf set = {0};
  int rc = point_overrides(sw, point, r, part, &set);
  AstNode *v = c ? c->u.bin.rhs : NULL;
  if (rc == 0 && v && set.n && v->kind != AST_NAME && v->kind != AST_EXTEND) {
    diag_error(sweep_diag(sw), f, v->span, "--emit cannot extend this `%s` with the point's fields: name a declaration",
               part);
    rc = -1;
  }
  if (rc == 0 && v) {
    strbuf_printf(out, "  %-9s = ", part);
    if (!set.n) {
      put_text(out, f, v->span);
    } else {
      strbuf_printf(out, "%s { ", v->name);
      for (AstNode *x = v->kind == AST_EXTEND ? v->u.list.first : NULL; x; x = x->next) {
        bool overridden = false; /* by a field the point sets */
        for (int a = 0; a < sweep_axes(sw) && x->kind == AST_FIELD; a++) {
          const char *root, *field;
          char buf[64];
          sweep_axis_at(sw, a, point, &root, &field, buf, sizeof buf);
          overridden |= !strcmp(root, part) && !strcmp(field, x->name);
        }
        for (AstNode *l = sema_block_body(sweep_decl(sw)).first; l && x->kind == AST_FIELD; l = l->next)
          overridden |= l->kind == AST_LET && l->u.bin.lhs->kind == AST_MEMBER &&
                        !strcmp(l->u.bin.lhs->name, x->name) && !strcmp(l->u.bin.lhs->u.bin.lhs->name, part);
        if (overridden) continue;
        put_text(out, f, x->span);
        strbuf_put(out, "; ", 2);
      }
      strbuf_printf(out, "%s }", set.p);
    }
    strbuf_put(out, "\n", 1);
  }
  strbuf_free(&set);
  return rc;
}

/* One plan's scenario, named NAME_RANK, into out: 0, or -1 after reporting. */
static int emit_plan(Sweep *sw, const SweepRow *row, int rank, StrBuf *out) {
  Report r;
  if (sweep_point_report(sw, row->point, &r) < 0) return -1;
  strbuf_printf(out, "\n# plan %d of sweep %s, point %llu\nscenario %s_%d {\n", rank, sema_decl_name(sweep_decl(sw)),
                (unsigned long long)row->point, sema_decl_name(sweep_decl(sw)), rank);
  for (size_t i = 0; i < sizeof parts / sizeof parts[0]; i++)
    if (emit_part(sw, row->point, &r, parts[i], out) < 0) return -1;
  strbuf_put(out, "}\n", 2);
  return 0;
}

/* The head of a file: what it is, and the import of the sweep's file (by its full path). */
static void emit_head(Sweep *sw, StrBuf *out) {
  const char *path = sema_decl_path(sweep_sema(sw), sweep_decl(sw));
  char *full = realpath(path, NULL);
  strbuf_printf(out,
                "# Plans of sweep %s (%s), written by `llmp sweep --emit`: `llmp run` on this file\n"
                "# gives each plan's figures as the sweep ranked them.\nimport \"%s\"\n",
                sema_decl_name(sweep_decl(sw)), path, full ? full : path);
  free(full);
}

static int write_file(Sweep *sw, const char *path, const StrBuf *text) {
  const char *why = "cannot write";
  if (atomic_write(path, text->p ? text->p : "", text->n, &why) != 0) {
    diag_plain(sweep_diag(sw), path, "cannot write the plans: %s", why);
    return -1;
  }
  return 0;
}

int sweep_emit(Sweep *sw, const SweepRow *rows, int n, const char *path) {
  struct stat st;
  size_t len = strlen(path);
  bool dir = (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) || (len && path[len - 1] == '/');
  if (!dir && (len < 5 || strcmp(path + len - 5, ".llmp"))) {
    diag_plain(sweep_diag(sw), path, "--emit writes a .llmp file, or a folder (that exists, or ends in `/`)");
    return -1;
  }
  if (dir && stat(path, &st) != 0 && mkdir(path, 0777) != 0) {
    diag_plain(sweep_diag(sw), path, "cannot create the folder: %s", strerror(errno));
    return -1;
  }
  StrBuf text = {0};
  int rc = 0;
  if (!dir) emit_head(sw, &text);
  for (int i = 0; i < n && rc == 0; i++) {
    if (dir) emit_head(sw, &text);
    rc = emit_plan(sw, &rows[i], i + 1, &text);
    if (rc == 0 && dir) {
      StrBuf name = {0};
      strbuf_printf(&name, "%s%s%s_%d.llmp", path, path[len - 1] == '/' ? "" : "/", sema_decl_name(sweep_decl(sw)),
                    i + 1);
      rc = write_file(sw, name.p, &text);
      strbuf_free(&name);
      text.n = 0;
    }
  }
  if (rc == 0 && !dir) rc = write_file(sw, path, &text);
  strbuf_free(&text);
  return rc;
}
