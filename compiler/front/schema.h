/* schema.h - what each declaration kind, nested block and operator accepts.
 *
 * A schema is a table of FieldDefs: name, type, dimension or enumeration, range and
 * flags.  The semantic pass checks every field against it; docs/language.md documents the
 * same tables for users.  The tables are static and never freed. */
#ifndef LLMP_SCHEMA_H
#define LLMP_SCHEMA_H

#include <stdbool.h>

#include "ast.h"
#include "units.h"

typedef enum {
  FT_COUNT, /* whole number, no unit */
  FT_QTY,   /* number with the dimension `dim` (may be a real) */
  FT_REAL,  /* plain number, may be fractional */
  FT_BOOL,
  FT_STRING,
  FT_ENUM,     /* one word of `enums` */
  FT_ENUMLIST, /* list of words of `enums`, each at most once */
  FT_REF,      /* a declaration of kind `ref` */
  FT_SPAN,     /* a word of `enums`, or a count */
  FT_PATTERN,  /* a model's layers: blocks, `N * item`, nested lists */
  FT_COUNTLIST, /* a list of whole numbers >= 0 */
  FT_ANY,      /* the terminator of a table (a NULL name); never a field's type */
} FieldType;

enum {
  F_REQ = 1,      /* required where used (or, for an operator, a required argument) */
  F_DERIVED = 2,  /* computed: may be read, not set */
  F_POS = 4,      /* operator parameter that may be given by position */
  F_MIN_OPEN = 8, /* the minimum is exclusive */
  F_HAS_MIN = 16,
  F_HAS_MAX = 32,
};

typedef struct FieldDef {
  const char *name;
  FieldType type;
  Dim dim;                  /* FT_QTY */
  const char *const *enums; /* FT_ENUM FT_ENUMLIST FT_SPAN: NULL-terminated */
  DeclKind ref;             /* FT_REF */
  unsigned flags;
  double min, max;
} FieldDef;

typedef struct SubDef {
  const char *word; /* "tier", "measured" */
  const struct Schema *schema;
  bool labelled; /* tier NAME { } */
} SubDef;

typedef struct Schema {
  const char *name;       /* "model", "tier", "memory" */
  DeclKind kind;          /* DK_UNKNOWN for nested blocks and result records */
  const FieldDef *fields; /* terminated by a NULL name */
  const SubDef *subs;     /* terminated by a NULL word; may be NULL */
} Schema;

typedef enum {
#define X(e, s, p, c) OPK_##e,
#include "ops.def"
#undef X
  OPK_N
} OpKind;

typedef struct OpDef {
  const char *name;
  const FieldDef *params;
  bool collective;
} OpDef;

const Schema *schema_of(DeclKind k);
const Schema *schema_results(void);
const Schema *schema_memory(void);
/* memory.peak, memory.weights, ... */ /* names a sweep may read: iteration, memory, ... */
const FieldDef *schema_field(const Schema *s, const char *name);
int schema_field_index(const Schema *s, const FieldDef *f);
int schema_nfields(const Schema *s);
const SubDef *schema_sub(const Schema *s, const char *word);
const OpDef *op_lookup(const char *name);
extern const OpDef op_defs[OPK_N];
bool enum_has(const char *const *enums, const char *word);
/* "`a`, `b` or `c`" into buf. */
const char *enum_list(const char *const *enums, char *buf, unsigned n);

/* "Did you mean": the closest of the candidates within an edit distance that scales with
 * the length of the word, or NULL. */
typedef struct Suggest {
  const char *word, *best;
  unsigned best_dist;
  char hint[96]; /* suggest_hint's text (candidates are at most 63 characters) */
} Suggest;
void suggest_init(Suggest *s, const char *word);
void suggest_offer(Suggest *s, const char *candidate);
/* The tail of a message: "; did you mean `best`?", or " (did you mean `best`?)" with paren;
 * "" when nothing is close. */
const char *suggest_hint(Suggest *s, bool paren);

#endif
