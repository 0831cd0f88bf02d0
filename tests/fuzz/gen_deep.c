/* gen_deep.c - writes the pathological inputs of the fuzz.front.deep test.
 *
 *   gen_deep KIND OUT
 *
 *   parens    `model m { layers = ` then 100,000 `(`, `1`, 100,000 `)`, ` }`
 *   plus      `model m { layers = 1` then 1,000,000 ` + 1`, ` }` (a left-deep chain)
 *   garbage   one 1 MiB line of pseudo-random bytes (no NUL, no newline), then a newline
 *   brackets  `plan p { placement = ` then 100,000 `[`, `tp`, 100,000 `]`, ` }`
 *   minus     `model m { layers = ` then 100,000 `-`, `1 }` (right-deep unary chain)
 *   extend    `scenario s { model = ` then 100,000 nested inline extensions `a { b = `, ...
 *   decls     100,000 declarations `model mN extends mN-1 { layers = N }` (a long extends chain)
 *
 * The output is the same on every machine (a fixed xorshift seed).  No Python: CI machines
 * may lack it. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void repeat(FILE *f, const char *s, long n) {
  for (long i = 0; i < n; i++) fputs(s, f);
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fprintf(stderr, "usage: gen_deep parens|plus|garbage|brackets|minus|extend|decls OUT\n");
    return 2;
  }
  const char *kind = argv[1];
  FILE *f = fopen(argv[2], "wb");
  if (!f) {
    perror(argv[2]);
    return 1;
  }
  if (!strcmp(kind, "parens")) {
    fputs("model m { layers = ", f);
    repeat(f, "(", 100000);
    fputs("1", f);
    repeat(f, ")", 100000);
    fputs(" }\n", f);
  } else if (!strcmp(kind, "plus")) {
    fputs("model m { layers = 1", f);
    repeat(f, " + 1", 1000000);
    fputs(" }\n", f);
  } else if (!strcmp(kind, "garbage")) {
    uint64_t x = 0x9E3779B97F4A7C15u;
    for (long i = 0; i < 1L << 20; i++) {
      x ^= x << 13;
      x ^= x >> 7;
      x ^= x << 17;
      unsigned char c = (unsigned char)(x >> 56);
      if (c == 0 || c == '\n') c = (unsigned char)('A' + (x & 15));
      fputc(c, f);
    }
    fputc('\n', f);
  } else if (!strcmp(kind, "brackets")) {
    fputs("plan p { placement = ", f);
    repeat(f, "[", 100000);
    fputs("tp", f);
    repeat(f, "]", 100000);
    fputs(" }\n", f);
  } else if (!strcmp(kind, "minus")) {
    fputs("model m { layers = ", f);
    repeat(f, "-", 100000);
    fputs("1 }\n", f);
  } else if (!strcmp(kind, "extend")) {
    fputs("scenario s { model = ", f);
    repeat(f, "a { b = ", 100000);
    fputs("1", f);
    repeat(f, " }", 100000);
    fputs(" }\n", f);
  } else if (!strcmp(kind, "decls")) {
    fputs("model m0 { layers = 1 }\n", f);
    for (long i = 1; i < 100000; i++) fprintf(f, "model m%ld extends m%ld { layers = %ld }\n", i, i - 1, i);
  } else {
    fprintf(stderr, "gen_deep: unknown kind `%s`\n", kind);
    fclose(f);
    return 2;
  }
  if (fclose(f) != 0) {
    perror(argv[2]);
    return 1;
  }
  return 0;
}
