#!/bin/sh
# bootstrap.sh - the first of the README's two commands: on a Debian 12 machine, installs the
# Debian packages llmp needs that are missing, builds llmp (Release, in build/), and runs the
# main example.  Safe to run again: it installs nothing that is already there.
#   ./scripts/bootstrap.sh              install, build, run the example
#   ./scripts/bootstrap.sh --deps-only  install only (CI uses this before scripts/test.sh)
set -eu
cd "$(dirname "$0")/.."

# Build: a C compiler, CMake, flex, bison, LLVM 19 (the JIT).  Tests: cmocka; the fuzz
# harness: clang-14 with its sanitizer and libFuzzer runtime; python3 for the tests of the
# sampling harness hw/probe/ (Python with PyTorch on a GPU node), and python3-torch (Debian's
# PyTorch 1.13, CPU) so that its measuring code, not only its grid, order, budget and CSV
# writer, runs in the tests: every operator timed on the CPU, collectives over gloo; and
# python3-pyflakes, which checks the harness's code that only a GPU node runs in full;
# chromium, in which tests/html loads the HTML report (--html) headless.
# llmp lsp: cJSON (libcjson-dev, found with pkg-config); its test drives Neovim's client (neovim).
PKGS="gcc make cmake flex bison libcmocka-dev llvm-19-dev clang-14 libclang-rt-14-dev python3
      python3-torch python3-pyflakes chromium libcjson-dev pkg-config neovim"

missing=""
for p in $PKGS; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
if [ -n "$missing" ]; then
  SUDO=""
  [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  echo "bootstrap: installing$missing"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends $missing
fi
[ "${1:-}" = "--deps-only" ] && exit 0

cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j "$(nproc)"
./build/llmp run examples/quickstart.llmp
