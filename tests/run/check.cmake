# check.cmake - runs `llmp ARGS` and checks what it did (tests/run/CMakeLists.txt).
#
#   cmake -DLLMP=path -DARGS=a;b;c [checks] -P check.cmake
#
#   RC=N            the exit status (default 0)
#   OUT=regex       standard output must match
#   NOT_OUT=regex   standard output must not match
#   ERR=regex       standard error must match
#   NOT_ERR=regex   standard error must not match
#   JSON_KEYS=a,b   every line of standard output is a JSON object with these top-level keys
#   CSV=1           standard output is a header and at least one row, all with the header's
#                   number of fields
#   TRACE=FILE      removed before the run; afterwards it starts with {"traceEvents", ends
#                   with } and is a JSON object whose traceEvents is a non-empty array
#   GRAPH_JSON=1    standard output is one JSON object: a non-empty `nodes` array and
#                   `outputs` naming iteration
#
# JSON is parsed with CMake's string(JSON) (no other tool needed).  That parser accepts a few
# things RFC 8259 does not (a trailing comma, text after the value, leading zeros); it does
# reject what a printf-based writer gets wrong most (nan, inf, unquoted keys, missing commas),
# and the first and last character of each document are checked here besides.
cmake_minimum_required(VERSION 3.20)

if(NOT DEFINED RC)
  set(RC 0)
endif()
if(DEFINED TRACE)
  file(REMOVE "${TRACE}")
endif()

execute_process(COMMAND ${LLMP} ${ARGS} OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)

set(problems "")
macro(problem text)
  string(APPEND problems "  - ${text}\n")
endmacro()

if(NOT "${rc}" STREQUAL "${RC}")
  problem("exit status ${rc}, expected ${RC}")
endif()
if(DEFINED OUT AND NOT out MATCHES "${OUT}")
  problem("standard output does not match `${OUT}`")
endif()
if(DEFINED NOT_OUT AND out MATCHES "${NOT_OUT}")
  problem("standard output matches `${NOT_OUT}`")
endif()
if(DEFINED ERR AND NOT err MATCHES "${ERR}")
  problem("standard error does not match `${ERR}`")
endif()
if(DEFINED NOT_ERR AND err MATCHES "${NOT_ERR}")
  problem("standard error matches `${NOT_ERR}`")
endif()

include(${CMAKE_CURRENT_LIST_DIR}/../lines.cmake)   # each_line()

function(json_object doc what)
  string(JSON type ERROR_VARIABLE e TYPE "${doc}")
  if(e)
    set(JSON_PROBLEM "${what} is not JSON: ${e}" PARENT_SCOPE)
    return()
  elseif(NOT type STREQUAL "OBJECT")
    set(JSON_PROBLEM "${what} is a JSON ${type}, not an object" PARENT_SCOPE)
    return()
  endif()
  string(STRIP "${doc}" s)
  string(LENGTH "${s}" len)
  math(EXPR last "${len} - 1")
  string(SUBSTRING "${s}" ${last} 1 tail)
  if(NOT tail STREQUAL "}")
    set(JSON_PROBLEM "${what} does not end with }" PARENT_SCOPE)
    return()
  endif()
  set(JSON_PROBLEM "" PARENT_SCOPE)
endfunction()

if(DEFINED JSON_KEYS)
  each_line("${out}" n)
  if(n EQUAL 0)
    problem("no JSON lines")
  else()
    foreach(i RANGE 1 ${n})
      json_object("${LINE_${i}}" "line ${i}")
      if(JSON_PROBLEM)
        problem("${JSON_PROBLEM}")
        continue()
      endif()
      string(REPLACE "," ";" keys "${JSON_KEYS}")
      foreach(key IN LISTS keys)
        string(JSON v ERROR_VARIABLE e GET "${LINE_${i}}" ${key})
        if(e)
          problem("line ${i} has no key `${key}`")
        endif()
      endforeach()
    endforeach()
  endif()
endif()

if(CSV)
  each_line("${out}" n)
  if(n LESS 2)
    problem("CSV: expected a header and a row, got ${n} line(s)")
  else()
    # quoted fields may hold commas: drop them before counting
    string(REGEX REPLACE "\"[^\"]*\"" "q" header "${LINE_1}")
    string(REGEX REPLACE "[^,]" "" hc "${header}")
    string(LENGTH "${hc}" want)
    if(want LESS 2)
      problem("CSV: the header has only ${want} commas")
    endif()
    foreach(i RANGE 2 ${n})
      string(REGEX REPLACE "\"[^\"]*\"" "q" row "${LINE_${i}}")
      string(REGEX REPLACE "[^,]" "" rc_ "${row}")
      string(LENGTH "${rc_}" got)
      if(NOT got EQUAL want)
        problem("CSV: line ${i} has ${got} commas, the header ${want}")
      endif()
    endforeach()
  endif()
endif()

if(DEFINED TRACE)
  if(NOT EXISTS "${TRACE}")
    problem("no trace file ${TRACE}")
  else()
    file(READ "${TRACE}" t)
    if(NOT t MATCHES "^{\"traceEvents\"")
      problem("the trace does not start with {\"traceEvents\"")
    endif()
    if(NOT t MATCHES "}[ \t\r\n]*$")
      problem("the trace does not end with }")
    endif()
    json_object("${t}" "the trace")
    if(JSON_PROBLEM)
      problem("${JSON_PROBLEM}")
    else()
      string(JSON nev ERROR_VARIABLE e LENGTH "${t}" traceEvents)
      if(e OR nev LESS 1)
        problem("the trace has no events")
      endif()
    endif()
  endif()
endif()

if(GRAPH_JSON)
  json_object("${out}" "the graph")
  if(JSON_PROBLEM)
    problem("${JSON_PROBLEM}")
  else()
    string(JSON nn ERROR_VARIABLE e LENGTH "${out}" nodes)
    if(e OR nn LESS 1)
      problem("the graph has no nodes")
    endif()
    string(JSON it ERROR_VARIABLE e GET "${out}" outputs iteration)
    if(e)
      problem("the graph's outputs do not name iteration")
    endif()
  endif()
endif()

if(problems)
  string(REPLACE ";" " " shown "${ARGS}")
  message(FATAL_ERROR "llmp ${shown}:\n${problems}--- exit ${rc}, standard output:\n${out}--- standard error:\n${err}")
endif()
