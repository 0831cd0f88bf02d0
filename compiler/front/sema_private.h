/* sema_private.h - state shared by load.c (files and imports) and sema.c (checks). */
#ifndef LLMP_SEMA_PRIVATE_H
#define LLMP_SEMA_PRIVATE_H

#include <stdint.h>

#include "parse.h"
#include "sema.h"

typedef struct ImportEdge {
  AstNode *node;                /* the import statement */
  int target;                   /* file index, -1 if unresolved */
} ImportEdge;

struct SemaFile {
  SrcFile *src;
  char *real;                   /* canonical path, arena-owned: identity of the file */
  AstNode *root;
  ImportEdge *imports;
  int nimports;
  unsigned char *reach;         /* reach[j]: this file sees file j's declarations */
  int state;                    /* 0 new, 1 loading (on the import stack), 2 loaded */
};

typedef struct Deferred {       /* an evaluation put off for depth: see defer() in sema.c */
  Decl *decl;
  int field;                    /* schema index, or -1 for a let */
  AstNode *let;
} Deferred;

struct Sema {
  Arena arena;
  Interner in;
  Diag *diag;
  SemaOptions opt;
  SemaFile *files;
  int nfiles, capfiles;
  Decl **decls;                 /* named declarations, in source order */
  int ndecls, capdecls;
  Decl **table;                 /* open addressing by interned name */
  unsigned tcap;
  uint64_t *seen;          /* hashes of reported errors, to report each once */
  unsigned seencap, nseen;
  bool broken;                  /* a file is unreadable, incomplete, or an import failed */
  unsigned eval_depth;          /* nested field and let evaluations */
  Deferred *deferred;
  unsigned ndeferred, capdeferred;
};

/* load.c */
int load_root(Sema *s, const char *path);   /* file index or -1 */
int load_root_text(Sema *s, const char *name, const char *text);   /* imports resolve from "." */
void load_reach(Sema *s);

#endif
