/* lsp.h - `llmp lsp`: a Language Server Protocol server over a pair of streams.
 *
 * lsp_serve() reads JSON-RPC messages (Content-Length framing) from in and answers on out
 * until `exit` or the end of the input.  Every request gets a result or a protocol error;
 * a malformed message gets an error reply and the server reads on.  Diagnostics come from
 * the same front end as `llmp check` (docs/editors.md, "Language server"). */
#ifndef LLMP_LSP_H
#define LLMP_LSP_H

#include <stdio.h>

#include "front/sema.h"

/* What `llmp check` runs on a file after sema finds no error (cli/check.c), so that the
 * server reports what check reports; returns the errors it reported to d. */
typedef int (*LspCheckFn)(Sema *s, Diag *d, const SemaOptions *opt);

/* Serves until `exit` or the end of in.  more: check's further checks, or NULL when check
 * has none.  Returns the exit status: 0 after `shutdown` then `exit`, 1 otherwise (LSP's
 * rule). */
int lsp_serve(FILE *in, FILE *out, const SemaOptions *opt, LspCheckFn more);

#endif
