/* fileio.c - bounded reads of regular files, atomic writes. */
#include "fileio.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"

int file_read(const char *path, char **text, size_t *len, const char **why) {
  *text = NULL, *len = 0;
  /* non-blocking, so that opening a FIFO without a writer does not wait */
  int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC);
  if (fd < 0) {
    *why = strerror(errno);
    return -1;
  }
  struct stat st;
  if (fstat(fd, &st) != 0) {
    *why = strerror(errno);
    close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    *why = S_ISDIR(st.st_mode) ? "is a directory" : "is not a regular file (a FIFO, device or socket)";
    close(fd);
    return -1;
  }
  if ((size_t)st.st_size > FILE_READ_LIMIT) {
    *why = "is larger than the 1 GiB llmp reads";
    close(fd);
    return -1;
  }
  size_t cap = (size_t)st.st_size + 1, n = 0;
  char *buf = xmalloc(cap + 1);
  for (;;) {
    if (n == cap) {
      if (cap > FILE_READ_LIMIT) { /* it grew while being read */
        free(buf);
        close(fd);
        *why = "is larger than the 1 GiB llmp reads";
        return -1;
      }
      buf = xrealloc(buf, (cap *= 2) + 1);
    }
    ssize_t r = read(fd, buf + n, cap - n);
    if (r == 0) break;
    if (r < 0) {
      if (errno == EINTR) continue;
      *why = strerror(errno);
      free(buf);
      close(fd);
      return -1;
    }
    n += (size_t)r;
  }
  close(fd);
  buf[n] = '\0';
  *text = buf, *len = n;
  return 0;
}

int atomic_open(AtomicFile *a, const char *path, const char **why) {
  memset(a, 0, sizeof *a);
  struct stat st;
  a->mode = stat(path, &st) == 0 ? (int)(st.st_mode & 07777) : -1;
  if (a->mode >= 0 && S_ISDIR(st.st_mode)) {
    *why = "is a directory";
    return -1;
  }
  if (a->mode >= 0 && !S_ISREG(st.st_mode)) { /* /dev/stdout, a FIFO: written directly */
    a->fp = fopen(path, "w");
    if (!a->fp) {
      *why = strerror(errno);
      return -1;
    }
    return 0;
  }
  size_t n = strlen(path) + 16;
  a->tmp = xmalloc(n);
  snprintf(a->tmp, n, "%s.XXXXXX", path);
  int fd = mkstemp(a->tmp);
  if (fd < 0) {
    *why = strerror(errno);
    free(a->tmp);
    a->tmp = NULL;
    return -1;
  }
  if (a->mode < 0) { /* a new file: what the umask gives */
    mode_t um = umask(0);
    umask(um);
    a->mode = (int)(0666 & ~um);
  }
  a->fp = fdopen(fd, "w");
  if (!a->fp) {
    *why = strerror(errno);
    close(fd);
    unlink(a->tmp);
    free(a->tmp);
    a->tmp = NULL;
    return -1;
  }
  a->path = xstrdup(path);
  return 0;
}

void atomic_abort(AtomicFile *a) {
  if (a->fp) fclose(a->fp);
  if (a->tmp) unlink(a->tmp);
  free(a->tmp);
  free(a->path);
  memset(a, 0, sizeof *a);
}

int atomic_commit(AtomicFile *a, const char **why) {
  if (!a->tmp) { /* a device or FIFO */
    int bad = fflush(a->fp) != 0 || ferror(a->fp);
    int err = errno;
    if (fclose(a->fp) != 0 && !bad) bad = 1, err = errno;
    memset(a, 0, sizeof *a);
    if (bad) *why = strerror(err ? err : EIO);
    return bad ? -1 : 0;
  }
  int bad = fflush(a->fp) != 0 || ferror(a->fp) || fsync(fileno(a->fp)) != 0 || fchmod(fileno(a->fp), (mode_t)a->mode) != 0;
  int err = errno;
  if (fclose(a->fp) != 0 && !bad) bad = 1, err = errno;
  a->fp = NULL;
  if (!bad && rename(a->tmp, a->path) != 0) bad = 1, err = errno;
  if (bad) {
    *why = strerror(err ? err : EIO);
    atomic_abort(a);
    return -1;
  }
  free(a->tmp);
  free(a->path);
  memset(a, 0, sizeof *a);
  return 0;
}

int atomic_write(const char *path, const void *text, size_t n, const char **why) {
  AtomicFile a;
  if (atomic_open(&a, path, why) != 0) return -1;
  if (fwrite(text, 1, n, a.fp) != n) {
    *why = strerror(errno ? errno : EIO);
    atomic_abort(&a);
    return -1;
  }
  return atomic_commit(&a, why);
}
