/* html_out.c - the --html FILE of run, sweep and validate: the page (report/html.h) written
 * through an AtomicFile, opened before the work so that an output that cannot be written
 * fails first, and renamed over FILE only when the command's reports were all made. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "strbuf.h"

int cli_html_open(Diag *d, const char *path, const char *cmd, const char *const *operands, int n, CliHtml *out) {
  const char *why = "cannot write";
  *out = (CliHtml){0};
  if (atomic_open(&out->file, path, &why) != 0) {
    diag_plain(d, path, "cannot write the HTML report: %s", why);
    return 1;
  }
  char title[1024];
  size_t len = 0;
  title[0] = '\0';
  str_appendf(title, sizeof title, &len, "llmp %s:", cmd);
  for (int i = 0; i < n; i++) str_appendf(title, sizeof title, &len, " %s", operands[i]);
  out->page = html_open(out->file.fp, title);
  out->path = path;
  return 0;
}

int cli_html_close(Diag *d, CliHtml *h, bool complete) {
  if (!h->page) return 0;
  const char *why = "cannot write";
  int rc = html_close(h->page);
  h->page = NULL;
  if (!complete) {
    atomic_abort(&h->file);
    diag_plain_note(d, h->path, "the HTML report is not written: the command had errors");
    return 0;
  }
  if (rc != 0) {
    atomic_abort(&h->file);
    diag_plain(d, h->path, "cannot write the HTML report");
    return 1;
  }
  if (atomic_commit(&h->file, &why) != 0) {
    diag_plain(d, h->path, "cannot write the HTML report: %s", why);
    return 1;
  }
  return 0;
}
