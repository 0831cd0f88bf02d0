# run_fuzz.cmake - the body of the fuzz.front.60s test (cmake -P).  Copies the seed corpus
# to a scratch folder, runs the fuzzer on it for SECONDS, and prints a summary: runs,
# executions per second, coverage, peak memory.  On a failure it prints the whole output
# (with the sanitizer report and the path of the saved reproducer) and fails.
#
# Variables: FUZZER (the fuzz_front binary), CORPUS_SRC (seed corpus, never written),
# CORPUS (scratch copy), DICT, ARTIFACTS (where crash-*, leak-*, timeout-* files go), SECONDS.
foreach(v FUZZER CORPUS_SRC CORPUS DICT ARTIFACTS SECONDS)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "run_fuzz.cmake: -D${v}= is required")
  endif()
endforeach()

file(REMOVE_RECURSE "${CORPUS}")
file(MAKE_DIRECTORY "${CORPUS}" "${ARTIFACTS}")
file(GLOB seeds "${CORPUS_SRC}/*")
file(COPY ${seeds} DESTINATION "${CORPUS}")

execute_process(
  COMMAND "${FUZZER}" -max_total_time=${SECONDS} "-dict=${DICT}" -max_len=4096 -timeout=10
          -rss_limit_mb=2048 -print_final_stats=1 "-artifact_prefix=${ARTIFACTS}/" "${CORPUS}"
  RESULT_VARIABLE rc
  OUTPUT_VARIABLE out
  ERROR_VARIABLE out)

if(NOT rc EQUAL 0)
  message("${out}")
  message(FATAL_ERROR "fuzz_front failed (exit status ${rc}); the reproducer is in ${ARTIFACTS}/")
endif()

string(REGEX MATCH "Done ([0-9]+) runs in ([0-9]+) second" done "${out}")
if(NOT done)
  message("${out}")
  message(FATAL_ERROR "fuzz_front did not report `Done N runs`")
endif()
set(runs ${CMAKE_MATCH_1})
set(secs ${CMAKE_MATCH_2})
foreach(stat average_exec_per_sec new_units_added peak_rss_mb)
  string(REGEX MATCH "stat::${stat}: *([0-9]+)" m "${out}")
  set(${stat} "${CMAKE_MATCH_1}")
endforeach()
string(REGEX MATCH "#[0-9]+\tINITED[^\n]*" inited "${out}")
string(REGEX MATCH "#[0-9]+\tDONE[^\n]*" last "${out}")
message(STATUS "fuzz_front: ${inited}")
message(STATUS "fuzz_front: ${last}")
message(STATUS "fuzz_front: Done ${runs} runs in ${secs} s: ${average_exec_per_sec} exec/s, "
               "${new_units_added} new corpus units, peak RSS ${peak_rss_mb} MB")
