#!/bin/sh
# run.sh - a long fuzzing run of the front end and llmp merge (tests/fuzz/fuzz_front.c), with
# HARNESS=calib of the calibration-table and sample-file readers (tests/fuzz/fuzz_calib.c), or
# with HARNESS=lsp of the language server's message loop (tests/fuzz/fuzz_lsp.c).
#
#   tests/fuzz/run.sh [SECONDS] [LIBFUZZER-OPTION...]       (default 600 s)
#
# Configures and builds the libFuzzer build in build-fuzz/ (clang-14, LLMP_FUZZ=ON,
# LLMP_SANITIZE=ON: ASan+UBSan, leaks included), then fuzzes for SECONDS with the dictionary
# tests/fuzz/llmp.dict, inputs up to 4096 bytes (8192 for lsp), a 10 s timeout per input and
# 2 GB of memory.
#
#   build-fuzz/fuzz-corpus/     the working corpus: seeded from tests/fuzz/corpus/ on the
#                               first run, then kept and grown across runs (delete it to
#                               start over); tests/fuzz/corpus/ is never written
#   build-fuzz/fuzz-artifacts/  crash-*, leak-*, timeout-*, oom-* reproducers
#
# Environment:
#   BUILD_TYPE=Debug            the build type of build-fuzz/ (default Debug, as scripts/test.sh;
#                               RelWithDebInfo fuzzes about twice as fast)
#   JOBS=N                      runs N fuzzing processes (-fork=N) that go on after a crash,
#                               timeout or OOM (-ignore_crashes=1 ...), collecting every
#                               reproducer; unset: one process that stops at the first finding
#   CC=clang-14                 the compiler
#   HARNESS=front               front (fuzz_front, corpus/, llmp.dict), calib (fuzz_calib,
#                               corpus_calib/, calib.dict; its working corpus and reproducers
#                               are build-fuzz/fuzz-corpus-calib/ and fuzz-artifacts-calib/)
#                               or lsp (fuzz_lsp, corpus_lsp/, lsp.dict; -lsp folders)
#
# A reproducer is replayed with `build-fuzz/tests/fuzz/fuzz_front FILE` (fuzz_calib for those
# of HARNESS=calib, fuzz_lsp for lsp; the sanitizer report and the harness's complaint, if
# any, are printed).
# Minimise one with
# `fuzz_front -minimize_crash=1 -runs=10000 FILE`.  Reproducers worth keeping go to
# tests/fuzz/crashes/ under a name that says what they are (not crash-*: .gitignore).
# Exit status: 0 when the run ended without a finding, non-zero otherwise.
set -eu
cd "$(dirname "$0")/../.."

SECONDS_TO_RUN="${1:-600}"
[ $# -gt 0 ] && shift
BUILD_TYPE="${BUILD_TYPE:-Debug}"
JOBS="${JOBS:-}"
CC="${CC:-clang-14}"
B=build-fuzz
HARNESS="${HARNESS:-front}"
case "$HARNESS" in
  front) SEEDS=tests/fuzz/corpus DICT=tests/fuzz/llmp.dict SUFFIX= MAX_LEN=4096 ;;
  calib) SEEDS=tests/fuzz/corpus_calib DICT=tests/fuzz/calib.dict SUFFIX=-calib MAX_LEN=4096 ;;
  lsp) SEEDS=tests/fuzz/corpus_lsp DICT=tests/fuzz/lsp.dict SUFFIX=-lsp MAX_LEN=8192 ;;
  *) echo "run.sh: HARNESS must be front, calib or lsp, not $HARNESS" >&2; exit 2 ;;
esac
FUZZER="fuzz_$HARNESS"
CORPUS="$B/fuzz-corpus$SUFFIX"
ARTIFACTS="$B/fuzz-artifacts$SUFFIX"

cmake -S . -B "$B" -DCMAKE_BUILD_TYPE="$BUILD_TYPE" -DCMAKE_C_COMPILER="$CC" \
  -DLLMP_FUZZ=ON -DLLMP_SANITIZE=ON >/dev/null
cmake --build "$B" -j "$(nproc)" --target "$FUZZER"

mkdir -p "$CORPUS" "$ARTIFACTS"
if [ -z "$(ls -A "$CORPUS")" ]; then
  cp "$SEEDS"/* "$CORPUS/"
fi

set -- -max_total_time="$SECONDS_TO_RUN" -dict="$DICT" -max_len="$MAX_LEN" \
  -timeout=10 -rss_limit_mb=2048 -print_final_stats=1 \
  -artifact_prefix="$ARTIFACTS/" "$@"
if [ -n "$JOBS" ]; then
  set -- -fork="$JOBS" -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1 "$@"
fi

echo "fuzzing $FUZZER for $SECONDS_TO_RUN s ($BUILD_TYPE build, ${JOBS:-1} job(s)); corpus $CORPUS," \
  "reproducers in $ARTIFACTS/"
# Reproducers: crash-, leak-, timeout-, oom- files (slow-unit- files are reports, not findings).
findings() { ls "$ARTIFACTS" | grep -c -E '^(crash|leak|timeout|oom)-' || true; }
before="$(findings)"
status=0
"$B/tests/fuzz/$FUZZER" "$@" "$CORPUS" || status=$?
new=$(($(findings) - before))
echo "run.sh: $FUZZER exit status $status; $new new reproducer(s) in $ARTIFACTS/"
[ "$status" -eq 0 ] && [ "$new" -gt 0 ] && status=1
exit "$status"
