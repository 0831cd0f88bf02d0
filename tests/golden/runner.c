/* runner.c - runs `llmp check` on one golden file and compares its diagnostics with the
 * expectations written inside the file.
 *
 *   golden_runner LLMP GOLDEN_FILE
 *
 * The runner runs `LLMP check --error-format=short --color=never GOLDEN_FILE` (killed after
 * 20 seconds), reads each diagnostic of the short format
 *
 *   PATH:LINE:COL: LEVEL: MESSAGE        or        PATH: LEVEL: MESSAGE  (no position)
 *
 * and matches it against the expectations, which are `#~` comments in GOLDEN_FILE:
 *
 *   x = 1 GB + 2 s   #~ error: TEXT         a diagnostic on this line
 *   #~^ error: TEXT                         ... on the line above (`#~^^`: two lines above, ...)
 *   #~| note: TEXT                          ... on the same line as the previous expectation
 *   #~ file error: TEXT                     a diagnostic of GOLDEN_FILE with no line
 *   #~ other NAME:LINE error: TEXT          a diagnostic on line LINE of another file (an
 *                                           import), NAME being that file's base name
 *   #~ error@12: TEXT                       (any of the forms) ... that also starts at column 12
 *
 * LEVEL is `error`, `warning` or `note`; TEXT is the diagnostic's message exactly (trailing
 * blanks ignored), except that `{{*}}` in TEXT matches any run of characters (for a part of a
 * message that depends on the machine, like an installation folder).  Columns are compared
 * only where an expectation gives one (`error@COL`).  A file that cannot hold its
 * expectations (an empty file) gets them from a file next to it named GOLDEN_FILE.expect,
 * which holds `#~ file` and `#~ other` lines.
 *
 * The test passes when every diagnostic is
 * expected, every expectation is met (as a multiset: two equal expectations need two equal
 * diagnostics), the exit status of llmp is 1 when at least one error is expected and 0
 * otherwise, and llmp prints nothing else than diagnostics and its `PATH: ok (...)` line.
 * A file with no expectations must be clean.  On a failure the runner prints what is missing
 * and what is unexpected, and exits 1; it exits 2 when it cannot run at all. */
#include <ctype.h>
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

enum { TIMEOUT_S = 20 };

typedef enum { W_THIS, W_NOLINE, W_OTHER } Where;

typedef struct Item {
  Where where;
  char *other; /* W_OTHER: base name of the other file */
  long line;   /* W_THIS, W_OTHER */
  long col;    /* diagnostics: the column (0 when none); expectations: 0 or the column wanted */
  char *level;
  char *text;
  long src_line; /* expectations: the line of GOLDEN_FILE that states it */
  bool matched;
} Item;

typedef struct Items {
  Item *v;
  size_t n, cap;
} Items;

static const char *golden;

static void *xmalloc(size_t n) {
  void *p = malloc(n ? n : 1);
  if (!p) {
    fputs("golden_runner: out of memory\n", stderr);
    exit(2);
  }
  return p;
}

static char *xstrndup(const char *s, size_t n) {
  char *p = xmalloc(n + 1);
  memcpy(p, s, n);
  p[n] = '\0';
  return p;
}

static void push(Items *it, Item x) {
  if (it->n == it->cap) {
    it->cap = it->cap ? 2 * it->cap : 16;
    Item *v = xmalloc(it->cap * sizeof *v);
    if (it->n) memcpy(v, it->v, it->n * sizeof *v);
    free(it->v);
    it->v = v;
  }
  it->v[it->n++] = x;
}

static char *read_all(FILE *fp, size_t *len) {
  size_t cap = 4096, n = 0;
  char *buf = xmalloc(cap);
  size_t k;
  while ((k = fread(buf + n, 1, cap - n, fp)) > 0) {
    n += k;
    if (n == cap) {
      char *b = xmalloc(cap * 2);
      memcpy(b, buf, n);
      free(buf);
      buf = b;
      cap *= 2;
    }
  }
  buf[n] = '\0';
  *len = n;
  return buf;
}

static const char *base_name(const char *p) {
  const char *s = strrchr(p, '/');
  return s ? s + 1 : p;
}

static size_t trim_end(const char *s, size_t n) {
  while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r')) n--;
  return n;
}

static bool is_level(const char *s, size_t n) {
  return (n == 5 && !memcmp(s, "error", 5)) || (n == 7 && !memcmp(s, "warning", 7)) ||
         (n == 4 && !memcmp(s, "note", 4));
}

static bool parse_long(const char **s, const char *end, long *out);

/* "LEVEL: TEXT" or "LEVEL@COL: TEXT" at s (n bytes): fills level, col and text.  False when
 * malformed. */
static bool parse_level_text(const char *s, size_t n, Item *x) {
  const char *colon = memchr(s, ':', n);
  if (!colon) return false;
  const char *at = memchr(s, '@', (size_t)(colon - s));
  const char *lend = at ? at : colon;
  if (!is_level(s, (size_t)(lend - s))) return false;
  if (at) {
    const char *c = at + 1;
    if (!parse_long(&c, colon, &x->col) || c != colon || x->col < 1) return false;
  }
  x->level = xstrndup(s, (size_t)(lend - s));
  const char *t = colon + 1;
  size_t tn = n - (size_t)(t - s);
  if (tn && *t == ' ') t++, tn--;
  x->text = xstrndup(t, trim_end(t, tn));
  return true;
}

static bool parse_long(const char **s, const char *end, long *out) {
  const char *p = *s;
  long v = 0;
  if (p >= end || *p < '0' || *p > '9') return false;
  while (p < end && *p >= '0' && *p <= '9') v = v * 10 + (*p++ - '0');
  *s = p;
  *out = v;
  return true;
}

static void bad_expectation(long line, const char *why) {
  fprintf(stderr, "%s:%ld: malformed expectation: %s\n", golden, line, why);
  exit(2);
}

/* The expectations of the golden file: every `#~` comment.  Text after a NUL byte on a
 * line is not read (a binary test file states its expectation before the NUL). */
static void read_expectations(const char *text, size_t len, Items *exp) {
  long line = 1, prev_target = -1;
  for (size_t i = 0; i < len;) {
    size_t e = i;
    while (e < len && text[e] != '\n') e++;
    size_t n = e - i;
    const char *nul = memchr(text + i, '\0', n);
    if (nul) n = (size_t)(nul - (text + i));
    const char *l = text + i, *end = l + n;
    const char *m = NULL;
    for (const char *p = l; p + 1 < end; p++)
      if (p[0] == '#' && p[1] == '~') {
        m = p;
        break;
      }
    if (m) {
      const char *p = m + 2;
      Item x = {0};
      x.src_line = line;
      long up = 0;
      bool same = false;
      while (p < end && *p == '^') up++, p++;
      if (!up && p < end && *p == '|') same = true, p++;
      while (p < end && *p == ' ') p++;
      if (!up && !same && end - p >= 5 && !memcmp(p, "file ", 5)) {
        x.where = W_NOLINE;
        p += 5;
      } else if (!up && !same && end - p >= 6 && !memcmp(p, "other ", 6)) {
        x.where = W_OTHER;
        p += 6;
        const char *q = p;
        while (q < end && *q != ' ') q++;
        const char *c = q;
        while (c > p && c[-1] != ':') c--;
        if (c == p) bad_expectation(line, "`#~ other` takes NAME:LINE");
        x.other = xstrndup(p, (size_t)(c - 1 - p));
        if (!parse_long(&c, q, &x.line) || c != q) bad_expectation(line, "`#~ other` takes NAME:LINE");
        p = q;
        while (p < end && *p == ' ') p++;
      } else {
        x.where = W_THIS;
        if (same) {
          if (prev_target < 0) bad_expectation(line, "`#~|` with no expectation before it");
          x.line = prev_target;
        } else {
          x.line = line - up;
        }
        if (x.line < 1) bad_expectation(line, "`#~^` points above the first line");
        prev_target = x.line;
      }
      if (!parse_level_text(p, (size_t)(end - p), &x))
        bad_expectation(line, "expected `error: TEXT`, `warning: TEXT` or `note: TEXT`");
      if (!x.text[0]) bad_expectation(line, "empty message");
      push(exp, x);
    }
    i = e + 1;
    line++;
  }
}

/* One line of llmp's output: a diagnostic (true), or something else (false). */
static bool parse_diag(const char *l, size_t n, const char *path, Item *x) {
  static const char *const levels[] = {": error: ", ": warning: ", ": note: "};
  const char *best = NULL;
  for (int k = 0; k < 3; k++) {
    size_t ln = strlen(levels[k]);
    for (const char *p = l; p + ln <= l + n; p++)
      if (!memcmp(p, levels[k], ln)) {
        if (!best || p < best) best = p;
        break;
      }
  }
  if (!best) return false;
  memset(x, 0, sizeof *x);
  if (!parse_level_text(best + 2, (size_t)(l + n - best - 2), x)) return false;
  /* location: PATH, or PATH:LINE:COL */
  const char *loc_end = best, *p = loc_end;
  long line = -1;
  while (p > l && p[-1] >= '0' && p[-1] <= '9') p--;
  if (p > l && p < loc_end && p[-1] == ':') {
    const char *q = p - 1;
    while (q > l && q[-1] >= '0' && q[-1] <= '9') q--;
    if (q > l && q < p - 1 && q[-1] == ':') {
      const char *s = q, *c = p;
      parse_long(&s, p - 1, &line);
      parse_long(&c, loc_end, &x->col);
      loc_end = q - 1;
    }
  }
  char *file = xstrndup(l, (size_t)(loc_end - l));
  bool mine = !strcmp(file, path);
  if (line < 0) {
    x->where = mine ? W_NOLINE : W_OTHER;
    x->line = 0;
  } else {
    x->where = mine ? W_THIS : W_OTHER;
    x->line = line;
  }
  if (!mine) x->other = xstrndup(base_name(file), strlen(base_name(file)));
  free(file);
  return true;
}

/* The expected text pat, where `{{*}}` matches any run of characters, against text. */
static bool text_matches(const char *pat, const char *text) {
  const char *star = strstr(pat, "{{*}}");
  if (!star) return !strcmp(pat, text);
  size_t n = (size_t)(star - pat);
  if (strncmp(pat, text, n)) return false;
  for (const char *t = text + n;; t++) {
    if (text_matches(star + 5, t)) return true;
    if (!*t) return false;
  }
}

/* got: a diagnostic; want: an expectation. */
static bool same_item(const Item *got, const Item *want) {
  const Item *a = got, *b = want;
  if (a->where != b->where || strcmp(a->level, b->level) || !text_matches(b->text, a->text)) return false;
  if (a->where == W_NOLINE) return true;
  if (a->line != b->line || (b->col && a->col != b->col)) return false;
  return a->where != W_OTHER || !strcmp(a->other, b->other);
}

static void print_item(const char *tag, const Item *x) {
  switch (x->where) {
  case W_THIS:
    if (x->col)
      fprintf(stderr, "  %s  %s:%ld:%ld: %s: %s\n", tag, golden, x->line, x->col, x->level, x->text);
    else
      fprintf(stderr, "  %s  %s:%ld: %s: %s\n", tag, golden, x->line, x->level, x->text);
    break;
  case W_NOLINE: fprintf(stderr, "  %s  %s: %s: %s\n", tag, golden, x->level, x->text); break;
  case W_OTHER:
    if (x->line)
      fprintf(stderr, "  %s  (other) %s:%ld: %s: %s\n", tag, x->other, x->line, x->level, x->text);
    else
      fprintf(stderr, "  %s  (other) %s: %s: %s\n", tag, x->other, x->level, x->text);
    break;
  }
}

/* Runs llmp; returns its output (stdout and stderr together) and its wait status.  llmp runs
 * in its own process group with alarm(TIMEOUT_S), which survives exec; should anything still
 * hold the pipe open a little later, the whole group is killed and reading stops, so the
 * runner never hangs. */
static char *run_llmp(const char *llmp, const char *path, int *status, size_t *len, bool *timed_out) {
  int fd[2];
  if (pipe(fd)) {
    perror("golden_runner: pipe");
    exit(2);
  }
  pid_t pid = fork();
  if (pid < 0) {
    perror("golden_runner: fork");
    exit(2);
  }
  if (pid == 0) {
    setpgid(0, 0);
    close(fd[0]);
    dup2(fd[1], 1);
    dup2(fd[1], 2);
    close(fd[1]);
    signal(SIGALRM, SIG_DFL);
    alarm(TIMEOUT_S);
    execl(llmp, llmp, "check", "--error-format=short", "--color=never", path, (char *)NULL);
    fprintf(stderr, "golden_runner: cannot run %s: %s\n", llmp, strerror(errno));
    _exit(127);
  }
  setpgid(pid, pid); /* also here, so that the group exists before either side goes on */
  close(fd[1]);
  *timed_out = false;
  time_t deadline = time(NULL) + TIMEOUT_S + 2;
  size_t cap = 4096, n = 0;
  char *buf = xmalloc(cap);
  for (;;) {
    long left = (long)(deadline - time(NULL));
    struct pollfd pf = {fd[0], POLLIN, 0};
    int r = left > 0 ? poll(&pf, 1, (int)(left * 1000)) : 0;
    if (r < 0 && errno == EINTR) continue;
    if (r <= 0) { /* past the deadline (or poll failed): kill the group, stop reading */
      kill(-pid, SIGKILL);
      *timed_out = true;
      break;
    }
    if (n + 1 >= cap) {
      char *b = xmalloc(cap * 2);
      memcpy(b, buf, n);
      free(buf);
      buf = b;
      cap *= 2;
    }
    ssize_t k = read(fd[0], buf + n, cap - n - 1);
    if (k < 0 && errno == EINTR) continue;
    if (k <= 0) break;
    n += (size_t)k;
  }
  close(fd[0]);
  buf[n] = '\0';
  *len = n;
  while (waitpid(pid, status, 0) < 0)
    if (errno != EINTR) {
      perror("golden_runner: waitpid");
      exit(2);
    }
  return buf;
}

/* "PATH: ok (N declarations)", the line of a clean file, or one of its sweeps' sizes after
 * it: "  sweep NAME: N points (A x B)". */
static bool is_ok_line(const char *l, size_t n, const char *path) {
  size_t pl = strlen(path);
  if (n > 8 && !memcmp(l, "  sweep ", 8)) {
    for (size_t i = 8; i + 8 <= n; i++)
      if (!memcmp(l + i, ": ", 2) && isdigit((unsigned char)l[i + 2])) return true;
    return false;
  }
  return n > pl + 6 && !memcmp(l, path, pl) && !memcmp(l + pl, ": ok (", 6) && l[n - 1] == ')';
}

int main(int argc, char **argv) {
  if (argc != 3) {
    fputs("usage: golden_runner LLMP GOLDEN_FILE\n", stderr);
    return 2;
  }
  const char *llmp = argv[1];
  golden = argv[2];
  FILE *fp = fopen(golden, "rb");
  if (!fp) {
    fprintf(stderr, "golden_runner: cannot open %s: %s\n", golden, strerror(errno));
    return 2;
  }
  size_t len;
  char *text = read_all(fp, &len);
  fclose(fp);
  Items exp = {0}, got = {0};
  read_expectations(text, len, &exp);
  size_t sidecar_from = exp.n;
  char *side = xmalloc(strlen(golden) + 8);
  sprintf(side, "%s.expect", golden);
  if ((fp = fopen(side, "rb"))) {
    size_t slen;
    char *stext = read_all(fp, &slen);
    fclose(fp);
    const char *saved = golden;
    golden = side;
    read_expectations(stext, slen, &exp);
    golden = saved;
    for (size_t j = sidecar_from; j < exp.n; j++)
      if (exp.v[j].where == W_THIS) {
        fprintf(stderr, "%s:%ld: a .expect file holds only `#~ file` and `#~ other` expectations\n", side,
                exp.v[j].src_line);
        return 2;
      }
  }

  int status;
  size_t olen;
  bool timed_out;
  char *out = run_llmp(llmp, golden, &status, &olen, &timed_out);
  bool fail = false;
  if (memchr(out, '\0', olen)) {
    fprintf(stderr, "%s: llmp printed a NUL byte\n", golden);
    fail = true;
  }
  for (size_t i = 0; i < olen;) {
    size_t e = i;
    while (e < olen && out[e] != '\n') e++;
    size_t n = trim_end(out + i, e - i);
    Item x;
    if (n && !is_ok_line(out + i, n, golden)) {
      if (parse_diag(out + i, n, golden, &x)) {
        push(&got, x);
      } else {
        fprintf(stderr, "%s: unexpected output from llmp: %.*s\n", golden, (int)n, out + i);
        fail = true;
      }
    }
    i = e + 1;
  }

  bool want_error = false;
  for (size_t i = 0; i < exp.n; i++) want_error |= !strcmp(exp.v[i].level, "error");
  for (size_t i = 0; i < got.n; i++)
    for (size_t j = 0; j < exp.n; j++)
      if (!exp.v[j].matched && same_item(&got.v[i], &exp.v[j])) {
        exp.v[j].matched = got.v[i].matched = true;
        break;
      }
  size_t missing = 0, unexpected = 0;
  for (size_t j = 0; j < exp.n; j++) missing += !exp.v[j].matched;
  for (size_t i = 0; i < got.n; i++) unexpected += !got.v[i].matched;

  if (WIFSIGNALED(status) || timed_out) {
    int sig = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    if (sig == SIGALRM || timed_out)
      fprintf(stderr, "%s: llmp did not finish in %d s (killed)\n", golden, TIMEOUT_S);
    else
      fprintf(stderr, "%s: llmp crashed: signal %d (%s)\n", golden, sig, strsignal(sig));
    fail = true;
  } else if (WIFEXITED(status)) {
    int rc = WEXITSTATUS(status);
    if (rc != (want_error ? 1 : 0)) {
      fprintf(stderr, "%s: llmp exited with status %d, expected %d\n", golden, rc, want_error ? 1 : 0);
      fail = true;
    }
  }
  if (missing || unexpected) {
    fail = true;
    fprintf(stderr, "%s: diagnostics differ (%zu missing, %zu unexpected)\n", golden, missing, unexpected);
    for (size_t j = 0; j < exp.n; j++)
      if (!exp.v[j].matched) print_item("missing:   ", &exp.v[j]);
    for (size_t i = 0; i < got.n; i++)
      if (!got.v[i].matched) print_item("unexpected:", &got.v[i]);
  }
  if (fail) {
    fprintf(stderr, "--- llmp output ---\n%.*s", (int)olen, out);
    if (olen && out[olen - 1] != '\n') fputc('\n', stderr);
    return 1;
  }
  printf("%s: ok (%zu diagnostics as expected)\n", golden, got.n);
  return 0;
}
