/* test_diag.c - unit tests of compiler/front/diag.c: the line map, source lines, and the
 * diagnostic formats (human, short), notes, buffering and counting. */
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <setjmp.h>
#include <cmocka.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "front/diag.h"

#include "support.h"

/* --- capturing the sink --------------------------------------------------------------- */

static void cap_reset(Cap *c) {
  free(c->p);
  memset(c, 0, sizeof *c);
}

static void setup(Diag *d, Cap *c) {
  memset(c, 0, sizeof *c);
  diag_init(d, NULL);
  diag_set_writer(d, cap_write, c);
}

static void teardown(Diag *d, Cap *c) {
  diag_free(d);
  cap_reset(c);
}

static SrcFile *add(Diag *d, const char *path, const char *text) { return diag_add_file(d, path, text, strlen(text)); }

static void locate_is(SrcFile *f, unsigned off, unsigned line, unsigned col) {
  unsigned l = 0, c = 0;
  srcfile_locate(f, off, &l, &c);
  if (l != line || c != col) fail_msg("offset %u: expected %u:%u, got %u:%u", off, line, col, l, c);
}

static void line_is(SrcFile *f, unsigned off, const char *want) {
  size_t n = 12345;
  const char *s = srcfile_line(f, off, &n);
  assert_non_null(s);
  if (n != strlen(want) || memcmp(s, want, n) != 0)
    fail_msg("offset %u: expected line \"%s\", got \"%.*s\"", off, want, (int)n, s);
}

/* --- the line map -------------------------------------------------------------------- */

TEST(locate_first_middle_last_lines) {
  Diag d;
  Cap c;
  setup(&d, &c);
  SrcFile *f = add(&d, "t.llmp", "ab\ncd\nef\n");
  locate_is(f, 0, 1, 1);
  locate_is(f, 1, 1, 2);
  locate_is(f, 2, 1, 3); /* the newline itself belongs to its line */
  locate_is(f, 3, 2, 1);
  locate_is(f, 4, 2, 2);
  locate_is(f, 6, 3, 1);
  locate_is(f, 7, 3, 2);
  locate_is(f, 8, 3, 3);
  locate_is(f, 9, 4, 1);   /* end of file, after the last newline */
  locate_is(f, 500, 4, 1); /* past the end: clamped */
  teardown(&d, &c);
}

TEST(locate_many_lines) {
  Diag d;
  Cap c;
  setup(&d, &c);
  enum { N = 5000 };
  char *text = malloc(N * 8);
  size_t k = 0;
  unsigned starts[N];
  for (int i = 0; i < N; i++) {
    starts[i] = (unsigned)k;
    k += (size_t)sprintf(text + k, "x%d\n", i);
  }
  SrcFile *f = diag_add_file(&d, "many.llmp", text, k);
  for (int i = 0; i < N; i += 7) {
    locate_is(f, starts[i], (unsigned)i + 1, 1);
    locate_is(f, starts[i] + 1, (unsigned)i + 1, 2);
  }
  locate_is(f, starts[N - 1], N, 1);
  free(text);
  teardown(&d, &c);
}

TEST(locate_empty_file) {
  Diag d;
  Cap c;
  setup(&d, &c);
  SrcFile *f = diag_add_file(&d, "empty.llmp", "", 0);
  assert_int_equal(f->len, 0);
  assert_string_equal(f->text, "");
  locate_is(f, 0, 1, 1);
  locate_is(f, 3, 1, 1);
  line_is(f, 0, "");
  teardown(&d, &c);
}

TEST(locate_without_trailing_newline) {
  Diag d;
  Cap c;
  setup(&d, &c);
  SrcFile *f = add(&d, "t.llmp", "ab\ncd");
  locate_is(f, 3, 2, 1);
  locate_is(f, 4, 2, 2);
  locate_is(f, 5, 2, 3);
  line_is(f, 4, "cd");
  line_is(f, 5, "cd");
  teardown(&d, &c);
}

TEST(locate_crlf) {
  Diag d;
  Cap c;
  setup(&d, &c);
  SrcFile *f = add(&d, "t.llmp", "ab\r\ncd\r\nef");
  locate_is(f, 0, 1, 1);
  locate_is(f, 2, 1, 3); /* the \r */
  locate_is(f, 4, 2, 1);
  locate_is(f, 5, 2, 2);
  locate_is(f, 8, 3, 1);
  line_is(f, 0, "ab"); /* without the \r */
  line_is(f, 5, "cd");
  line_is(f, 9, "ef");
  teardown(&d, &c);
}

TEST(locate_utf8_columns_count_characters) {
  Diag d;
  Cap c;
  setup(&d, &c);
  /* "é" is 2 bytes, "€" 3, "𝔸" 4: columns count characters. */
  SrcFile *f = add(&d, "t.llmp", "x\n\xc3\xa9 = \xe2\x82\xac \xf0\x9d\x94\xb8 y\n");
  locate_is(f, 2, 2, 1);  /* é */
  locate_is(f, 4, 2, 2);  /* space after é */
  locate_is(f, 5, 2, 3);  /* = */
  locate_is(f, 7, 2, 5);  /* € */
  locate_is(f, 10, 2, 6); /* space */
  locate_is(f, 11, 2, 7); /* 𝔸 */
  locate_is(f, 15, 2, 8); /* space */
  locate_is(f, 16, 2, 9); /* y */
  teardown(&d, &c);
}

TEST(srcfile_line_text) {
  Diag d;
  Cap c;
  setup(&d, &c);
  SrcFile *f = add(&d, "t.llmp", "first line\n\nthird\nlast");
  line_is(f, 0, "first line");
  line_is(f, 5, "first line");
  line_is(f, 10, "first line"); /* offset of the newline */
  line_is(f, 11, "");
  line_is(f, 12, "third");
  line_is(f, 18, "last");
  line_is(f, 22, "last");
  teardown(&d, &c);
}

TEST(add_file_copies_text_and_numbers_files) {
  Diag d;
  Cap c;
  setup(&d, &c);
  char text[] = "gpu g {}";
  char path[] = "p.llmp";
  SrcFile *f0 = add(&d, path, text);
  text[0] = 'X';
  path[0] = 'X';
  assert_string_equal(f0->text, "gpu g {}");
  assert_string_equal(f0->path, "p.llmp");
  assert_int_equal(f0->len, 8);
  SrcFile *f1 = diag_add_file(&d, "q.llmp", "abc", 2);
  assert_string_equal(f1->text, "ab");
  assert_int_equal(f0->id, 0);
  assert_int_equal(f1->id, 1);
  for (int i = 2; i < 40; i++) assert_int_equal(add(&d, "r", "x")->id, i);
  assert_int_equal(d.nfiles, 40);
  assert_ptr_equal(d.files[1], f1);
  teardown(&d, &c);
}

TEST(load_file_reads_and_reports_missing) {
  Diag d;
  Cap c;
  setup(&d, &c);
  char dir[] = "/tmp/llmp_diag_XXXXXX";
  assert_non_null(mkdtemp(dir));
  char path[256];
  snprintf(path, sizeof path, "%s/f.llmp", dir);
  /* Bigger than the reader's first buffer. */
  size_t n = 200000;
  char *text = malloc(n);
  for (size_t i = 0; i < n; i++) text[i] = (char)('a' + i % 26);
  FILE *fp = fopen(path, "wb");
  assert_non_null(fp);
  assert_int_equal(fwrite(text, 1, n, fp), n);
  fclose(fp);
  const char *why = NULL;
  SrcFile *f = diag_load_file(&d, path, &why);
  assert_non_null(f);
  assert_int_equal(f->len, n);
  assert_memory_equal(f->text, text, n);
  assert_int_equal(f->text[n], '\0');
  assert_string_equal(f->path, path);
  unlink(path);
  assert_null(diag_load_file(&d, path, &why));
  assert_string_equal(why, "No such file or directory");
  /* a folder, a FIFO and a device are refused, each with its reason, without blocking */
  assert_null(diag_load_file(&d, dir, &why));
  assert_string_equal(why, "is a directory");
  assert_int_equal(mkfifo(path, 0600), 0);
  assert_null(diag_load_file(&d, path, &why));
  assert_string_equal(why, "is not a regular file (a FIFO, device or socket)");
  unlink(path);
  assert_null(diag_load_file(&d, "/dev/zero", &why));
  assert_string_equal(why, "is not a regular file (a FIFO, device or socket)");
  rmdir(dir);
  free(text);
  teardown(&d, &c);
}

/* --- formats ------------------------------------------------------------------------ */

TEST(human_format_exact) {
  Diag d;
  Cap c;
  setup(&d, &c);
  SrcFile *f = add(&d, "dir/m.llmp", "model m {\n  hiden = 4096\n}\n");
  /* "hiden" is bytes 12..17 */
  diag_error(&d, f, (Span){12, 17}, "unknown field `%s`", "hiden");
  assert_string_equal(cap_text(&c), "dir/m.llmp:2:3: error: unknown field `hiden`\n"
                                    " 2 |   hiden = 4096\n"
                                    "   |   ^~~~~\n");
  assert_int_equal(c.calls, 1); /* one diagnostic, one write */
  assert_int_equal(d.errors, 1);
  teardown(&d, &c);
}

TEST(human_format_wide_line_numbers) {
  Diag d;
  Cap c;
  setup(&d, &c);
  char text[400] = "";
  for (int i = 0; i < 11; i++) strcat(text, "\n");
  strcat(text, "x = 1\n");
  SrcFile *f = add(&d, "w.llmp", text);
  diag_error(&d, f, (Span){11, 12}, "m");
  assert_string_equal(cap_text(&c), "w.llmp:12:1: error: m\n"
                                    " 12 | x = 1\n"
                                    "    | ^\n");
  teardown(&d, &c);
}

TEST(human_format_caret_cases) {
  Diag d;
  Cap c;
  setup(&d, &c);
  SrcFile *f = add(&d, "c.llmp", "abc def\nnext line\n");
  /* an empty span: a caret alone */
  diag_error(&d, f, (Span){4, 4}, "empty");
  assert_string_equal(cap_text(&c), "c.llmp:1:5: error: empty\n 1 | abc def\n   |     ^\n");
  cap_reset(&c);
  /* a span over the newline into the next line: tildes stop at the end of the line */
  diag_error(&d, f, (Span){4, 12}, "multi");
  assert_string_equal(cap_text(&c), "c.llmp:1:5: error: multi\n 1 | abc def\n   |     ^~~\n");
  cap_reset(&c);
  /* a span at the end of the line (on its newline) */
  diag_error(&d, f, (Span){7, 8}, "eol");
  assert_string_equal(cap_text(&c), "c.llmp:1:8: error: eol\n 1 | abc def\n   |        ^\n");
  cap_reset(&c);
  /* at the very end of the file */
  diag_error(&d, f, (Span){18, 18}, "eof");
  assert_string_equal(cap_text(&c), "c.llmp:3:1: error: eof\n 3 | \n   | ^\n");
  teardown(&d, &c);
}

TEST(human_format_span_past_end_of_file) {
  Diag d;
  Cap c;
  setup(&d, &c);
  SrcFile *f = add(&d, "p.llmp", "ab\ncd");
  diag_error(&d, f, (Span){100, 120}, "past");
  /* clamped to the end of the file: line 2, after "cd" */
  assert_contains(cap_text(&c), "p.llmp:2:3: error: past\n 2 | cd\n");
  assert_int_equal(d.errors, 1);
  teardown(&d, &c);
}

TEST(human_format_utf8_and_tabs_under_line) {
  Diag d;
  Cap c;
  setup(&d, &c);
  /* "é" is one column: the caret is one space further, not two. */
  SrcFile *f = add(&d, "u.llmp", "\xc3\xa9 = \xe2\x82\xac\xe2\x82\xac x\n");
  diag_error(&d, f, (Span){5, 11}, "euro");
  assert_string_equal(cap_text(&c), "u.llmp:1:5: error: euro\n"
                                    " 1 | \xc3\xa9 = \xe2\x82\xac\xe2\x82\xac x\n"
                                    "   |     ^~\n");
  cap_reset(&c);
  /* A tab before the span is kept as a tab so the caret lines up. */
  SrcFile *g = add(&d, "t.llmp", "\tab = 1\n");
  diag_error(&d, g, (Span){1, 3}, "tab");
  assert_string_equal(cap_text(&c), "t.llmp:1:2: error: tab\n 1 | \tab = 1\n   | \t^~\n");
  teardown(&d, &c);
}

TEST(human_format_control_chars_shown_as_spaces) {
  Diag d;
  Cap c;
  setup(&d, &c);
  SrcFile *f = add(&d, "x.llmp", "a\x01\x1b[31mb\r\n");
  diag_error(&d, f, (Span){0, 1}, "ctl");
  assert_string_equal(cap_text(&c), "x.llmp:1:1: error: ctl\n 1 | a  [31mb\n   | ^\n");
  assert_null(strchr(cap_text(&c), '\x1b'));
  teardown(&d, &c);
}

TEST(short_format_is_first_line_only) {
  Diag d;
  Cap c;
  setup(&d, &c);
  d.format = DIAG_SHORT;
  SrcFile *f = add(&d, "s.llmp", "a\nbb = 1\n");
  diag_error(&d, f, (Span){2, 4}, "bad `%s`", "bb");
  diag_note(&d, f, (Span){0, 1}, "see here");
  assert_string_equal(cap_text(&c), "s.llmp:2:1: error: bad `bb`\ns.llmp:1:1: note: see here\n");
  assert_int_equal(d.errors, 1);
  teardown(&d, &c);
}

TEST(note_format_and_counting) {
  Diag d;
  Cap c;
  setup(&d, &c);
  SrcFile *f = add(&d, "n.llmp", "plan p {}\nmodel p {}\n");
  diag_error(&d, f, (Span){16, 17}, "`p` is declared twice");
  diag_note(&d, f, (Span){5, 6}, "first declared here");
  assert_string_equal(cap_text(&c), "n.llmp:2:7: error: `p` is declared twice\n"
                                    " 2 | model p {}\n"
                                    "   |       ^\n"
                                    "n.llmp:1:6: note: first declared here\n"
                                    " 1 | plan p {}\n"
                                    "   |      ^\n");
  assert_int_equal(d.errors, 1); /* notes are not errors */
  assert_int_equal(d.warnings, 0);
  diag_report(&d, DIAG_WARNING, f, (Span){0, 4}, "w");
  assert_int_equal(d.warnings, 1);
  assert_int_equal(d.errors, 1);
  assert_contains(cap_text(&c), "n.llmp:1:1: warning: w\n");
  teardown(&d, &c);
}

TEST(plain_diagnostic_format) {
  Diag d;
  Cap c;
  setup(&d, &c);
  diag_plain(&d, "missing.llmp", "cannot read file: %s", "No such file or directory");
  diag_plain(&d, NULL, "bad option");
  assert_string_equal(cap_text(&c), "missing.llmp: error: cannot read file: No such file or directory\n"
                                    "error: bad option\n");
  assert_int_equal(d.errors, 2);
  teardown(&d, &c);
}

TEST(error_counting) {
  Diag d;
  Cap c;
  setup(&d, &c);
  SrcFile *f = add(&d, "e.llmp", "x\n");
  assert_int_equal(d.errors, 0);
  for (int i = 0; i < 5; i++) diag_error(&d, f, (Span){0, 1}, "e%d", i);
  diag_note(&d, f, (Span){0, 1}, "n");
  diag_plain(&d, "e.llmp", "p");
  assert_int_equal(d.errors, 6);
  /* Buffered errors count when reported, not when flushed. */
  d.buffered = true;
  diag_error(&d, f, (Span){0, 1}, "held");
  assert_int_equal(d.errors, 7);
  diag_flush(&d);
  assert_int_equal(d.errors, 7);
  teardown(&d, &c);
}

TEST(buffered_sorts_by_file_then_offset) {
  Diag d;
  Cap c;
  setup(&d, &c);
  d.buffered = true;
  d.format = DIAG_SHORT;
  SrcFile *a = add(&d, "a.llmp", "0123456789\n0123456789\n");
  SrcFile *b = add(&d, "b.llmp", "0123456789\n");
  diag_error(&d, b, (Span){5, 6}, "b5");
  diag_error(&d, a, (Span){12, 13}, "a12");
  diag_note(&d, b, (Span){1, 2}, "note of a12");
  diag_error(&d, a, (Span){3, 4}, "a3");
  diag_error(&d, b, (Span){0, 1}, "b0");
  diag_note(&d, a, (Span){0, 1}, "note of b0, first");
  diag_note(&d, a, (Span){20, 21}, "note of b0, second");
  diag_error(&d, a, (Span){3, 5}, "a3 again"); /* same offset: arrival order */
  assert_int_equal(c.n, 0);                    /* nothing written before the flush */
  diag_flush(&d);
  assert_string_equal(cap_text(&c), "a.llmp:1:4: error: a3\n"
                                    "a.llmp:1:4: error: a3 again\n"
                                    "a.llmp:2:2: error: a12\n"
                                    "b.llmp:1:2: note: note of a12\n"
                                    "b.llmp:1:1: error: b0\n"
                                    "a.llmp:1:1: note: note of b0, first\n"
                                    "a.llmp:2:10: note: note of b0, second\n"
                                    "b.llmp:1:6: error: b5\n");
  /* The queue is empty after a flush; a second flush writes nothing. */
  size_t n = c.n;
  diag_flush(&d);
  assert_int_equal(c.n, n);
  teardown(&d, &c);
}

TEST(buffered_human_keeps_excerpts_with_their_errors) {
  Diag d;
  Cap c;
  setup(&d, &c);
  d.buffered = true;
  SrcFile *f = add(&d, "h.llmp", "aa\nbb\n");
  diag_error(&d, f, (Span){3, 5}, "second");
  diag_error(&d, f, (Span){0, 2}, "first");
  diag_flush(&d);
  assert_string_equal(cap_text(&c), "h.llmp:1:1: error: first\n 1 | aa\n   | ^~\n"
                                    "h.llmp:2:1: error: second\n 2 | bb\n   | ^~\n");
  teardown(&d, &c);
}

TEST(buffered_plain_diagnostics_are_written) {
  Diag d;
  Cap c;
  setup(&d, &c);
  d.buffered = true;
  d.format = DIAG_SHORT;
  SrcFile *f = add(&d, "f.llmp", "abc\n");
  diag_error(&d, f, (Span){1, 2}, "positioned");
  diag_plain(&d, "g.llmp", "unpositioned");
  diag_flush(&d);
  assert_contains(cap_text(&c), "f.llmp:1:2: error: positioned\n");
  assert_contains(cap_text(&c), "g.llmp: error: unpositioned\n");
  assert_int_equal(d.errors, 2);
  teardown(&d, &c);
}

TEST(free_flushes_held_diagnostics) {
  Diag d;
  Cap c;
  setup(&d, &c);
  d.buffered = true;
  d.format = DIAG_SHORT;
  SrcFile *f = add(&d, "f.llmp", "abc\n");
  diag_error(&d, f, (Span){1, 2}, "held");
  assert_int_equal(c.n, 0);
  diag_free(&d);
  assert_string_equal(cap_text(&c), "f.llmp:1:2: error: held\n");
  cap_reset(&c);
}

TEST(colour_off_when_captured) {
  Diag d;
  Cap c;
  memset(&c, 0, sizeof c);
  diag_init(&d, NULL);
  d.colour = 1; /* as if stderr were a terminal */
  diag_set_writer(&d, cap_write, &c);
  assert_int_equal(d.colour, 0);
  SrcFile *f = add(&d, "k.llmp", "abc\n");
  diag_error(&d, f, (Span){0, 3}, "no colour");
  diag_note(&d, f, (Span){0, 3}, "none here either");
  diag_plain(&d, "k.llmp", "plain");
  assert_null(strchr(cap_text(&c), '\033'));
  cap_reset(&c);
  /* Turned on explicitly, colours appear: the check above can fail. */
  d.colour = 1;
  diag_error(&d, f, (Span){0, 3}, "colour");
  assert_non_null(strchr(cap_text(&c), '\033'));
  assert_contains(cap_text(&c), "colour");
  teardown(&d, &c);
}

TEST(init_with_file_is_not_coloured) {
  /* A regular file (not a terminal) gets no colour. */
  FILE *tmp = tmpfile();
  assert_non_null(tmp);
  Diag d;
  diag_init(&d, tmp);
  assert_int_equal(d.colour, 0);
  SrcFile *f = diag_add_file(&d, "z.llmp", "q\n", 2);
  diag_error(&d, f, (Span){0, 1}, "to file");
  fflush(tmp);
  rewind(tmp);
  char buf[256] = "";
  size_t n = fread(buf, 1, sizeof buf - 1, tmp);
  buf[n] = '\0';
  assert_string_equal(buf, "z.llmp:1:1: error: to file\n 1 | q\n   | ^\n");
  diag_free(&d);
  fclose(tmp);
}

/* --- diagnostics as data (llmp lsp) -------------------------------------------------- */

typedef struct Got {
  int n;
  DiagLevel lv[4];
  SrcFile *f[4];
  Span sp[4];
  char path[4][32], msg[4][64];
} Got;

static void got_sink(void *user, DiagLevel lv, SrcFile *f, Span sp, const char *path, const char *msg) {
  Got *g = user;
  assert_true(g->n < 4);
  g->lv[g->n] = lv;
  g->f[g->n] = f;
  g->sp[g->n] = sp;
  snprintf(g->path[g->n], sizeof g->path[0], "%s", path ? path : "-");
  snprintf(g->msg[g->n], sizeof g->msg[0], "%s", msg);
  g->n++;
}

TEST(sink_receives_diagnostics_as_data) {
  Diag d;
  Cap c;
  Got g = {0};
  setup(&d, &c);
  diag_set_sink(&d, got_sink, &g);
  SrcFile *f = add(&d, "t.llmp", "hiden = 1\n");
  diag_error(&d, f, (Span){0, 5}, "unknown field `%s`", "hiden");
  diag_note(&d, f, (Span){8, 9}, "here");
  diag_plain(&d, "other.llmp", "cannot read file: %s", "gone");
  assert_int_equal(g.n, 3);
  assert_int_equal(d.errors, 2);
  assert_int_equal(g.lv[0], DIAG_ERROR);
  assert_ptr_equal(g.f[0], f);
  assert_int_equal(g.sp[0].start, 0);
  assert_int_equal(g.sp[0].end, 5);
  assert_string_equal(g.path[0], "t.llmp");
  assert_string_equal(g.msg[0], "unknown field `hiden`");
  assert_int_equal(g.lv[1], DIAG_NOTE);
  assert_int_equal(g.sp[1].start, 8);
  assert_null(g.f[2]);
  assert_string_equal(g.path[2], "other.llmp");
  assert_string_equal(g.msg[2], "cannot read file: gone");
  diag_flush(&d);
  assert_null(c.p); /* nothing written as text */
  teardown(&d, &c);
}

TEST(span_join_covers_both) {
  Span a = {3, 7}, b = {5, 12};
  Span j = span_join(a, b);
  assert_int_equal(j.start, 3);
  assert_int_equal(j.end, 12);
  j = span_join(b, a);
  assert_int_equal(j.start, 3);
  assert_int_equal(j.end, 12);
}

int main(int argc, char **argv) {
  const struct CMUnitTest tests[] = {
      cmocka_unit_test(locate_first_middle_last_lines),
      cmocka_unit_test(locate_many_lines),
      cmocka_unit_test(locate_empty_file),
      cmocka_unit_test(locate_without_trailing_newline),
      cmocka_unit_test(locate_crlf),
      cmocka_unit_test(locate_utf8_columns_count_characters),
      cmocka_unit_test(srcfile_line_text),
      cmocka_unit_test(add_file_copies_text_and_numbers_files),
      cmocka_unit_test(load_file_reads_and_reports_missing),
      cmocka_unit_test(human_format_exact),
      cmocka_unit_test(human_format_wide_line_numbers),
      cmocka_unit_test(human_format_caret_cases),
      cmocka_unit_test(human_format_span_past_end_of_file),
      cmocka_unit_test(human_format_utf8_and_tabs_under_line),
      cmocka_unit_test(human_format_control_chars_shown_as_spaces),
      cmocka_unit_test(short_format_is_first_line_only),
      cmocka_unit_test(note_format_and_counting),
      cmocka_unit_test(plain_diagnostic_format),
      cmocka_unit_test(error_counting),
      cmocka_unit_test(buffered_sorts_by_file_then_offset),
      cmocka_unit_test(buffered_human_keeps_excerpts_with_their_errors),
      cmocka_unit_test(buffered_plain_diagnostics_are_written),
      cmocka_unit_test(free_flushes_held_diagnostics),
      cmocka_unit_test(colour_off_when_captured),
      cmocka_unit_test(init_with_file_is_not_coloured),
      cmocka_unit_test(span_join_covers_both),
      cmocka_unit_test(sink_receives_diagnostics_as_data),
  };
  return RUN_TESTS(tests);
}
