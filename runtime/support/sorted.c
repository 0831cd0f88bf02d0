/* sorted.c - the qsort comparators; a folder's files by suffix, sorted. */
#include "sorted.h"

#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "alloc.h"

int cmp_cstr(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

int dir_list(const char *dir, const char *suffix, char ***names) {
  *names = NULL;
  DIR *d = opendir(dir);
  if (!d) return -1;
  size_t m = strlen(suffix), cap = 0;
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    size_t len = strlen(e->d_name);
    if (len <= m || strcmp(e->d_name + len - m, suffix) != 0) continue;
    char *copy = malloc(len + 1);
    if (!copy || !mem_grow((void **)names, &cap, (size_t)n + 1, sizeof **names)) {
      free(copy);
      dir_list_free(*names, n);
      *names = NULL;
      closedir(d);
      return -2;
    }
    memcpy(copy, e->d_name, len + 1);
    (*names)[n++] = copy;
  }
  closedir(d);
  if (n) qsort(*names, (size_t)n, sizeof **names, cmp_cstr);
  return n;
}

void dir_list_free(char **names, int n) {
  for (int i = 0; i < n; i++) free(names[i]);
  free(names);
}
