/* fmt.h - the canonical layout of a parsed file.  fmt_file() returns a malloc'd,
 * NUL-terminated text (the caller frees it); the tree must be free of syntax errors. */
#ifndef LLMP_FMT_H
#define LLMP_FMT_H

#include "ast.h"

char *fmt_file(const AstNode *root, const SrcFile *f, const Span *comments, unsigned ncomments, size_t *len);

#endif
