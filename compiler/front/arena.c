/* arena.c - bump allocation in chunks of at least 64 KiB, and string interning.
 * (QBE's alloc()/freeall(): a compilation allocates freely and frees once.) */
#include "arena.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"
#include "hash.h"

struct ArenaChunk {
  ArenaChunk *next;
  size_t cap, off;
  _Alignas(16) unsigned char data[];
};

enum { CHUNK_MIN = 64 * 1024, ALIGN = 16 };

void arena_init(Arena *a) {
  a->head = NULL;
  a->used = 0;
}

void arena_free(Arena *a) {
  ArenaChunk *c = a->head;
  while (c) {
    ArenaChunk *n = c->next;
    free(c);
    c = n;
  }
  a->head = NULL;
  a->used = 0;
}

static ArenaChunk *chunk_new(size_t need) {
  size_t cap = need > CHUNK_MIN ? need : CHUNK_MIN;
  ArenaChunk *c = xmalloc(sizeof *c + cap);
  c->cap = cap;
  c->off = 0;
  return c;
}

void *arena_alloc(Arena *a, size_t size) {
  if (size > SIZE_MAX / 2) alloc_fail("arena request"); /* rounding up would wrap */
  size = (size + ALIGN - 1) & ~(size_t)(ALIGN - 1);
  if (size == 0) size = ALIGN;
  ArenaChunk *c = a->head;
  if (!c || c->cap - c->off < size) {
    c = chunk_new(size);
    c->next = a->head;
    a->head = c;
  }
  void *p = c->data + c->off;
  c->off += size;
  a->used += size;
  memset(p, 0, size);
  return p;
}

char *arena_strndup(Arena *a, const char *s, size_t n) {
  char *p = arena_alloc(a, n + 1);
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

char *arena_strdup(Arena *a, const char *s) { return arena_strndup(a, s, strlen(s)); }

char *arena_printf(Arena *a, const char *fmt, ...) {
  va_list ap, aq;
  va_start(ap, fmt);
  va_copy(aq, ap);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  char *p = arena_alloc(a, (size_t)(n < 0 ? 0 : n) + 1);
  if (n > 0) vsnprintf(p, (size_t)n + 1, fmt, aq);
  va_end(aq);
  return p;
}

void intern_init(Interner *in, Arena *a) {
  in->arena = a;
  in->cap = 256;
  in->count = 0;
  in->slots = arena_alloc(a, in->cap * sizeof *in->slots);
}

static void intern_grow(Interner *in) {
  size_t cap = in->cap * 2;
  const char **slots = arena_alloc(in->arena, cap * sizeof *slots);
  for (size_t i = 0; i < in->cap; i++) {
    const char *s = in->slots[i];
    if (!s) continue;
    size_t j = hash_str(HASH_BASIS, s) & (cap - 1);
    while (slots[j]) j = (j + 1) & (cap - 1);
    slots[j] = s;
  }
  in->slots = slots; /* the old table stays in the arena until it is freed */
  in->cap = cap;
}

const char *intern(Interner *in, const char *s, size_t n) {
  if (2 * (in->count + 1) > in->cap) intern_grow(in);
  size_t j = hash_bytes(HASH_BASIS, s, n) & (in->cap - 1);
  for (const char *t; (t = in->slots[j]); j = (j + 1) & (in->cap - 1))
    if (strncmp(t, s, n) == 0 && t[n] == '\0') return t;
  const char *t = arena_strndup(in->arena, s, n);
  in->slots[j] = t;
  in->count++;
  return t;
}

const char *intern_cstr(Interner *in, const char *s) { return intern(in, s, strlen(s)); }
