/* verdict.h - the known-miss bookkeeping both validation programs share.
 *
 * Include after defining `static const char *const known_fail[]` (NULL-terminated): the
 * targets missed today.  verdict() records a row: a miss that is not listed counts as a
 * failure, and so does a listed miss that now passes or is no longer measured (the list must
 * stay true: verdict_unjudged()); the program fails when either count is non-zero. */
#ifndef LLMP_VALIDATION_VERDICT_H
#define LLMP_VALIDATION_VERDICT_H

#include <string.h>

static int failures, surprises;
static unsigned char known_seen[256]; /* known_fail[i] was judged */

static int is_known(const char *what) {
  for (int i = 0; known_fail[i]; i++)
    if (strcmp(known_fail[i], what) == 0) {
      if (i < (int)sizeof known_seen) known_seen[i] = 1;
      return 1;
    }
  return 0;
}

/* Counts as surprises the listed misses no row was judged against (a target that is no
 * longer measured: the list must stay true), printing each; call once, at the end. */
static void verdict_unjudged(void) {
  for (int i = 0; known_fail[i]; i++)
    if (i >= (int)sizeof known_seen || !known_seen[i]) {
      printf("listed as known failure but not measured: %s (remove it)\n", known_fail[i]);
      surprises++;
    }
}

/* Records a verdict; returns the word to print. */
static const char *verdict(const char *what, int pass) {
  int known = is_known(what);
  if (pass && known) {
    surprises++;
    return "PASS (listed as known failure: remove it)";
  }
  if (!pass && !known) {
    failures++;
    return "FAIL";
  }
  return pass ? "PASS" : "FAIL (known)";
}

#endif
