#!/bin/sh
# Hostile inputs and outputs, one case per CTest test (hostile.CASE): devices, FIFOs, folders,
# unwritable and concurrent outputs.  Each case runs llmp in a fresh temporary folder and fails
# (exit 1, with what it saw) unless llmp refuses or survives the input as documented: a
# non-zero status and a message for bad input, never a hang, never a truncated user file.
#
# usage: run.sh LLMP SOURCE_DIR CASE
set -u
LLMP=$1 SRC=$2 CASE=$3
T=$(mktemp -d /tmp/llmp_hostile.XXXXXX) || exit 1
trap 'rm -rf "$T"' EXIT
cd "$T" || exit 1
Q=$SRC/examples/quickstart.llmp

fail() { echo "hostile.$CASE: $*"; [ -f err ] && { echo "--- stderr:"; cat err; }; exit 1; }
# expect STATUS TEXT: the last command's status and a line of its stderr
expect() { [ "$rc" -eq "$1" ] || fail "exit $rc, want $1"; grep -q -- "$2" err || fail "no \`$2\` in stderr"; }

case $CASE in
stdout_full) # every command exits 1 when its output cannot be written
  for cmd in "check $Q" "fmt --stdout $Q" "run $Q" "graph $Q" "validate $SRC/tests/run/validate" \
             "op --gpu h100_sxm linear 4096 4096 4096" "--version"; do
    # shellcheck disable=SC2086
    timeout 60 "$LLMP" $cmd >/dev/full 2>err; rc=$?
    expect 1 "cannot write standard output"
  done ;;
device) # a device is not read (it would never end)
  timeout 10 "$LLMP" check /dev/zero 2>err; rc=$?
  expect 1 "/dev/zero: error: cannot read file: is not a regular file"
  timeout 10 "$LLMP" run /dev/zero 2>err; rc=$?
  expect 1 "is not a regular file" ;;
fifo) # a FIFO without a writer: refused at once, not waited on
  mkfifo f.llmp
  timeout 10 "$LLMP" check f.llmp 2>err; rc=$?
  expect 1 "f.llmp: error: cannot read file: is not a regular file"
  mkdir v && cp "$SRC/tests/run/validate/measured.llmp" v/ && mkfifo v/pipe.llmp
  timeout 30 "$LLMP" validate v >out 2>err; rc=$?
  expect 0 "v/pipe.llmp: note: skipped: not a regular file"
  grep -q "^1 scenario" out || fail "validate did not run the regular file" ;;
folder) # a folder given as a file, or imported
  mkdir d.llmp
  timeout 10 "$LLMP" check d.llmp 2>err; rc=$?
  expect 1 "d.llmp: error: is a folder: llmp reads .llmp files; name them (\`d.llmp/\*.llmp\`), or run \`llmp validate d.llmp\`"
  printf 'import "d"\n' >imp.llmp
  timeout 10 "$LLMP" check imp.llmp 2>err; rc=$?
  expect 1 "cannot read \"./d.llmp\": is a directory" ;;
validate_empty) # nothing to compare is an error
  mkdir empty
  timeout 10 "$LLMP" validate empty >out 2>err; rc=$?
  expect 1 "empty: error: no .llmp file in this folder"
  timeout 30 "$LLMP" validate "$SRC/examples/paper/gpt20b-448-perlmutter.llmp" >out 2>err; rc=$?
  expect 1 "no scenario with \`measured { iteration }\`" ;;
fmt_full_disk) # a write that fails leaves the file as it was
  sed 's/ = /   =   /' "$Q" >big.llmp            # not in canonical layout: fmt rewrites it
  cp big.llmp before.llmp
  chmod 640 big.llmp
  (ulimit -f 1; timeout 10 "$LLMP" fmt big.llmp 2>err); rc=$?
  [ "$rc" -ne 0 ] || fail "fmt under a 512-byte file limit exited 0"
  cmp -s big.llmp before.llmp || fail "big.llmp changed after a failed write"
  timeout 10 "$LLMP" fmt big.llmp 2>err; rc=$?
  [ "$rc" -eq 0 ] || fail "fmt exited $rc"
  [ "$(stat -c %a big.llmp)" = 640 ] || fail "fmt changed the file's mode to $(stat -c %a big.llmp)"
  [ "$(ls | grep -c 'big.llmp.')" -eq 0 ] || fail "a temporary file is left: $(ls)" ;;
html_full_disk) # an --html page that cannot be written whole leaves the file as it was
  printf 'an earlier report\n' >report.html
  (ulimit -f 1; timeout 60 "$LLMP" run --html report.html "$Q" >/dev/null 2>err); rc=$?
  expect 1 "report.html: error: cannot write the HTML report"
  [ "$(cat report.html)" = "an earlier report" ] || fail "report.html changed after a failed write"
  [ "$(ls | grep -c 'report.html.')" -eq 0 ] || fail "a temporary file is left: $(ls)" ;;
sweep_out_early) # an --out that cannot be created fails before the sweep runs
  start=$(date +%s)
  timeout 60 "$LLMP" sweep "$SRC/examples/sweeps/gpt3_175b_selene.llmp" --out no/such/dir/out.csv 2>err; rc=$?
  expect 1 "no/such/dir/out.csv: error: cannot write the result: No such file or directory"
  grep -q "points" err && fail "the sweep ran before the output was checked" ;;
sweep_out_concurrent) # two writers of one --out: the last wins whole
  S=$SRC/examples/sweeps/gpt3_175b_selene.llmp
  timeout 300 "$LLMP" sweep "$S" -j 1 --out out.csv 2>err1 & p1=$!
  timeout 300 "$LLMP" sweep "$S" -j 1 --out out.csv 2>err2; rc=$?
  wait $p1; rc1=$?
  [ "$rc" -eq 0 ] && [ "$rc1" -eq 0 ] || fail "exits $rc1 and $rc"
  tr -d '\000' <out.csv | cmp -s - out.csv || fail "out.csv holds NUL bytes"
  [ "$(head -c 13 out.csv)" = "# llmp_sweep:" ] || fail "out.csv does not start with its header: $(head -c 40 out.csv)"
  timeout 300 "$LLMP" sweep "$S" -j 1 --out alone.csv 2>err || fail "a sweep alone failed"
  [ "$(wc -l <out.csv)" -eq "$(wc -l <alone.csv)" ] || fail "out.csv has $(wc -l <out.csv) lines, a run alone $(wc -l <alone.csv)"
  [ "$(ls | grep -c 'out.csv.')" -eq 0 ] || fail "a temporary file is left: $(ls)" ;;
*) fail "unknown case" ;;
esac
exit 0
