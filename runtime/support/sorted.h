/* sorted.h - the qsort comparators, and the names of a folder's files that end in a suffix
 * sorted by name: readdir's order depends on the file system, and the loaders' order decides
 * which of two duplicates is reported.  dir_list does not abort: the runtime's loaders report
 * failures. */
#ifndef LLMP_SORTED_H
#define LLMP_SORTED_H

/* The names (without the folder) longer than suffix and ending in it, into *names (each and
 * the array malloc'd; dir_list_free).  Returns their count, -1 when the folder does not open
 * (errno says why), -2 when memory runs out. */
int dir_list(const char *dir, const char *suffix, char ***names);
void dir_list_free(char **names, int n);

/* qsort comparators: C strings (an array of char *) in strcmp order, doubles ascending. */
int cmp_cstr(const void *a, const void *b);
int cmp_double(const void *a, const void *b);

#endif
