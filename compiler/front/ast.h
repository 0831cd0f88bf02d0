/* ast.h - the syntax tree of a .llmp file.
 *
 * One struct for every node: a kind, a byte-offset span, a sibling link for lists, an
 * optional interned name, and a union whose members are used by the kinds named beside
 * them (see ast_kinds.def).  Nodes live in the compilation's Arena and are never freed
 * one by one.  Expression depth is bounded at construction (AST_MAX_DEPTH), so every
 * recursive walker over expressions is bounded too; lists are walked iteratively. */
#ifndef LLMP_AST_H
#define LLMP_AST_H

#include <stdbool.h>

#include "arena.h"
#include "diag.h"

typedef enum {
#define X(k, s) AST_##k,
#include "ast_kinds.def"
#undef X
  AST_NKINDS
} AstKind;

/* Declaration kinds: X(KIND, "keyword"). ORDER DeclKind */
#define DECL_KINDS(X) \
  X(GPU, "gpu") \
  X(CLUSTER, "cluster") X(BLOCK, "block") X(MODEL, "model") X(PLAN, "plan") X(SCENARIO, "scenario") \
      X(SWEEP, "sweep") X(FRAMEWORK, "framework")
typedef enum {
  DK_UNKNOWN,
#define X(k, s) DK_##k,
  DECL_KINDS(X)
#undef X
      DK_N
} DeclKind;
extern const char *const decl_kind_names[DK_N];
DeclKind decl_kind_lookup(const char *word);

/* Binary and unary operators. ORDER BinOp */
/* clang-format off */
typedef enum { OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_MOD, OP_EQ, OP_NE, OP_LT, OP_LE,
               OP_GT, OP_GE, OP_AND, OP_OR, OP_NEG, OP_NOT } BinOp;
/* clang-format on */
extern const char *const binop_text[];

enum { AST_MAX_DEPTH = 512 }; /* nesting of expressions and blocks */

typedef struct AstNode AstNode;
typedef struct AstList {
  AstNode *first, *last;
  unsigned count;
} AstList;

struct AstNode {
  AstKind kind;
  Span span;
  AstNode *next;    /* next sibling in an AstList */
  const char *name; /* interned; see ast_kinds.def for each kind's use */
  Span name_span;
  unsigned short depth; /* height of the subtree, capped at AST_MAX_DEPTH + 1 */
  void *aux;            /* the semantic pass's annotation: inline declaration, let memo */
  union {
    struct { /* AST_DECL */
      const char *kind_word;
      Span kind_span;
      DeclKind kind;
      const char *parent; /* NULL without extends */
      Span parent_span;
      AstList body;
      SrcFile *file;
    } decl;
    struct {             /* AST_SUBBLOCK */
      const char *label; /* tier nvlink: "nvlink"; measured: NULL */
      Span label_span;
      AstList body;
    } sub;
    struct { /* AST_FIELD LET OP VARY REQUIRE MINIMIZE MAXIMIZE KEEP MEMBER
                               BINOP UNOP NAMEDARG */
      AstNode *lhs, *rhs;
      BinOp op;
    } bin;
    struct { /* AST_NUM */
      double value;
      bool is_int;      /* written without fraction or exponent */
      bool inexact;     /* an integer whose digits a double does not hold exactly */
      const char *unit; /* interned unit text ("GB/s"), or NULL */
      Span num_span, unit_span;
    } num;
    bool boolean; /* AST_BOOL */
    AstList list; /* AST_FILE LIST CALL EXTEND */
  } u;
};

/* Constructors used by the grammar actions; each builds one node, nothing else. */
typedef struct AstBuilder {
  Arena *arena;
  Interner *in;
  SrcFile *file;
  bool too_deep; /* set when a node passes AST_MAX_DEPTH */
  Span too_deep_at;
} AstBuilder;

AstNode *ast_new(AstBuilder *b, AstKind k, Span sp);
AstNode *ast_name(AstBuilder *b, AstKind k, Span sp, const char *name, Span name_span);
AstNode *ast_binop(AstBuilder *b, BinOp op, AstNode *l, AstNode *r);
AstNode *ast_unop(AstBuilder *b, BinOp op, AstNode *e, Span sp);
AstNode *ast_pair(AstBuilder *b, AstKind k, Span sp, AstNode *lhs, AstNode *rhs);
AstNode *ast_named(AstBuilder *b, AstKind k, Span sp, const char *name, Span ns, AstNode *rhs);
AstNode *ast_number(AstBuilder *b, Span sp, const char *text, size_t n);
AstNode *ast_with_unit(AstBuilder *b, AstNode *num, Span unit_span, const char *unit);
AstNode *ast_listnode(AstBuilder *b, AstKind k, Span sp, const char *name, Span ns, AstList l);
AstNode *ast_decl(AstBuilder *b, Span sp, const char *kind, Span ks, const char *name, Span ns, const char *parent,
                  Span ps, AstList body);
AstNode *ast_subblock(AstBuilder *b, Span sp, const char *word, Span ws, const char *label, Span ls, AstList body);
AstList ast_list1(AstNode *n);
AstList ast_append(AstList l, AstNode *n);

/* Writes the tree as indented text with spans (line:col) to out. */
void ast_dump(FILE *out, const AstNode *root, SrcFile *f);

#endif
