/* sweep_progress.c - the progress bar of a sweep on a terminal (sweep_io.h). */
#include "sweep_io.h"

#include <math.h>
#include <time.h>
#include <unistd.h>

#include "sweep_io_internal.h"

/* --- progress -------------------------------------------------------------------------------- */

enum { BAR_WIDTH = 20 };

static double monotonic_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

const char *sweep_duration_text(char *buf, double s) {
  if (s >= 100 * 86400.0 || !(s >= 0)) { /* NaN too */
    snprintf(buf, 32, "%.3g years", s / (365.25 * 86400));
    return buf;
  }
  long t = (long)floor(s + 0.5);
  if (t < 60)
    snprintf(buf, 32, "%lds", t);
  else if (t < 3600)
    snprintf(buf, 32, "%ldm%02lds", t / 60, t % 60);
  else if (t < 86400)
    snprintf(buf, 32, "%ldh%02ldm", t / 3600, t / 60 % 60);
  else
    snprintf(buf, 32, "%ldd%02ldh", t / 86400, t / 3600 % 24);
  return buf;
}

const char *sweep_progress_text(char *buf, size_t n, uint64_t done, uint64_t total, double elapsed) {
  char bar[BAR_WIDTH + 1], a[32], b[32], c[32], d[32];
  if (done > total) done = total;
  double frac = total ? (double)done / (double)total : 1;
  int filled = (int)(frac * BAR_WIDTH), pct = (int)(frac * 100);
  if (done < total && pct > 99) pct = 99;
  for (int i = 0; i < BAR_WIDTH; i++) bar[i] = i < filled ? '#' : '.';
  bar[BAR_WIDTH] = '\0';
  /* a rate once a point is done (before, "0/s" would read as a stalled sweep) */
  double rate = elapsed > 0 ? (double)done / elapsed : 0;
  int len = snprintf(buf, n, "[%s] %3d%%  %s/%s points", bar, pct, sweep_grouped(a, done), sweep_grouped(b, total));
  if (len < 0 || (size_t)len >= n) return buf;
  if (rate > 0 && done < total)
    snprintf(buf + len, n - (size_t)len, "  %s/s  %s left", sweep_rate_text(c, rate),
             sweep_duration_text(d, (double)(total - done) / rate));
  else if (rate > 0)
    snprintf(buf + len, n - (size_t)len, "  %s/s", sweep_rate_text(c, rate));
  else if (done < total)
    snprintf(buf + len, n - (size_t)len, "  starting");
  return buf;
}

void sweep_progress_start_on(SweepProgress *p, uint64_t total, FILE *out, bool enabled, SweepClock clock) {
  *p = (SweepProgress){out, enabled && out, clock ? clock : monotonic_seconds, total, 0, 0, false};
  p->start = p->last = p->clock();
}

void sweep_progress_start(SweepProgress *p, uint64_t total) {
  sweep_progress_start_on(p, total, stderr, isatty(fileno(stderr)) == 1, monotonic_seconds);
}

void sweep_progress_update(SweepProgress *p, uint64_t done) {
  if (!p->enabled) return;
  double now = p->clock();
  if (now - p->start <= 1.0 || (p->drawn && now - p->last < 0.1)) return;
  char text[200];
  fprintf(p->out, "\r%s\033[K", sweep_progress_text(text, sizeof text, done, p->total, now - p->start));
  fflush(p->out);
  p->last = now;
  p->drawn = true;
}

void sweep_progress_finish(SweepProgress *p) {
  if (!p->enabled || !p->drawn) return;
  fputs("\r\033[K", p->out);
  fflush(p->out);
  p->drawn = false;
}
