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
 * libFuzzer's mutations insert and erase bytes, which breaks a body's Content-Length: the
 * server then reads the next message from the wrong byte, and a document's text could only
 * be overwritten, never typed into.  So three mutations in four are framed again after
 * libFuzzer's (LLVMFuzzerCustomMutator): each "Content-Length: N" gets the number of bytes
 * from the end of its header block to the next "Content-Length: ".  The fourth keeps its
 * framing as mutated, for the server's framing errors.
 *
 * Imports resolve as the server's do: from the document's folder (its URI may name any),
 * then the data folder, which is the source tree (its stdlib/ and hw/, the files real
 * sessions import; LLMP_PATH and LLMP_DATA are unset and no -I folders are given).  The
 * server only reads files (regular ones: front/load.c), so a run writes nothing; an input
 * whose results depend on the machine has to name a file outside the checkout by its path.
 *
 * Build: tests/fuzz/CMakeLists.txt (LLMP_FUZZ=ON, clang); seeds: corpus_lsp/ (editor sessions
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
size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);
size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed);

static const char LENGTH[] = "Content-Length: ";
enum { NLENGTH = sizeof LENGTH - 1 };

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc;
  (void)argv;
  unsetenv("LLMP_PATH");
  unsetenv("LLMP_DATA");
  return 0;
}

/* The first occurrence of the n bytes of key in [p, end), or end. */
static const uint8_t *find(const uint8_t *p, const uint8_t *end, const char *key, size_t n) {
  for (; (size_t)(end - p) >= n; p++)
    if (!memcmp(p, key, n)) return p;
  return end;
}

/* Appends len bytes to out (n of max used); false when they do not fit. */
static bool put(uint8_t *out, size_t max, size_t *n, const void *src, size_t len) {
  if (len > max - *n) return false;
  memcpy(out + *n, src, len);
  *n += len;
  return true;
}

/* data framed again into out (max bytes): each header's length is its body's, the body
 * running to the next header.  Returns the new size, or 0 when it would not fit. */
static size_t reframe(const uint8_t *data, size_t size, uint8_t *out, size_t max) {
  const uint8_t *end = data + size, *p = data, *h = find(data, end, LENGTH, NLENGTH);
  size_t n = 0;
  while (h < end) {
    const uint8_t *digits = h + NLENGTH, *e = digits, *next = find(digits, end, LENGTH, NLENGTH);
    while (e < next && *e >= '0' && *e <= '9') e++;
    const uint8_t *body = find(e, next, "\r\n\r\n", 4);
    if (body < next) {
      char num[24];
      int w = snprintf(num, sizeof num, "%zu", (size_t)(next - body - 4));
      if (!put(out, max, &n, p, (size_t)(digits - p)) || !put(out, max, &n, num, (size_t)w)) return 0;
      p = e;
    }
    if (!put(out, max, &n, p, (size_t)(next - p))) return 0;
    p = h = next;
  }
  return put(out, max, &n, p, (size_t)(end - p)) ? n : 0;
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed) {
  size = LLVMFuzzerMutate(data, size, max_size);
  if (seed % 4 == 0 || !size) return size;
  uint8_t *out = malloc(max_size);
  size_t n = out ? reframe(data, size, out, max_size) : 0;
  if (n) {
    memcpy(data, out, n);
    size = n;
  }
  free(out);
  return size;
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
  size_t i = 0;
  while (i < len) {
    const char *p = out + i;
    if (len - i < NLENGTH || memcmp(p, LENGTH, NLENGTH)) fail("bytes that are not a header", p, len - i);
    char *end;
    unsigned long long n = strtoull(p + NLENGTH, &end, 10);
    size_t at = (size_t)(end - out);
    if (end == p + NLENGTH || len - at < 4 || memcmp(end, "\r\n\r\n", 4) || n > len - at - 4)
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
