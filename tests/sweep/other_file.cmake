# other_file.cmake - shards of two files whose sweeps share a name, objective, keep, point
# count and N (a copy of FILE with one plan figure changed) do not merge: their hashes differ,
# and the message names both files.  Shards of the same text run from other folders do merge:
# the hash is of what is evaluated, not of where it lies (tests/sweep/CMakeLists.txt).
#
#   cmake -DLLMP=path -DFILE=small.llmp -DSWEEP=name -DOUT=dir -P other_file.cmake
cmake_minimum_required(VERSION 3.20)
file(REMOVE_RECURSE ${OUT})
file(READ ${FILE} text)
string(REPLACE "global_batch = 32" "global_batch = 64" changed "${text}")
if(changed STREQUAL text)
  message(FATAL_ERROR "${FILE} has no `global_batch = 32` to change")
endif()
file(WRITE ${OUT}/a/s.llmp "${text}")
file(WRITE ${OUT}/b/s.llmp "${changed}")
file(WRITE ${OUT}/c/s.llmp "${text}")
function(run out dir k)
  execute_process(COMMAND ${LLMP} sweep ${OUT}/${dir}/s.llmp --sweep ${SWEEP} --no-progress --shard ${k}/2
                          --out ${OUT}/${out}.jsonl
                  RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_QUIET)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "llmp sweep ${dir}/s.llmp --shard ${k}/2 exited ${rc}:\n${err}")
  endif()
endfunction()
run(a0 a 0)
run(b1 b 1)
run(c1 c 1)
execute_process(COMMAND ${LLMP} merge ${OUT}/a0.jsonl ${OUT}/b1.jsonl RESULT_VARIABLE rc ERROR_VARIABLE err
                OUTPUT_VARIABLE out)
set(want "^[^\n]*/b1\\.jsonl:1: error: hash [0-9a-f]+, but [^\n]*/a0\\.jsonl's is [0-9a-f]+ \\(another file, import, calibration table, llmp version, or --keep-unfit or --keep-equivalent\\): not shards of one sweep\n$")
if(NOT rc EQUAL 1 OR NOT err MATCHES "${want}" OR NOT out STREQUAL "")
  message(FATAL_ERROR "merging shards of two files: exit ${rc}, expected 1 with the hashes; stderr:\n${err}stdout:\n${out}")
endif()
execute_process(COMMAND ${LLMP} merge ${OUT}/a0.jsonl ${OUT}/c1.jsonl RESULT_VARIABLE rc ERROR_VARIABLE err
                OUTPUT_QUIET)
if(NOT rc EQUAL 0 OR NOT err STREQUAL "")
  message(FATAL_ERROR "merging shards of one text in two folders: exit ${rc}:\n${err}")
endif()
