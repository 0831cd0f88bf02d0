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
/* Parses and checks path as sema_run does, with text in place of the file's contents (an
 * editor's unsaved buffer). */
int sema_run_buffer(Sema *s, const char *path, const char *text, size_t len);

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

/* What an editor asks (sema_query.c), after sema_run with or without errors.  Names given
 * must be interned ones (an AstNode's name). */
AstNode *sema_file_root(Sema *s, int i);              /* NULL for a file that did not parse */
Decl *sema_decl_named(Sema *s, const char *name);     /* the declaration of that name, any kind */
Decl *sema_decl_of(const AstNode *n);                 /* of an AST_DECL or AST_EXTEND node, or NULL */
/* The file that an AST_IMPORT node of file i loaded (NULL: none; unresolved or unread). */
const SrcFile *sema_import_file(Sema *s, int i, const AstNode *import);
DeclKind sema_decl_kind(const Decl *d);
const Schema *sema_decl_schema(const Decl *d);
bool sema_decl_assembled(const Decl *d); /* its extends resolved: its fields can be read */
/* Field i of d's schema: the statement that sets it, inherited or its own (NULL: unset), and
 * in *owner the declaration that wrote it. */
AstNode *sema_field_stmt(Decl *d, int i, Decl **owner);
typedef enum { SV_UNKNOWN, SV_NUMBER, SV_BOOL, SV_STRING, SV_WORD, SV_LIST, SV_DECL } SemaValueKind;
typedef struct SemaValue {
  SemaValueKind kind; /* SV_UNKNOWN: unset, not known statically, or in error */
  double num;         /* SV_NUMBER (base units), SV_BOOL */
  Dim dim;            /* SV_NUMBER */
  bool is_int;
  const char *text; /* SV_STRING, SV_WORD */
  Decl *decl;       /* SV_DECL */
  unsigned count;   /* SV_LIST: items */
} SemaValue;
SemaValue sema_field_value(Sema *s, Decl *d, int i);

/* Resolves an import path as sema_run does (from_dir NULL: no importing file's folder);
 * returns a malloc'd path or NULL. */
char *sema_resolve_import(const SemaOptions *opt, const char *from_dir, const char *path);

/* A declaration extending base with one field set: to value, an expression written in the
 * file of owner (a sweep's `vary` element), or to ref, a declaration.  Its fields are
 * evaluated, and a scenario's or sweep's plan checked against its gpu, reporting to d (not
 * the Sema's sink): a sweep's structural point (cluster.nodes, plan.dtype, the cluster).
 * NULL if base has no such field. */
Decl *sema_derive(Sema *s, Decl *base, const char *field, AstNode *value, Decl *ref, Decl *owner, Diag *d);

#endif
