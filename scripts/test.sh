#!/bin/sh
# test.sh - the second of the README's two commands: builds llmp and runs the whole test
# suite, three times over:
#   1. Release build (build/): unit tests, golden tests, checks and fmt round trips of every
#      shipped .llmp file, and an install into a temporary prefix run from another folder;
#   2. ASan+UBSan build (build-asan/): the same suite under the sanitizers (leaks included),
#      less the tests of no C code (editors, probe.unit, probe.lint), with the validation
#      figures left to step 1: ops_accuracy and sample_efficiency run --quick (the same code,
#      fewer fits) and validation.no_jit stands in for validation.stack_factors;
#   3. libFuzzer build with clang-14 (build-fuzz/): the front-end fuzz harness for 60 s, the
#      deep-input cases, the harness of the calibration-table and sample-file readers for
#      60 s, and the language server's for 60 s; two at a time on two cores (about 2 minutes).
# About 10 minutes on two cores (docs/development.md).
# Run ./scripts/bootstrap.sh --deps-only first on a machine that lacks the packages.
# Exits non-zero if anything fails.
set -eu
cd "$(dirname "$0")/.."
J="$(nproc)"

step() { printf '\n=== %s ===\n' "$*"; }

step "Release build and tests"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$J"
ctest --test-dir build --output-on-failure -j "$J"

step "ASan+UBSan build and tests"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DLLMP_SANITIZE=ON
cmake --build build-asan -j "$J"
ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
  ctest --test-dir build-asan --output-on-failure -j "$J"

step "libFuzzer build (clang-14, ASan+UBSan) and 3 x 60 s of fuzzing"
cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=Debug -DCMAKE_C_COMPILER=clang-14 -DLLMP_FUZZ=ON -DLLMP_SANITIZE=ON
cmake --build build-fuzz -j "$J" --target fuzz_front fuzz_calib fuzz_lsp
ctest --test-dir build-fuzz --output-on-failure -V -j "$J" -R '^fuzz\.'   # -V: the runs and exec/s
