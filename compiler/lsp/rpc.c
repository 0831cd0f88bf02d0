/* rpc.c - the server's loop: framing, JSON-RPC, the lifecycle and the table of methods.
 *
 *   message  = header* "\r\n" body           header = NAME ":" VALUE "\r\n"
 *   body     = Content-Length bytes of JSON  (a request has an id; a notification has none)
 *
 * A header block without a usable Content-Length, a body that is not JSON or not a request,
 * and an unknown method each get an error reply (id null when the id is unknown), and the
 * loop reads on: lines that are not headers are skipped up to the next Content-Length.
 * Before `initialize` requests get ServerNotInitialized; after `shutdown`, InvalidRequest. */
#include <ctype.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "alloc.h"
#include "lsp.h"
#include "lsp_private.h"
#include "strbuf.h"

enum { MAX_BODY = 64 << 20, MAX_LINE = 8192 };

void lsp_fail(LspError *e, int code, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  e->code = code;
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
}

static void send_json(Server *sv, cJSON *msg) {
  char *text = cJSON_PrintUnformatted(msg);
  if (!text) alloc_fail("JSON text");
  fprintf(sv->out, "Content-Length: %zu\r\n\r\n%s", strlen(text), text);
  if (fflush(sv->out) != 0 || ferror(sv->out)) sv->gone = true; /* the client closed its end */
  cJSON_free(text);
}

void lsp_notify(Server *sv, const char *method, cJSON *params) {
  cJSON *m = cJSON_CreateObject();
  cJSON_AddStringToObject(m, "jsonrpc", "2.0");
  cJSON_AddStringToObject(m, "method", method);
  cJSON_AddItemToObject(m, "params", params);
  send_json(sv, m);
  cJSON_Delete(m);
}

/* A response: result (consumed) or the error e; id may be NULL (null). */
static void respond(Server *sv, const cJSON *id, cJSON *result, const LspError *e) {
  cJSON *m = cJSON_CreateObject();
  cJSON_AddStringToObject(m, "jsonrpc", "2.0");
  cJSON_AddItemToObject(m, "id", id ? cJSON_Duplicate(id, 1) : cJSON_CreateNull());
  if (e && e->code) {
    cJSON *err = cJSON_AddObjectToObject(m, "error");
    cJSON_AddNumberToObject(err, "code", e->code);
    cJSON_AddStringToObject(err, "message", e->msg);
    cJSON_Delete(result);
  } else {
    cJSON_AddItemToObject(m, "result", result ? result : cJSON_CreateNull());
  }
  send_json(sv, m);
  cJSON_Delete(m);
}

static void respond_error(Server *sv, const cJSON *id, int code, const char *msg) {
  LspError e;
  lsp_fail(&e, code, "%s", msg);
  respond(sv, id, NULL, &e);
}

/* --- framing ---------------------------------------------------------------------------- */

/* One line of input without its "\r\n", cut at MAX_LINE, into buf; its length in *n (it may
 * hold NUL bytes).  False at the end of the input. */
static bool read_line(FILE *in, char *buf, size_t cap, size_t *n) {
  int c;
  bool any = false;
  *n = 0;
  while ((c = getc(in)) != EOF) {
    any = true;
    if (c == '\n') break;
    if (*n + 1 < cap) buf[(*n)++] = (char)c;
  }
  if (*n && buf[*n - 1] == '\r') (*n)--;
  buf[*n] = '\0';
  return any;
}

/* The first "content-length:" in the n bytes of line, in any case, or NULL. */
static char *find_length(char *line, size_t n) {
  for (size_t i = 0; i + 15 <= n; i++)
    if (strncasecmp(line + i, "content-length:", 15) == 0) return line + i;
  return NULL;
}

/* Reads header lines up to the blank line that ends them.  Returns the Content-Length, -1 at
 * the end of the input, or -2 for a block without a usable one (*why says what was wrong).
 * A line that is not a header is skipped, but a "Content-Length:" inside it (the next
 * message glued to a bad body) still counts. */
static long read_headers(FILE *in, const char **why, bool *skipped) {
  static const char no_length[] = "a message without a Content-Length header";
  char line[MAX_LINE];
  long length = -2;
  size_t n;
  bool seen = false;
  *skipped = false;
  *why = no_length;
  for (;;) {
    if (!read_line(in, line, sizeof line, &n)) return -1;
    if (!n) {
      if (seen) break;
      continue; /* blank lines between messages */
    }
    seen = true;
    char *h = find_length(line, n);
    if (!h) {
      size_t w = strspn(line, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-");
      if (!w || line[w] != ':') { /* another header (Content-Type) is fine */
        *skipped = true;
        if (*why == no_length) *why = "bytes that are not a message header"; /* a bad length says more */
      }
      continue;
    }
    if (h != line) *skipped = true;
    char *v = h + 15, *end;
    while (*v == ' ' || *v == '\t') v++;
    long len = isdigit((unsigned char)*v) ? strtol(v, &end, 10) : -1;
    if (len < 0 || end != line + n || len > MAX_BODY) {
      length = -2;
      *why = len > MAX_BODY ? "a Content-Length over 64 MiB" : "a Content-Length that is not a whole number";
    } else {
      length = len;
    }
  }
  return length;
}

/* --- methods ---------------------------------------------------------------------------- */

static cJSON *initialize(Server *sv, cJSON *params, LspError *e) {
  (void)params, (void)e;
  sv->state = 1;
  cJSON *r = cJSON_CreateObject(), *caps = cJSON_AddObjectToObject(r, "capabilities");
  cJSON *sync = cJSON_AddObjectToObject(caps, "textDocumentSync");
  cJSON_AddBoolToObject(sync, "openClose", 1);
  cJSON_AddNumberToObject(sync, "change", 1); /* Full: the whole text each time */
  cJSON_AddBoolToObject(caps, "hoverProvider", 1);
  cJSON_AddBoolToObject(caps, "definitionProvider", 1);
  cJSON_AddBoolToObject(caps, "referencesProvider", 1);
  cJSON_AddBoolToObject(caps, "documentSymbolProvider", 1);
  cJSON_AddBoolToObject(caps, "documentFormattingProvider", 1);
  cJSON *ca = cJSON_AddObjectToObject(caps, "codeActionProvider");
  cJSON *kinds = cJSON_AddArrayToObject(ca, "codeActionKinds");
  cJSON_AddItemToArray(kinds, cJSON_CreateString("quickfix"));
  cJSON *cp = cJSON_AddObjectToObject(caps, "completionProvider");
  cJSON *trig = cJSON_AddArrayToObject(cp, "triggerCharacters");
  cJSON_AddItemToArray(trig, cJSON_CreateString("\""));
  cJSON_AddItemToArray(trig, cJSON_CreateString("/"));
  cJSON *info = cJSON_AddObjectToObject(r, "serverInfo");
  cJSON_AddStringToObject(info, "name", "llmp");
  cJSON_AddStringToObject(info, "version", LLMP_VERSION);
  return r;
}

static cJSON *shutdown_(Server *sv, cJSON *params, LspError *e) {
  (void)params, (void)e;
  sv->state = 2;
  return cJSON_CreateNull();
}

static void doc_free(Doc *d) {
  lsp_analysis_free(d->an);
  free(d->uri);
  free(d->path);
  free(d->text);
  free(d);
}

static void set_text(Doc *d, const char *text) {
  free(d->text);
  d->len = strlen(text);
  d->text = xstrdup(text);
}

static cJSON *did_open(Server *sv, cJSON *params, LspError *e) {
  cJSON *td = cJSON_GetObjectItemCaseSensitive(params, "textDocument");
  cJSON *uri = cJSON_GetObjectItemCaseSensitive(td, "uri"), *text = cJSON_GetObjectItemCaseSensitive(td, "text");
  cJSON *ver = cJSON_GetObjectItemCaseSensitive(td, "version");
  if (!cJSON_IsString(uri) || !cJSON_IsString(text)) {
    lsp_fail(e, RPC_INVALID_PARAMS, "didOpen needs textDocument.uri and textDocument.text");
    return NULL;
  }
  Doc *d = NULL;
  for (int i = 0; i < sv->ndocs && !d; i++)
    if (!strcmp(sv->docs[i]->uri, uri->valuestring)) d = sv->docs[i];
  if (!d) {
    d = xcalloc(1, sizeof *d);
    d->uri = xstrdup(uri->valuestring);
    d->path = lsp_uri_to_path(d->uri);
    XGROW(sv->docs, sv->ndocs + 1, sv->capdocs);
    sv->docs[sv->ndocs++] = d;
  }
  set_text(d, text->valuestring);
  d->version = cJSON_IsNumber(ver) ? (long)ver->valuedouble : 0;
  lsp_analyze(sv, d);
  return NULL;
}

static cJSON *did_change(Server *sv, cJSON *params, LspError *e) {
  Doc *d = lsp_doc_of(sv, params, e);
  cJSON *changes = cJSON_GetObjectItemCaseSensitive(params, "contentChanges");
  if (!d) return NULL;
  cJSON *last = cJSON_IsArray(changes) ? cJSON_GetArrayItem(changes, cJSON_GetArraySize(changes) - 1) : NULL;
  cJSON *text = cJSON_GetObjectItemCaseSensitive(last, "text");
  if (!cJSON_IsString(text) || cJSON_GetObjectItemCaseSensitive(last, "range")) {
    lsp_fail(e, RPC_INVALID_PARAMS, "didChange needs contentChanges with the whole text (the server syncs in full)");
    return NULL;
  }
  set_text(d, text->valuestring);
  cJSON *ver = cJSON_GetObjectItemCaseSensitive(cJSON_GetObjectItemCaseSensitive(params, "textDocument"), "version");
  if (cJSON_IsNumber(ver)) d->version = (long)ver->valuedouble;
  lsp_analyze(sv, d);
  return NULL;
}

static cJSON *did_close(Server *sv, cJSON *params, LspError *e) {
  Doc *d = lsp_doc_of(sv, params, e);
  if (!d) return NULL;
  cJSON *p = cJSON_CreateObject();
  cJSON_AddStringToObject(p, "uri", d->uri);
  cJSON_AddArrayToObject(p, "diagnostics");
  lsp_notify(sv, "textDocument/publishDiagnostics", p);
  int i = 0;
  while (sv->docs[i] != d) i++;
  memmove(&sv->docs[i], &sv->docs[i + 1], (size_t)(sv->ndocs - i - 1) * sizeof *sv->docs);
  sv->ndocs--;
  doc_free(d);
  return NULL;
}

/* A save may change what other open documents import: each is compiled again. */
static cJSON *did_save(Server *sv, cJSON *params, LspError *e) {
  (void)params, (void)e;
  for (int i = 0; i < sv->ndocs; i++) lsp_analyze(sv, sv->docs[i]);
  return NULL;
}

typedef struct Method {
  const char *name;
  cJSON *(*fn)(Server *sv, cJSON *params, LspError *e);
  bool notification;
} Method;

static const Method methods[] = {
    {"initialize", initialize, false},
    {"shutdown", shutdown_, false},
    {"textDocument/didOpen", did_open, true},
    {"textDocument/didChange", did_change, true},
    {"textDocument/didClose", did_close, true},
    {"textDocument/didSave", did_save, true},
    {"textDocument/hover", lsp_hover, false},
    {"textDocument/definition", lsp_definition, false},
    {"textDocument/references", lsp_references, false},
    {"textDocument/documentSymbol", lsp_symbols, false},
    {"textDocument/completion", lsp_completion, false},
    {"textDocument/formatting", lsp_formatting, false},
    {"textDocument/codeAction", lsp_code_action, false},
};

/* Handles one parsed message.  Returns -1 to go on, else the exit status (after `exit`). */
static int handle(Server *sv, cJSON *msg) {
  cJSON *id = cJSON_GetObjectItemCaseSensitive(msg, "id");
  cJSON *method = cJSON_GetObjectItemCaseSensitive(msg, "method");
  cJSON *params = cJSON_GetObjectItemCaseSensitive(msg, "params");
  bool is_request = id != NULL;
  if (id && !cJSON_IsNumber(id) && !cJSON_IsString(id)) {
    respond_error(sv, NULL, RPC_INVALID_REQUEST, "a request's id is a number or a string");
    return -1;
  }
  if (!cJSON_IsObject(msg) || !cJSON_IsString(method)) {
    if (!cJSON_IsObject(msg) || !cJSON_GetObjectItemCaseSensitive(msg, "result"))
      respond_error(sv, id, RPC_INVALID_REQUEST, "a message is a JSON object with a method");
    return -1; /* a response to a request of ours: the server sends none */
  }
  const char *name = method->valuestring;
  if (!strcmp(name, "exit")) return sv->state == 2 ? 0 : 1;
  if (sv->state == 0 && strcmp(name, "initialize")) {
    if (is_request) respond_error(sv, id, LSP_SERVER_NOT_INITIALIZED, "the server is not initialized yet");
    return -1;
  }
  if (sv->state == 2) {
    if (is_request) respond_error(sv, id, RPC_INVALID_REQUEST, "the server is shut down: only exit is accepted");
    return -1;
  }
  if (sv->state == 1 && !strcmp(name, "initialize")) {
    if (is_request) respond_error(sv, id, RPC_INVALID_REQUEST, "the server is already initialized");
    return -1;
  }
  for (size_t i = 0; i < sizeof methods / sizeof methods[0]; i++) {
    const Method *m = &methods[i];
    if (strcmp(m->name, name)) continue;
    if (m->notification == is_request) break; /* a request sent as a notification or back */
    if (params && !cJSON_IsObject(params) && !cJSON_IsArray(params)) {
      if (is_request) respond_error(sv, id, RPC_INVALID_PARAMS, "params is an object or an array");
      return -1;
    }
    LspError e = {0, ""};
    cJSON *r = m->fn(sv, params, &e);
    if (is_request)
      respond(sv, id, r, &e);
    else
      cJSON_Delete(r);
    return -1;
  }
  if (is_request) {
    char text[300];
    snprintf(text, sizeof text, "unknown method `%.200s`", name);
    respond_error(sv, id, RPC_METHOD_NOT_FOUND, text);
  }
  return -1; /* an unknown notification ($/cancelRequest, $/setTrace, ...) is ignored */
}

int lsp_serve(FILE *in, FILE *out, const SemaOptions *opt, LspCheckFn more) {
  Server sv = {in, out, *opt, more, 0, false, NULL, 0, 0};
  int rc = -1;
  while (rc < 0 && !sv.gone) {
    const char *why;
    bool skipped;
    long n = read_headers(in, &why, &skipped);
    if (n == -1) break;
    if (n == -2) {
      respond_error(&sv, NULL, RPC_PARSE_ERROR, why);
      continue;
    }
    if (skipped) respond_error(&sv, NULL, RPC_PARSE_ERROR, "bytes that are not a message header were skipped");
    char *body = xmalloc((size_t)n + 1);
    size_t got = fread(body, 1, (size_t)n, in);
    body[got] = '\0';
    if (got < (size_t)n) { /* the input ended inside a body */
      free(body);
      break;
    }
    cJSON *msg = cJSON_ParseWithLength(body, (size_t)n);
    free(body);
    if (!msg)
      respond_error(&sv, NULL, RPC_PARSE_ERROR, "the body is not JSON");
    else
      rc = handle(&sv, msg);
    cJSON_Delete(msg);
  }
  for (int i = 0; i < sv.ndocs; i++) doc_free(sv.docs[i]);
  free(sv.docs);
  return rc < 0 ? 1 : rc;
}
