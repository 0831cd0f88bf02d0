/* lsp_private.h - what the files of the language server share: rpc.c (framing, dispatch,
 * lifecycle), text.c (URIs, positions), analyze.c (a document's compilation and its
 * diagnostics), query.c (hover, definition, references, symbols) and edit.c (completion,
 * formatting, code actions).
 *
 * Ownership: the Server owns its documents; a document owns its text and its Analysis, which
 * owns the Diag (and so every SrcFile) and the Sema.  cJSON values built by a handler are
 * returned to rpc.c, which sends and deletes them. */
#ifndef LLMP_LSP_PRIVATE_H
#define LLMP_LSP_PRIVATE_H

#include <cjson/cJSON.h>
#include <stdbool.h>

#include "front/diag.h"
#include "front/sema.h"
#include "lsp.h"

typedef struct LspDiag { /* one diagnostic as the sink gave it */
  DiagLevel level;
  int file; /* SrcFile id, -1 with no position */
  Span span;
  char *path; /* the file named by a diagnostic with no position, or NULL */
  char *msg;
} LspDiag;

typedef struct Analysis {
  Diag d; /* its sink appends to diags */
  Sema *s;
  SrcFile *root; /* the document as compiled */
  LspDiag *diags;
  int ndiags, capdiags;
  int errors;
} Analysis;

typedef struct Doc {
  char *uri, *path; /* path: the file the URI names (the URI itself when not file:) */
  char *text;
  size_t len;
  long version;
  Analysis *an; /* NULL until analysed */
} Doc;

typedef struct Server {
  FILE *in, *out;
  SemaOptions so;
  LspCheckFn more; /* check's checks after sema, or NULL */
  int state;       /* 0 before initialize, 1 running, 2 after shutdown */
  bool gone;       /* the output failed: no one reads the answers */
  Doc **docs;
  int ndocs, capdocs;
} Server;

/* An error reply: a JSON-RPC code and its message (rpc.c sends it when code != 0). */
typedef struct LspError {
  int code;
  char msg[256];
} LspError;

enum { /* JSON-RPC and LSP error codes */
       RPC_PARSE_ERROR = -32700,
       RPC_INVALID_REQUEST = -32600,
       RPC_METHOD_NOT_FOUND = -32601,
       RPC_INVALID_PARAMS = -32602,
       RPC_INTERNAL_ERROR = -32603,
       LSP_SERVER_NOT_INITIALIZED = -32002,
       LSP_REQUEST_FAILED = -32803,
};

void lsp_fail(LspError *e, int code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
void lsp_notify(Server *sv, const char *method, cJSON *params); /* consumes params */

/* text.c */
char *lsp_uri_to_path(const char *uri);  /* malloc'd; the URI itself when not file: */
char *lsp_path_to_uri(const char *path); /* malloc'd file: URI of an absolute or relative path */
/* LSP positions count UTF-16 code units within a line. */
unsigned lsp_offset(const char *text, size_t len, long line, long character);
cJSON *lsp_position(const char *text, size_t len, unsigned off);
cJSON *lsp_range(const char *text, size_t len, Span sp);
cJSON *lsp_location(const char *uri, const char *text, size_t len, Span sp);
bool lsp_is_ident(int c);
/* The params' textDocument.uri and position as a byte offset into doc (NULL: failed). */
Doc *lsp_doc_at(Server *sv, cJSON *params, unsigned *off, LspError *e);
Doc *lsp_doc_of(Server *sv, cJSON *params, LspError *e);

/* analyze.c */
void lsp_analyze(Server *sv, Doc *doc); /* compiles the document and publishes its diagnostics */
void lsp_analysis_free(Analysis *an);

/* query.c */
cJSON *lsp_hover(Server *sv, cJSON *params, LspError *e);
cJSON *lsp_definition(Server *sv, cJSON *params, LspError *e);
cJSON *lsp_references(Server *sv, cJSON *params, LspError *e);
cJSON *lsp_symbols(Server *sv, cJSON *params, LspError *e);
/* A field's documentation from the schema: "count ≥ 1, required" and the like, into buf. */
const char *lsp_field_doc(const FieldDef *f, char *buf, size_t n);

/* A row of docs/language.md's field tables (query.c's field_docs.h, generated): the names
 * of a declaration kind's fields, or of a block's operators. */
typedef struct LspFieldDoc {
  const char *kind, *name, *type, *deflt, *notes; /* markdown; "" where the table has none */
} LspFieldDoc;
const LspFieldDoc *lsp_field_notes(const char *kind, const char *name);

/* edit.c */
cJSON *lsp_completion(Server *sv, cJSON *params, LspError *e);
cJSON *lsp_formatting(Server *sv, cJSON *params, LspError *e);
cJSON *lsp_code_action(Server *sv, cJSON *params, LspError *e);

#endif
