/* fuzz_lsp.c - libFuzzer harness for `llmp lsp`'s message handling (compiler/lsp/).
 *
 * Each input is the byte stream a client writes to the server: header blocks and bodies, as
 * many messages as it holds.  lsp_serve reads it from a memory stream and writes to another,
 * with check's lowering after sema as `llmp lsp` runs it (cli_check_lowering), so that
 * framing, JSON, the lifecycle, the order of requests, documents' text (didOpen and
 * didChange run the front end and lowering on any text) and every request kind meet any
 * input.  The server must not crash, leak, hang or trip a sanitizer, and the harness aborts
 * unless
 *   - lsp_serve returns 0 or 1 (the exit statuses of `llmp lsp`), and
 *   - what it wrote is a sequence of messages, each "Content-Length: N\r\n\r\n" and N bytes
 *     of a JSON object with "jsonrpc": "2.0" and either a string method (a notification) or
 *     an id with exactly one of result and error, an error having a numeric code and a
 *     string message.
 *
 * Imports resolve as the server's do: from the document's folder (its URI may name any),
 * then the data folder, which is the source tree (its stdlib/ and hw/, the files real
 * sessions import; LLMP_PATH and LLMP_DATA are unset and no -I folders are given).  The
 * server only reads files (regular ones: front/load.c), so a run writes nothing; an input
 * whose results depend on the machine has to name a file outside the checkout by its path.
 *
 * Build: tests/fuzz/CMakeLists.txt (LLMP_FUZZ=ON, clang); seeds: corpus_lsp/ (real sessions,
 * written by gen_lsp_corpus.py); dictionary: lsp.dict; long runs: HARNESS=lsp tests/fuzz/run.sh.
 * As a plain program, `fuzz_lsp FILE...` runs each FILE once (libFuzzer's driver). */
#include <cjson/cJSON.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "lsp/lsp.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  unsetenv("LLMP_PATH");
  unsetenv("LLMP_DATA");
  return 0;
}

static void fail(const char *what, const char *msg, size_t n) {
  fprintf(stderr, "fuzz_lsp: the server wrote %s: %.*s\n", what, (int)(n < 400 ? n : 400), msg);
  abort();
}

/* One message body: a JSON-RPC notification or response. */
static void check_body(const char *body, size_t n) {
  cJSON *m = cJSON_ParseWithLength(body, n);
  if (!cJSON_IsObject(m)) fail("a body that is not a JSON object", body, n);
  cJSON *ver = cJSON_GetObjectItemCaseSensitive(m, "jsonrpc");
  cJSON *method = cJSON_GetObjectItemCaseSensitive(m, "method"), *id = cJSON_GetObjectItemCaseSensitive(m, "id");
  cJSON *result = cJSON_GetObjectItemCaseSensitive(m, "result"), *err = cJSON_GetObjectItemCaseSensitive(m, "error");
  if (!cJSON_IsString(ver) || strcmp(ver->valuestring, "2.0")) fail("a message without \"jsonrpc\": \"2.0\"", body, n);
  if (method) {
    if (!cJSON_IsString(method) || id || result || err) fail("a malformed notification", body, n);
  } else {
    if (!cJSON_IsNumber(id) && !cJSON_IsString(id) && !cJSON_IsNull(id)) fail("a response without an id", body, n);
    if (!result == !err) fail("a response without exactly one of result and error", body, n);
    if (err && (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(err, "code")) ||
                !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(err, "message"))))
      fail("an error without a code and a message", body, n);
  }
  cJSON_Delete(m);
}

/* The server's output: "Content-Length: N\r\n\r\n" and N bytes, again and again. */
static void check_output(const char *out, size_t len) {
  static const char head[] = "Content-Length: ";
  size_t i = 0;
  while (i < len) {
    const char *p = out + i;
    if (len - i < sizeof head - 1 || memcmp(p, head, sizeof head - 1)) fail("bytes that are not a header", p, len - i);
    char *end;
    unsigned long long n = strtoull(p + sizeof head - 1, &end, 10);
    size_t at = (size_t)(end - out);
    if (end == p + sizeof head - 1 || len - at < 4 || memcmp(end, "\r\n\r\n", 4) || n > len - at - 4)
      fail("a header without a whole body", p, len - i);
    check_body(end + 4, (size_t)n);
    i = at + 4 + (size_t)n;
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!size) return 0; /* fmemopen wants a buffer of at least one byte */
  FILE *in = fmemopen((void *)(uintptr_t)data, size, "r");
  char *out_text = NULL;
  size_t out_len = 0;
  FILE *out = open_memstream(&out_text, &out_len);
  if (!in || !out) {
    perror("fuzz_lsp: fmemopen or open_memstream");
    abort();
  }
  SemaOptions so = {NULL, 0, LLMP_SOURCE_DIR};
  int rc = lsp_serve(in, out, &so, cli_check_lowering);
  fclose(in);
  if (fclose(out) != 0) {
    perror("fuzz_lsp: the output stream");
    abort();
  }
  if (rc != 0 && rc != 1) {
    fprintf(stderr, "fuzz_lsp: lsp_serve returned %d, not an exit status of llmp lsp\n", rc);
    abort();
  }
  check_output(out_text, out_len);
  free(out_text);
  return 0;
}
