/* sema_private.h - what the files of the semantic pass share: load.c (files and imports),
 * sema.c (declarations, extends, statement and scenario checks), sema_eval.c (values of
 * expressions and fields) and sema_read.c (reading the result). */
#ifndef LLMP_SEMA_PRIVATE_H
#define LLMP_SEMA_PRIVATE_H

#include <stdint.h>

#include "parse.h"
#include "sema.h"

typedef struct ImportEdge {
  AstNode *node; /* the import statement */
  int target;    /* file index, -1 if unresolved */
} ImportEdge;

struct SemaFile {
  SrcFile *src;
  char *real; /* canonical path, arena-owned: identity of the file */
  AstNode *root;
  ImportEdge *imports;
  int nimports;
  unsigned char *reach; /* reach[j]: this file sees file j's declarations */
  int state;            /* 0 new, 1 loading (on the import stack), 2 loaded */
};

typedef struct Deferred { /* an evaluation put off for depth: see defer() in sema_eval.c */
  Decl *decl;
  int field; /* schema index, or -1 for a let */
  AstNode *let;
} Deferred;

struct Sema { /* files, decls and deferred grow by XGROW; the rest is in the arena */
  Arena arena;
  Interner in;
  Diag *diag;
  SemaOptions opt;
  SemaFile *files;
  int nfiles, capfiles;
  Decl **decls; /* named declarations, in source order */
  int ndecls, capdecls;
  Decl **table; /* open addressing by interned name */
  unsigned tcap;
  uint64_t *seen; /* hashes of reported errors, to report each once */
  unsigned seencap, nseen;
  bool broken;         /* a file is unreadable, incomplete, or an import failed */
  unsigned eval_depth; /* nested field and let evaluations */
  Deferred *deferred;
  unsigned ndeferred, capdeferred;
};

/* Values carry a type and, when known statically, a constant; an unknown value (a field a
 * template leaves unset, a plan field inside a block) is typed but not folded.  An error
 * value is silent: the error that made it was reported where it arose. */
typedef enum { T_ERROR, T_NUM, T_BOOL, T_STR, T_ENUM, T_LIST, T_DECL } TKind;

typedef struct Value {
  TKind t;
  bool known;               /* constant known statically */
  bool is_int;              /* T_NUM: a whole number (known) or a count (unknown) */
  Dim dim;                  /* T_NUM */
  double num;               /* T_NUM, T_BOOL */
  const char *str;          /* T_STR text, T_ENUM word */
  Decl *decl;               /* T_DECL, known */
  const Schema *schema;     /* T_DECL: the kind's schema (known or not) */
  AstNode *list;            /* T_LIST, known */
  const char *const *enums; /* T_ENUM: the words it may take, when known */
} Value;

static inline Value v_error(void) { return (Value){0}; } /* T_ERROR */

typedef struct SubEntry {
  AstNode *node; /* AST_SUBBLOCK */
  Decl *owner;
} SubEntry;

struct Decl {
  AstNode *node; /* AST_DECL, or AST_EXTEND for an inline extension */
  const char *name;
  DeclKind kind;
  const Schema *schema;
  int file; /* index of the file that declares it */
  const char *parent_name;
  Span parent_span;
  Decl *parent;
  int ext_state; /* 0 new, 1 resolving, 2 done, 3 failed */
  bool checked;
  AstNode **fields;      /* per schema field: the AST_FIELD that sets it, or NULL */
  Decl **owners;         /* per schema field: the declaration that wrote it */
  Value *vals;           /* per schema field: memoised value */
  unsigned char *vstate; /* 0 not evaluated, 1 evaluating, 2 done */
  SubEntry *subs;
  int nsubs;
  AstNode **lets; /* block: lets by name (find_let) */
  unsigned letcap;
};

typedef enum { ENV_DECL, ENV_BLOCK, ENV_SWEEP } EnvKind;

typedef struct Env {
  EnvKind kind;
  Decl *self;  /* the declaration whose fields bare names refer to */
  Decl *owner; /* the declaration that wrote the expression */
} Env;

/* The file that declares d, and the body of a declaration (an AST_DECL's or an inline
 * extension's). */
static inline SrcFile *file_of(Sema *s, Decl *d) { return s->files[d->file].src; }
static inline AstList body_of(Decl *d) { return d->node->kind == AST_DECL ? d->node->u.decl.body : d->node->u.list; }

/* Interned names as keys of open-addressing tables. */
static inline unsigned ptr_hash(const void *p) {
  unsigned long x = (unsigned long)(uintptr_t)p;
  x ^= x >> 17;
  x *= 0x9E3779B97F4A7C15ul;
  return (unsigned)(x >> 32);
}

/* sema.c: errors, the declaration table, extends. */
/* An error in an expression, once per place and message; says for whom when inherited. */
bool sema_err_env(Sema *s, Env *e, Span sp, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void sema_note_decl(Sema *s, Decl *d, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
Decl *sema_table_get(Sema *s, const char *name);
/* A declaration by name as seen from file fi; reports "not imported" itself (*reported). */
Decl *sema_lookup(Sema *s, int fi, const char *name, Span at, bool *reported);
void sema_suggest_decls(Sema *s, Suggest *sg, DeclKind kind); /* of a kind, or all (DK_UNKNOWN) */
/* load.c: for `kind name` that no file of the compilation declares, the tail of the message
 * that names the file of the installed hw/ or stdlib/ declaring it ("; ... add `import
 * \"hw/systems/eos\"`") in buf, or NULL. */
const char *sema_import_hint(Sema *s, const char *kind, const char *name, char *buf, size_t n);
bool sema_resolve_extends(Sema *s, Decl *d);
Decl *sema_inline_decl(Sema *s, Env *e, AstNode *n); /* `perlmutter { nodes = 32 }` */

/* sema_eval.c: values. */
extern const char *const eval_block_roots[]; /* the names a block sees besides its lets */
Value eval_expr(Sema *s, Env *e, AstNode *n);
/* The expression n as the value of field fd, checked; `what` names it in messages. */
Value eval_check(Sema *s, Env *e, AstNode *n, const FieldDef *fd, const char *what);
/* Field i of d (schema order), evaluated in d and memoised. */
Value eval_field(Sema *s, Decl *d, int i);
Value eval_field_named(Sema *s, Decl *d, const char *name);
Value eval_let(Sema *s, Env *e, AstNode *let);
Value eval_root(const char *name); /* model, plan, cluster, memory, or a result of a sweep */
/* One round of the evaluations deferred for depth (list was s->deferred), deepest first. */
void eval_deferred(Sema *s, Deferred *list, unsigned n);
const char *eval_describe(Value v, char *buf, size_t n); /* "a count", "the word `x`" */

/* load.c */
int load_root(Sema *s, const char *path);                                      /* file index or -1 */
int load_root_text(Sema *s, const char *name, const char *text);               /* no folder: not from "." */
int load_root_buffer(Sema *s, const char *path, const char *text, size_t len); /* path's text in memory */
void load_reach(Sema *s);

#endif
