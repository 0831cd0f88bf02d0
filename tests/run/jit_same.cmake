# jit_same.cmake - `llmp run --format json` with the JIT and with --no-jit print the same
# bytes for each file of FILES (|-separated) (tests/run/CMakeLists.txt).
cmake_minimum_required(VERSION 3.20)
string(REPLACE "|" ";" files "${FILES}")
foreach(f ${files})
  execute_process(COMMAND ${LLMP} run --format json ${f} OUTPUT_VARIABLE jit RESULT_VARIABLE rc1)
  execute_process(COMMAND ${LLMP} run --no-jit --format json ${f} OUTPUT_VARIABLE interp RESULT_VARIABLE rc2)
  if(NOT rc1 EQUAL 0 OR NOT rc2 EQUAL 0)
    message(FATAL_ERROR "${f}: exit ${rc1} (JIT), ${rc2} (--no-jit)")
  endif()
  if(NOT jit STREQUAL interp OR jit STREQUAL "")
    message(FATAL_ERROR "${f}: the JIT's report differs from the interpreter's:\n${jit}\n---\n${interp}")
  endif()
endforeach()
