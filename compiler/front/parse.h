/* parse.h - running the flex scanner and bison parser over one source file.
 *
 * parse_file() returns the AST_FILE root (in the builder's arena), or NULL when the file
 * is not text (a NUL byte).  Errors are reported to the Diag.  After a syntax error
 * (p->syntax_errors > 0) the tree is partial and only good for more error reporting;
 * after lexical errors alone (a bad escape, a stray character, which are skipped) it is
 * complete and may be checked.  Comments are kept on the
 * side, in source order, for the formatter. */
#ifndef LLMP_PARSE_H
#define LLMP_PARSE_H

#include "ast.h"

typedef struct Parser {
  AstBuilder b;
  Diag *diag;
  unsigned off; /* scanner position (byte offset) */
  AstNode *root;
  unsigned syntax_errors; /* errors that leave the tree incomplete (lexical ones do not) */
  Span *opens;            /* open brackets ({[ not yet closed, innermost last: for hints */
  unsigned nopens, capopens;
  Span skipped; /* an opening bracket the last closing one left unclosed */
  bool has_skipped;
  Span *comments; /* arena-owned, in source order */
  unsigned ncomments, capcomments;
} Parser;

AstNode *parse_file(Parser *p, Arena *a, Interner *in, Diag *d, SrcFile *f);

/* A file parsed on its own, outside a compilation (llmp fmt; the parser's tests, benchmark
 * and fuzzer): the arena and interner are its own, released by parsed_free. */
typedef struct Parsed {
  Arena arena;
  Interner in;
  Parser p;
  AstNode *root; /* what parse_file returned, errors or not */
} Parsed;

/* Parses f into x, which must not move while the tree is in use.  Returns x->root when the
 * file parsed with no error reported, else NULL. */
AstNode *parse_alone(Parsed *x, Diag *d, SrcFile *f);
void parsed_free(Parsed *x);

#endif
