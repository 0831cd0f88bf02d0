/* load.c - reading a file and everything it imports, once each, with cycle detection.
 *
 * Files are identified by their canonical path.  A file is "loading" while its imports
 * are being read; meeting a loading file again is an import cycle.  After loading, each
 * file gets the set of files it can see: itself and what it imports, transitively. */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/stat.h>
#include <unistd.h>

#include "alloc.h"
#include "fileio.h"
#include "sema_private.h"

enum { MAX_IMPORT_DEPTH = 128 };

static bool is_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* dir/path, with ".llmp" appended when path has no extension, if that is a file: malloc'd,
 * or NULL. */
static char *try_path(const char *dir, const char *path) {
  const char *base = strrchr(path, '/');
  base = base ? base + 1 : path;
  const char *ext = strchr(base, '.') ? "" : ".llmp";
  size_t n = strlen(dir) + strlen(path) + strlen(ext) + 2;
  char *p = xmalloc(n);
  if (path[0] == '/' || !dir[0])
    snprintf(p, n, "%s%s", path, ext);
  else
    snprintf(p, n, "%s/%s%s", dir, path, ext);
  struct stat st;
  if (stat(p, &st) == 0) return p; /* a folder or FIFO too: loading it says what it is */
  free(p);
  return NULL;
}

static const char *default_dir;
static char beside_dir[PATH_MAX];
static pthread_once_t default_once = PTHREAD_ONCE_INIT;

/* The data folder when none is given: the source tree for the build tree's own llmp; for an
 * installed one, LLMP_DATA_FROM_BIN from the binary's folder (relative, so that a moved prefix
 * still works), else the configured install folder; the source tree when neither exists. */
static void find_default_dir(void) {
  char exe[PATH_MAX], build[PATH_MAX];
  ssize_t n = readlink("/proc/self/exe", exe, sizeof exe - 1);
  char *slash = n > 0 ? (exe[n] = '\0', strrchr(exe, '/')) : NULL;
  if (slash) {
    *slash = '\0';
    if (realpath(LLMP_BUILD_DIR, build) && strcmp(exe, build) == 0) {
      default_dir = LLMP_SOURCE_DIR;
      return;
    }
    char data[PATH_MAX + 64], stdlib[PATH_MAX + 80];
    snprintf(data, sizeof data, "%s/%s", exe, LLMP_DATA_FROM_BIN);
    snprintf(stdlib, sizeof stdlib, "%s/stdlib", data);
    if (is_dir(stdlib) && realpath(data, beside_dir)) {
      default_dir = beside_dir;
      return;
    }
  }
  default_dir = is_dir(LLMP_DATA_DIR "/stdlib") ? LLMP_DATA_DIR : LLMP_SOURCE_DIR;
}

static const char *data_dir(const SemaOptions *opt) {
  if (opt->data_dir) return opt->data_dir;
  const char *env = getenv("LLMP_DATA");
  if (env && *env) return env;
  pthread_once(&default_once, find_default_dir);
  return default_dir;
}

char *sema_resolve_import(const SemaOptions *opt, const char *from_dir, const char *path) {
  char *p;
  if (path[0] == '/') return try_path("", path);
  if (from_dir && (p = try_path(from_dir, path))) return p;
  for (int i = 0; i < opt->ninclude_dirs; i++)
    if ((p = try_path(opt->include_dirs[i], path))) return p;
  const char *env = getenv("LLMP_PATH");
  if (env) {
    char dir[PATH_MAX];
    for (const char *s = env; *s;) {
      size_t n = strcspn(s, ":");
      if (n && n < sizeof dir) {
        memcpy(dir, s, n);
        dir[n] = '\0';
        if ((p = try_path(dir, path))) return p;
      }
      s += n + (s[n] == ':');
    }
  }
  return try_path(data_dir(opt), path);
}

static int find_file(Sema *s, const char *real) {
  for (int i = 0; i < s->nfiles; i++)
    if (strcmp(s->files[i].real, real) == 0) return i;
  return -1;
}

static int add_file(Sema *s, SrcFile *src, const char *real) {
  XGROW(s->files, s->nfiles + 1, s->capfiles);
  SemaFile *f = &s->files[s->nfiles];
  memset(f, 0, sizeof *f);
  f->src = src;
  f->real = arena_strdup(&s->arena, real);
  return s->nfiles++;
}

static char *dir_of(const char *path) {
  const char *slash = strrchr(path, '/');
  if (!slash) return xstrdup(".");
  size_t n = slash == path ? 1 : (size_t)(slash - path); /* "/x" is in "/" */
  char *dir = xmalloc(n + 1);
  memcpy(dir, path, n);
  dir[n] = '\0';
  return dir;
}

static int load(Sema *s, const char *path, int from, AstNode *at, unsigned depth);

/* Reads the imports of file i, in order, recursively; they resolve against dir first (NULL:
 * a root that is no file, whose imports resolve as -I, LLMP_PATH and the data folder say). */
static void load_imports(Sema *s, int i, const char *dir, unsigned depth) {
  AstNode *root = s->files[i].root;
  int n = 0;
  for (AstNode *c = root->u.list.first; c; c = c->next) n += c->kind == AST_IMPORT;
  ImportEdge *edges = arena_alloc(&s->arena, (size_t)(n ? n : 1) * sizeof *edges);
  s->files[i].imports = edges;
  s->files[i].nimports = 0;
  for (AstNode *c = root->u.list.first; c; c = c->next) {
    if (c->kind != AST_IMPORT) continue;
    char *p = sema_resolve_import(&s->opt, dir, c->name);
    int t = -1;
    if (!p) {
      s->broken = true;
      diag_error(s->diag, s->files[i].src, c->span,
                 "cannot find import \"%s\" (looked in %s%s-I folders, LLMP_PATH and %s)", c->name, dir ? dir : "",
                 dir ? ", " : "", data_dir(&s->opt));
    } else {
      t = load(s, p, i, c, depth + 1);
      free(p);
    }
    edges[s->files[i].nimports++] = (ImportEdge){c, t};
  }
}

static bool is_folder(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && S_ISDIR(st.st_mode);
}

/* A file that cannot be read (errno says why), reported at the import that named it. */
static int load_failed(Sema *s, const char *path, SrcFile *fromsrc, AstNode *at, const char *why) {
  if (fromsrc)
    diag_error(s->diag, fromsrc, at->span, "cannot read \"%s\": %s", path, why);
  else if (is_folder(path)) {
    int n = (int)strlen(path);
    while (n > 1 && path[n - 1] == '/') n--;
    diag_plain(s->diag, path,
               "is a folder: llmp reads .llmp files; name them (`%.*s/*.llmp`), or run `llmp validate %s`, which "
               "reads the files of a folder",
               n, path, path);
  }
  else
    diag_plain(s->diag, path, "cannot read file: %s", why);
  s->broken = true;
  return -1;
}

/* A file met again while its imports are still being read. */
static int import_cycle(Sema *s, int i, int from, AstNode *at) {
  SrcFile *fromsrc = s->files[from].src;
  if (i == from)
    diag_error(s->diag, fromsrc, at->span, "file imports itself");
  else {
    diag_error(s->diag, fromsrc, at->span, "import cycle: \"%s\" is already being imported", at->name);
    Span top = {0, 0};
    diag_note(s->diag, s->files[i].src, top, "the cycle starts in this file");
  }
  s->broken = true;
  return -1;
}

/* Parses file i, then reads what it imports (recursively); returns i. */
static int parse_loaded(Sema *s, int i, unsigned depth) {
  SrcFile *src = s->files[i].src;
  Parser p;
  s->files[i].root = parse_file(&p, &s->arena, &s->in, s->diag, src);
  if (!s->files[i].root || p.syntax_errors) s->broken = true;
  if (!s->files[i].root) {
    s->files[i].state = 2;
    return i;
  }
  s->files[i].state = 1;
  char *dir = dir_of(src->path);
  load_imports(s, i, dir, depth);
  free(dir);
  s->files[i].state = 2;
  return i;
}

/* Reads path (imported by file `from` at `at`, or the root when from is -1) and, recursively,
 * what it imports; returns its file index, or -1. */
static int load(Sema *s, const char *path, int from, AstNode *at, unsigned depth) {
  char *real = realpath(path, NULL);
  SrcFile *fromsrc = from >= 0 ? s->files[from].src : NULL;
  if (!real) return load_failed(s, path, fromsrc, at, strerror(errno));
  int i = find_file(s, real);
  if (i >= 0) {
    free(real);
    return s->files[i].state == 1 ? import_cycle(s, i, from, at) : i;
  }
  if (depth > MAX_IMPORT_DEPTH) {
    diag_error(s->diag, fromsrc, at->span, "imports nested more than %d files deep", MAX_IMPORT_DEPTH);
    free(real);
    s->broken = true;
    return -1;
  }
  const char *why;
  SrcFile *src = diag_load_file(s->diag, path, &why);
  if (!src) {
    load_failed(s, path, fromsrc, at, why);
    free(real);
    return -1;
  }
  i = add_file(s, src, real);
  free(real);
  return parse_loaded(s, i, depth);
}

int load_root(Sema *s, const char *path) { return load(s, path, -1, NULL, 0); }

/* An editor's buffer for path: its imports resolve as the file's would; a file that imports
 * the root back reads the buffer, not the disk. */
int load_root_buffer(Sema *s, const char *path, const char *text, size_t len) {
  char *real = realpath(path, NULL);
  SrcFile *src = diag_add_file(s->diag, path, text, len);
  int i = add_file(s, src, real ? real : path);
  free(real);
  return parse_loaded(s, i, 0);
}

/* A root that is not a file (llmp op's list of imports): it has no folder, so the current
 * one is never searched. */
int load_root_text(Sema *s, const char *name, const char *text) {
  SrcFile *src = diag_add_file(s->diag, name, text, strlen(text));
  int i = add_file(s, src, name);
  Parser p;
  s->files[i].root = parse_file(&p, &s->arena, &s->in, s->diag, src);
  if (!s->files[i].root || p.syntax_errors) {
    s->broken = true;
    return i;
  }
  s->files[i].state = 1;
  load_imports(s, i, NULL, 0);
  s->files[i].state = 2;
  return i;
}

const char *sema_data_dir(const SemaOptions *opt) { return data_dir(opt); }

/* Whether text declares `kind name` at the start of a line. */
static bool declares(const char *text, size_t len, const char *kind, const char *name) {
  size_t k = strlen(kind), n = strlen(name);
  for (size_t i = 0; i + k + n + 1 < len; i++) {
    if ((i && text[i - 1] != '\n') || memcmp(text + i, kind, k) || text[i + k] != ' ') continue;
    size_t j = i + k;
    while (j < len && text[j] == ' ') j++;
    if (j + n <= len && !memcmp(text + j, name, n) && (j + n == len || strchr(" {\n", text[j + n]))) return true;
  }
  return false;
}

/* The import path (under dir, `rel` so far) of a .llmp file that declares `kind name`. */
static bool find_declaring(const char *dir, const char *rel, const char *kind, const char *name, char *out, size_t n,
                           int depth) {
  DIR *dp = depth < 4 ? opendir(dir) : NULL;
  if (!dp) return false;
  bool found = false;
  for (struct dirent *e; !found && (e = readdir(dp));) {
    if (e->d_name[0] == '.') continue;
    char path[4096], sub[1024];
    snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
    snprintf(sub, sizeof sub, "%s%s%s", rel, *rel ? "/" : "", e->d_name);
    size_t len = strlen(e->d_name);
    char *text;
    size_t tl;
    const char *why;
    if (is_folder(path)) {
      found = find_declaring(path, sub, kind, name, out, n, depth + 1);
    } else if (len > 5 && !strcmp(e->d_name + len - 5, ".llmp") && file_read(path, &text, &tl, &why) == 0) {
      if (declares(text, tl, kind, name)) {
        snprintf(out, n, "%.*s", (int)(strlen(sub) - 5), sub);
        found = true;
      }
      free(text);
    }
  }
  closedir(dp);
  return found;
}

const char *sema_import_hint(Sema *s, const char *kind, const char *name, char *buf, size_t n) {
  static const char *const roots[] = {"hw", "stdlib"};
  char dir[4096], found[1024];
  for (int i = 0; i < 2; i++) {
    snprintf(dir, sizeof dir, "%s/%s", data_dir(&s->opt), roots[i]);
    if (find_declaring(dir, roots[i], kind, name, found, sizeof found, 0)) {
      snprintf(buf, n, "; %s `%s` is declared in \"%s\": add `import \"%s\"`", kind, name, found, found);
      return buf;
    }
  }
  return NULL;
}

/* reach[j] of file i: j is i or reachable through imports (iterative DFS). */
void load_reach(Sema *s) {
  int n = s->nfiles;
  int *stack = arena_alloc(&s->arena, (size_t)(n ? n : 1) * sizeof *stack);
  for (int i = 0; i < n; i++) {
    unsigned char *r = arena_alloc(&s->arena, (size_t)n);
    int top = 0;
    r[i] = 1;
    stack[top++] = i;
    while (top) {
      SemaFile *f = &s->files[stack[--top]];
      for (int k = 0; k < f->nimports; k++) {
        int t = f->imports[k].target;
        if (t >= 0 && !r[t]) {
          r[t] = 1;
          stack[top++] = t;
        }
      }
    }
    s->files[i].reach = r;
  }
}
