/* arena.h - one region per compilation, freed at once; interned strings.
 *
 * Ownership: everything allocated from an Arena (AST nodes, strings, tables of the
 * semantic pass) belongs to it and is released by arena_free(); nothing from an arena
 * is ever freed on its own.  Interned strings are unique per Interner, so names are
 * compared by pointer. */
#ifndef LLMP_ARENA_H
#define LLMP_ARENA_H

#include <stddef.h>

typedef struct ArenaChunk ArenaChunk;
typedef struct Arena {
  ArenaChunk *head; /* newest chunk first */
  size_t used;      /* bytes handed out, for statistics */
} Arena;

void arena_init(Arena *a);
void arena_free(Arena *a);
void *arena_alloc(Arena *a, size_t size); /* zeroed, 16-byte aligned */
char *arena_strndup(Arena *a, const char *s, size_t n);
char *arena_strdup(Arena *a, const char *s);
char *arena_printf(Arena *a, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* Open-addressing table of unique strings, its storage in the arena. */
typedef struct Interner {
  Arena *arena;
  const char **slots;
  size_t cap, count;
} Interner;

void intern_init(Interner *in, Arena *a);
const char *intern(Interner *in, const char *s, size_t n);
const char *intern_cstr(Interner *in, const char *s);

#endif
