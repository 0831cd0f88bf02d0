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

/* The most rows a sweep keeps (`keep N`): llmp check refuses more. */
enum { SEMA_KEEP_MAX = 1000000 };

typedef struct SemaOptions {
  const char **include_dirs; /* -I folders, in order */
  int ninclude_dirs;
  const char *data_dir; /* overrides the installed data folder (tests) */
} SemaOptions;

Sema *sema_new(Diag *d, const SemaOptions *opt);
void sema_free(Sema *s);
/* Parses path and what it imports; checks only if parsing succeeded.  Returns errors. */
int sema_run(Sema *s, const char *path, bool check);
/* The root file's tree, after sema_run (NULL if it could not be read). */
AstNode *sema_root(Sema *s, SrcFile **file);
/* Parses and checks an in-memory root file (e.g. a list of imports) named `name`. */
int sema_run_text(Sema *s, const char *name, const char *text);

/* Reading a checked compilation (after sema_run without errors).  Values come in base units
 * (bytes, seconds, FLOP).  A field that is unset, or not known statically, reads as absent:
 * the functions return false / NULL. */
Decl *sema_find(Sema *s, const char *name, DeclKind kind); /* NULL if none of that kind */
const char *sema_decl_name(const Decl *d);
Decl *sema_parent(Decl *d); /* the declaration it extends, or NULL */
const char *sema_decl_path(Sema *s, const Decl *d); /* the file that declares it */
bool sema_number(Sema *s, Decl *d, const char *field, double *out);
const char *sema_word(Sema *s, Decl *d, const char *field); /* an enumeration word or a string */
Decl *sema_ref(Sema *s, Decl *d, const char *field);
bool sema_bool(Sema *s, Decl *d, const char *field, bool *out);
/* A list of words (plan.placement): writes up to max, returns how many there are, -1 if unset. */
int sema_word_list(Sema *s, Decl *d, const char *field, const char **words, int max);
/* A model's `pattern`: its distinct layer blocks into blocks (at most SEMA_PATTERN_BLOCKS,
 * numbered as they first appear) and each layer's block number into group (up to max
 * layers).  Returns the layers, or -1 if the model has no pattern or a count is unknown. */
enum { SEMA_PATTERN_BLOCKS = 4 };
int sema_pattern(Sema *s, Decl *d, Decl **blocks, int *nblocks, unsigned char *group, int max);
/* A list of whole numbers (plan.stage_layers): writes up to max, returns the count, -1 if unset. */
int sema_count_list(Sema *s, Decl *d, const char *field, double *out, int max);
/* A block's statements (lets and ops), for lowering. */
AstList sema_block_body(Decl *d);
/* Where a declaration is written (its name; for an inline extension, the declaration it
 * extends), for errors found after checking. */
void sema_decl_at(Sema *s, Decl *d, SrcFile **file, Span *span);
/* Where field is set for d (through extends: in the declaration that sets it); false if unset. */
bool sema_field_at(Sema *s, Decl *d, const char *field, SrcFile **file, Span *span);
/* Whether d is declared in the data folder's stdlib/ or hw/: not the user's own file. */
bool sema_in_data_dir(Sema *s, const Decl *d);
/* The root file's declarations of a kind, in source order: writes up to max, returns the count. */
int sema_root_decls(Sema *s, DeclKind kind, Decl **out, int max);

/* Nested blocks (tier, measured) as assembled: count, label, and their fields. */
int sema_nsubs(Decl *d, const char *word);
const char *sema_sub_label(Decl *d, const char *word, int i);
bool sema_sub_number(Sema *s, Decl *d, const char *word, int i, const char *field, double *out);
const char *sema_sub_word(Sema *s, Decl *d, const char *word, int i, const char *field);
bool sema_sub_bool(Sema *s, Decl *d, const char *word, int i, const char *field, bool *out);
/* The folder that holds stdlib/ and hw/: LLMP_DATA, else the one installed beside the binary,
 * or the source tree for the build tree's llmp. */
const char *sema_data_dir(const SemaOptions *opt);

/* --dump=sema: the root file's declarations with their assembled, evaluated fields. */
void sema_dump(Sema *s, FILE *out);
/* Declarations checked, for statistics. */
int sema_ndecls(Sema *s);
int sema_nfiles(Sema *s);
/* File i (0 .. sema_nfiles - 1) of the compilation: the root file and what it imports, in
 * the order they were loaded; NULL for one that could not be read. */
const SrcFile *sema_file(Sema *s, int i);

/* Resolves an import path as sema_run does (from_dir NULL: no importing file's folder);
 * returns a malloc'd path or NULL. */
char *sema_resolve_import(const SemaOptions *opt, const char *from_dir, const char *path);

#endif
