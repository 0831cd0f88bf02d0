# run_fuzz.cmake - the body of the fuzz.*.60s tests (cmake -P).
# Copies the seed corpus to a scratch folder, runs the fuzzer on it for SECONDS, and prints a
# summary: runs, executions per second, coverage, peak memory.  On a failure it prints the
# report (from the sanitizer's or libFuzzer's first line to the end) and the reproducers in
# hex, and fails; the whole output is in ARTIFACTS/fuzz.log either way.
#
# Variables: FUZZER (the fuzz_front, fuzz_calib or fuzz_lsp binary), CORPUS_SRC (seed corpus,
# never written), CORPUS (scratch copy), DICT, ARTIFACTS (where crash-*, leak-*, timeout-*
# files go), SECONDS, MAX_LEN (the longest input, bytes).
foreach(v FUZZER CORPUS_SRC CORPUS DICT ARTIFACTS SECONDS MAX_LEN)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_fuzz.cmake: -D${v}= is required")
  endif()
endforeach()

get_filename_component(name "${FUZZER}" NAME)
file(REMOVE_RECURSE "${CORPUS}")
file(MAKE_DIRECTORY "${CORPUS}" "${ARTIFACTS}")
file(GLOB seeds "${CORPUS_SRC}/*")
file(COPY ${seeds} DESTINATION "${CORPUS}")

execute_process(
  COMMAND "${FUZZER}" -max_total_time=${SECONDS} "-dict=${DICT}" -max_len=${MAX_LEN} -timeout=10
          -rss_limit_mb=2048 -print_final_stats=1 "-artifact_prefix=${ARTIFACTS}/" "${CORPUS}"
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE out)

file(WRITE "${ARTIFACTS}/fuzz.log" "${out}")
if(NOT rc EQUAL 0)
  # The progress lines (#N NEW ...) would bury the report: print from the line of the first
  # mark of a sanitizer's, UBSan's, libFuzzer's or the harness's report to the end (the last
  # 4000 bytes if there is none: killed from outside), then each reproducer's bytes in hex, so
  # that a CI log alone shows what failed.
  set(at -1)
  foreach(mark "==ERROR" "runtime error:" "ALARM:" "ERROR: libFuzzer" "out-of-memory" "fuzz_front:" "fuzz_calib:" "fuzz_lsp:"
          "Sanitizer")
    string(FIND "${out}" "${mark}" m)
    if(m GREATER -1 AND (at EQUAL -1 OR m LESS at))
      set(at ${m})
    endif()
  endforeach()
  if(at GREATER -1)
    string(SUBSTRING "${out}" 0 ${at} before)
    string(FIND "${before}" "\n" nl REVERSE)
    math(EXPR at "${nl} + 1")
  else()
    string(LENGTH "${out}" len)
    math(EXPR at "${len} > 4000 ? ${len} - 4000 : 0")
  endif()
  string(SUBSTRING "${out}" ${at} -1 report)
  message("--- ${name}'s report (the whole output: ${ARTIFACTS}/fuzz.log)\n${report}")
  file(GLOB repro "${ARTIFACTS}/crash-*" "${ARTIFACTS}/leak-*" "${ARTIFACTS}/timeout-*" "${ARTIFACTS}/oom-*"
       "${ARTIFACTS}/slow-unit-*")
  foreach(f ${repro})
    file(READ "${f}" hex HEX)
    message("--- reproducer ${f} (hex):\n${hex}")
  endforeach()
  message(FATAL_ERROR "${name} failed (exit status ${rc}); the reproducer is in ${ARTIFACTS}/")
endif()

string(REGEX MATCH "Done ([0-9]+) runs in ([0-9]+) second" done "${out}")
if(NOT done)
  message("${out}")
  message(FATAL_ERROR "${name} did not report `Done N runs`")
endif()
set(runs ${CMAKE_MATCH_1})
set(secs ${CMAKE_MATCH_2})
foreach(stat average_exec_per_sec new_units_added peak_rss_mb)
  string(REGEX MATCH "stat::${stat}: *([0-9]+)" m "${out}")
  set(${stat} "${CMAKE_MATCH_1}")
endforeach()
string(REGEX MATCH "#[0-9]+\tINITED[^\n]*" inited "${out}")
string(REGEX MATCH "#[0-9]+\tDONE[^\n]*" last "${out}")
message(STATUS "${name}: ${inited}")
message(STATUS "${name}: ${last}")
message(STATUS "${name}: Done ${runs} runs in ${secs} s: ${average_exec_per_sec} exec/s, "
               "${new_units_added} new corpus units, peak RSS ${peak_rss_mb} MB")
