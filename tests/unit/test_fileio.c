/* test_fileio.c - unit tests of runtime/support/fileio.c: bounded reads of regular files, and
 * writes that never leave a target half written. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "fileio.h"

#include "support.h"

static char dir[] = "/tmp/llmp_fileio_XXXXXX";

/* A fresh folder for a test, and its removal. */
static void mk(void) {
  strcpy(dir, "/tmp/llmp_fileio_XXXXXX");
  assert_non_null(mkdtemp(dir));
}

static void rm(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  assert_int_equal(system(cmd), 0);
}

static void path_in(char *buf, size_t n, const char *name) { snprintf(buf, n, "%s/%s", dir, name); }

static void put(const char *path, const char *text) {
  FILE *f = fopen(path, "wb");
  assert_non_null(f);
  fputs(text, f);
  fclose(f);
}

/* The bytes of a regular file; a folder, a FIFO and a device each refused with their reason. */
TEST(read_regular_only) {
  mk();
  char p[256], *text;
  size_t n;
  const char *why;
  path_in(p, sizeof p, "a.llmp");
  put(p, "model m {}\n");
  assert_int_equal(file_read(p, &text, &n, &why), 0);
  assert_int_equal(n, 11);
  assert_string_equal(text, "model m {}\n");
  free(text);
  assert_int_equal(file_read(dir, &text, &n, &why), -1);
  assert_string_equal(why, "is a directory");
  path_in(p, sizeof p, "fifo.llmp");
  assert_int_equal(mkfifo(p, 0600), 0);
  assert_int_equal(file_read(p, &text, &n, &why), -1); /* without a writer: no wait */
  assert_string_equal(why, "is not a regular file (a FIFO, device or socket)");
  assert_int_equal(file_read("/dev/zero", &text, &n, &why), -1);
  assert_string_equal(why, "is not a regular file (a FIFO, device or socket)");
  assert_null(text);
  rm();
}

/* An atomic write replaces the target whole and keeps its mode; a new file gets the umask's. */
TEST(atomic_write_replaces_and_keeps_mode) {
  mk();
  char p[256];
  const char *why;
  path_in(p, sizeof p, "out.txt");
  put(p, "old contents\n");
  assert_int_equal(chmod(p, 0640), 0);
  assert_int_equal(atomic_write(p, "new\n", 4, &why), 0);
  char *text;
  size_t n;
  assert_int_equal(file_read(p, &text, &n, &why), 0);
  assert_string_equal(text, "new\n");
  free(text);
  struct stat st;
  assert_int_equal(stat(p, &st), 0);
  assert_int_equal(st.st_mode & 07777, 0640);
  /* no temporary left beside it */
  char cmd[320];
  snprintf(cmd, sizeof cmd, "test $(ls %s | wc -l) -eq 1", dir);
  assert_int_equal(system(cmd), 0);
  rm();
}

/* A write that fails part way (the file size limit) leaves the target as it was. */
TEST(failed_write_leaves_target) {
  mk();
  char p[256];
  path_in(p, sizeof p, "big.txt");
  put(p, "the original\n");
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) { /* a child with a 4 KiB file size limit writes 1 MiB */
    signal(SIGXFSZ, SIG_IGN);
    struct rlimit rl = {4096, 4096};
    setrlimit(RLIMIT_FSIZE, &rl);
    char *big = calloc(1, 1 << 20);
    const char *why;
    _exit(big && atomic_write(p, big, 1 << 20, &why) != 0 ? 0 : 1);
  }
  int status;
  assert_int_equal(waitpid(pid, &status, 0), pid);
  assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0); /* the write failed */
  char *text;
  size_t n;
  const char *why;
  assert_int_equal(file_read(p, &text, &n, &why), 0);
  assert_string_equal(text, "the original\n");
  free(text);
  rm();
}

/* An output that cannot be created fails at open, before any work. */
TEST(atomic_open_fails_early) {
  mk();
  AtomicFile a;
  const char *why;
  char p[256];
  path_in(p, sizeof p, "no/such/folder/out.csv");
  assert_int_equal(atomic_open(&a, p, &why), -1);
  assert_string_equal(why, "No such file or directory");
  assert_int_equal(atomic_open(&a, dir, &why), -1);
  assert_string_equal(why, "is a directory");
  rm();
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(read_regular_only),
      cmocka_unit_test(atomic_write_replaces_and_keeps_mode),
      cmocka_unit_test(failed_write_leaves_target),
      cmocka_unit_test(atomic_open_fails_early),
  };
  return RUN_TESTS(tests);
}
