/* sema.h - loading a file with its imports, and checking it.
 *
 * sema_run() loads the root file, resolves its imports (recursively: against the
 * importing file's folder, -I folders, LLMP_PATH, then the installed data folder),
 * parses them all, and checks names, extends, fields, units and divisibility.  Every
 * error goes to the Diag; the result is the number of errors.  All memory is in the
 * Sema's arena and the Diag's files: sema_free() and diag_free() release it. */
#ifndef LLMP_SEMA_H
#define LLMP_SEMA_H

#include "ast.h"
#include "schema.h"

typedef struct Decl Decl;
typedef struct SemaFile SemaFile;
typedef struct Sema Sema;

typedef struct SemaOptions {
  const char **include_dirs;    /* -I folders, in order */
  int ninclude_dirs;
  const char *data_dir;         /* overrides the installed data folder (tests) */
} SemaOptions;

Sema *sema_new(Diag *d, const SemaOptions *opt);
void sema_free(Sema *s);
/* Parses path and what it imports; checks only if parsing succeeded.  Returns errors. */
int sema_run(Sema *s, const char *path, bool check);
/* The root file's tree, after sema_run (NULL if it could not be read). */
AstNode *sema_root(Sema *s, SrcFile **file);
/* --dump=sema: the root file's declarations with their assembled, evaluated fields. */
void sema_dump(Sema *s, FILE *out);
/* Declarations checked, for statistics. */
int sema_ndecls(Sema *s);
int sema_nfiles(Sema *s);

/* Resolves an import path as sema_run does; returns a malloc'd path or NULL. */
char *sema_resolve_import(const SemaOptions *opt, const char *from_dir, const char *path);

#endif
