/* hash.h - FNV-1a, the one hash of llmp: over bytes, and over whole 64-bit words (one step
 * per word, for keys that are already numbers). */
#ifndef LLMP_HASH_H
#define LLMP_HASH_H

#include <stddef.h>
#include <stdint.h>

#define HASH_BASIS 14695981039346656037ull
#define HASH_PRIME 1099511628211ull

static inline uint64_t hash_word(uint64_t h, uint64_t x) { return (h ^ x) * HASH_PRIME; }

static inline uint64_t hash_bytes(uint64_t h, const void *p, size_t n) {
  const unsigned char *s = p;
  for (size_t i = 0; i < n; i++) h = hash_word(h, s[i]);
  return h;
}

static inline uint64_t hash_str(uint64_t h, const char *s) {
  for (; *s; s++) h = hash_word(h, (unsigned char)*s);
  return h;
}

#endif
