/* test_alloc.c - unit tests of runtime/support/alloc.c: running out of memory ends the process
 * with a message and status 1, once, whichever threads fail. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "alloc.h"

#include "support.h"

/* Runs fn in a child with its standard error on a pipe; returns the exit status (-1 if it
 * did not exit, 256 + signal if killed) and what it wrote to standard error, into err. */
static int in_child(void (*fn)(void), char *err, size_t n) {
  int fd[2];
  assert_int_equal(pipe(fd), 0);
  fflush(NULL);
  pid_t pid = fork();
  assert_true(pid >= 0);
  if (pid == 0) {
    close(fd[0]);
    dup2(fd[1], 2);
    fn();
    _exit(0);
  }
  close(fd[1]);
  size_t len = 0;
  ssize_t r;
  while (len + 1 < n && (r = read(fd[0], err + len, n - 1 - len)) > 0) len += (size_t)r;
  err[len] = '\0';
  close(fd[0]);
  int st = 0;
  assert_int_equal(waitpid(pid, &st, 0), pid);
  return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 256 + WTERMSIG(st) : -1;
}

static void overflow(void) { grow_cap(8, SIZE_MAX, 16); }

TEST(out_of_memory_exits_1) {
  char err[256];
  assert_int_equal(in_child(overflow, err, sizeof err), 1); /* not abort()'s SIGABRT */
  assert_string_equal(err, "llmp: out of memory (size overflow)\n");
}

static void *fail_in_thread(void *arg) {
  (void)arg;
  alloc_fail("thread");
}

static void threads_fail(void) {
  pthread_t t[8];
  for (int i = 0; i < 8; i++) pthread_create(&t[i], NULL, fail_in_thread, NULL);
  for (int i = 0; i < 8; i++) pthread_join(t[i], NULL);
}

TEST(threads_out_of_memory_say_so_once) {
  char err[1024];
  assert_int_equal(in_child(threads_fail, err, sizeof err), 1);
  assert_string_equal(err, "llmp: out of memory (thread)\n");
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(out_of_memory_exits_1),
      cmocka_unit_test(threads_out_of_memory_say_so_once),
  };
  return RUN_TESTS(tests);
}
