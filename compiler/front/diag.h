/* diag.h - source files, the lazy line map, and the diagnostic sink.
 *
 * A Span is a pair of byte offsets into one SrcFile.  Line and column are computed
 * only when a diagnostic is printed, from a line map built on first use (jq's locfile).
 *
 * The sink collects: each phase reports every error it finds through diag_error() and
 * returns; the driver stops between phases when the error count (errors) is non-zero.  Output goes
 * through a callback so tests can capture it.  SrcFiles are owned by the Diag and freed
 * by diag_free(). */
#ifndef LLMP_DIAG_H
#define LLMP_DIAG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

typedef struct Span {
  unsigned start, end; /* byte offsets, end exclusive */
} Span;

typedef struct SrcFile {
  char *path; /* as given or as resolved (for imports) */
  char *text; /* NUL-terminated copy of the contents */
  size_t len;
  unsigned *lines; /* offsets of line starts, built lazily */
  unsigned nlines;
  int id; /* index in the Diag's file table */
} SrcFile;

typedef enum { DIAG_ERROR, DIAG_WARNING, DIAG_NOTE } DiagLevel;
typedef enum { DIAG_HUMAN, DIAG_SHORT } DiagFormat;

typedef void (*DiagWriteFn)(void *user, const char *text, size_t len);
/* A diagnostic as data (the language server's): f NULL for one with no position, then path
 * names the file or is NULL. */
typedef void (*DiagSinkFn)(void *user, DiagLevel lv, SrcFile *f, Span sp, const char *path, const char *msg);

typedef struct Diag {
  SrcFile **files;
  int nfiles, capfiles;
  int errors, warnings;
  DiagFormat format;
  int colour; /* ANSI colours, only when writing to a terminal */
  DiagWriteFn write;
  void *user;
  bool buffered; /* hold diagnostics until diag_flush(), which sorts them */
  struct DiagEntry *queue;
  int nqueue, capqueue;
  DiagSinkFn sink; /* when set, diagnostics go to it instead of being written */
  void *sink_user;
} Diag;

void diag_init(Diag *d, FILE *out); /* writes to out (stderr usually) */
void diag_set_writer(Diag *d, DiagWriteFn fn, void *user);
void diag_set_sink(Diag *d, DiagSinkFn fn, void *user);
void diag_free(Diag *d);
/* Writes held diagnostics in source order (file, then position); each note stays with the
 * error it belongs to. */
void diag_flush(Diag *d);

/* Takes a copy of text; returns the file, owned by d. */
SrcFile *diag_add_file(Diag *d, const char *path, const char *text, size_t len);
/* Reads path (a regular file of at most 1 GiB: fileio.h); NULL with *why when it cannot. */
SrcFile *diag_load_file(Diag *d, const char *path, const char **why);

/* 1-based line and column (column counts UTF-8 characters) of a byte offset. */
void srcfile_locate(SrcFile *f, unsigned off, unsigned *line, unsigned *col);
/* The text of the line holding off, without its newline. */
const char *srcfile_line(SrcFile *f, unsigned off, size_t *len);

void diag_report(Diag *d, DiagLevel lv, SrcFile *f, Span sp, const char *fmt, ...)
    __attribute__((format(printf, 5, 6)));
void diag_vreport(Diag *d, DiagLevel lv, SrcFile *f, Span sp, const char *fmt, va_list ap);
void diag_error(Diag *d, SrcFile *f, Span sp, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
void diag_note(Diag *d, SrcFile *f, Span sp, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* An error with no source position (a file that cannot be read, a bad option). */
void diag_plain(Diag *d, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* The same as a note (a file skipped). */
void diag_plain_note(Diag *d, const char *path, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static inline Span span_join(Span a, Span b) {
  Span s = {a.start < b.start ? a.start : b.start, a.end > b.end ? a.end : b.end};
  return s;
}

#endif
