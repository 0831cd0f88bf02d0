/* fileio.h - reading an input file whole, and writing an output file so that it is never seen
 * half written.
 *
 * file_read() reads a regular file of at most FILE_READ_LIMIT bytes; anything else (a folder,
 * a FIFO, a device, a larger file) is refused with a reason, so that `llmp check /dev/zero`
 * neither hangs nor grows.  An AtomicFile writes to a temporary file beside the target and
 * renames it over the target on commit (after fsync, with the target's mode): a failed write
 * leaves the target as it was, and of two writers the last wins whole. */
#ifndef LLMP_FILEIO_H
#define LLMP_FILEIO_H

#include <stdio.h>
#include <stddef.h>

#define FILE_READ_LIMIT ((size_t)1 << 30) /* 1 GiB: far above any real input */

/* The bytes of path in *text (malloc'd, NUL-terminated) and *len; 0, or -1 with *why the
 * reason ("is a directory", "is not a regular file (a FIFO, device or socket)", strerror). */
int file_read(const char *path, char **text, size_t *len, const char **why);

typedef struct AtomicFile {
  FILE *fp;   /* write here */
  char *tmp;  /* the temporary file */
  char *path; /* the target */
  int mode;   /* the target's mode, or -1 for a new file */
} AtomicFile;

/* Creates the temporary file for path now (so that an output that cannot be written fails
 * before the work that fills it); 0, or -1 with *why.  A target that is a device or a FIFO
 * (/dev/stdout) cannot be replaced: it is opened and written directly. */
int atomic_open(AtomicFile *a, const char *path, const char **why);
/* Flushes, syncs and renames the temporary over the target; 0, or -1 with *why (the
 * temporary removed, the target untouched).  Closes a either way. */
int atomic_commit(AtomicFile *a, const char **why);
/* Removes the temporary; the target untouched. */
void atomic_abort(AtomicFile *a);
/* The whole of text to path through an AtomicFile; 0, or -1 with *why. */
int atomic_write(const char *path, const void *text, size_t n, const char **why);

#endif
