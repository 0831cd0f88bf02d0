/* fit_main.c - rt_fit_tool SAMPLES_DIR OUT_DIR [GPU]: rt_fit_dir() from the command line,
 * without the compiler (the GPU model is the built-in one, generated from hw/gpus.llmp; GPU
 * defaults to the one the samples folder is named after).  `llmp fit --gpu` writes the same
 * tables and report. */
#include <stdio.h>

#include "llmp_fit.h"

int main(int argc, char **argv) {
  if (argc < 3 || argc > 4) {
    fprintf(stderr, "usage: %s SAMPLES_DIR OUT_DIR [GPU]\n", argv[0]);
    return 2;
  }
  return rt_fit_dir(argv[1], argv[2], argc == 4 ? argv[3] : NULL, stdout);
}
