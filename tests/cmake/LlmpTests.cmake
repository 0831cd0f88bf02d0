# LlmpTests.cmake - how tests/ registers its C test programs, in one place.
#
# llmp_cmocka_tests(NAME SOURCE PREFIX LABEL LINK...) builds the cmocka program NAME from
# SOURCE and registers each of its tests as its own CTest test, PREFIX.<test>, running
# `NAME <test>`.  The test names are read from the cmocka_unit_test(...) entries of SOURCE,
# so a test added there is registered without editing CMake (SOURCE is a configure
# dependency); a program given a name not in its table exits non-zero (support.h), so a
# stale registration fails instead of passing silently.
find_package(cmocka 1.1 REQUIRED CONFIG)

set(LLMP_TEST_SUPPORT_DIR ${CMAKE_CURRENT_LIST_DIR}/../support)

# A test program: the shared support header, LLMP_SOURCE_DIR for the shipped files it reads.
function(llmp_test_program name)
  cmake_parse_arguments(P "" "" "SOURCES;LINK;OPTIONS" ${ARGN})
  add_executable(${name} ${P_SOURCES})
  if(P_OPTIONS)
    target_compile_options(${name} PRIVATE ${P_OPTIONS})
  else()
    target_compile_options(${name} PRIVATE -Wall -Wextra -Werror)
  endif()
  target_compile_definitions(${name} PRIVATE _XOPEN_SOURCE=700 LLMP_SOURCE_DIR="${PROJECT_SOURCE_DIR}")
  target_include_directories(${name} PRIVATE ${LLMP_TEST_SUPPORT_DIR})
  target_link_libraries(${name} PRIVATE ${P_LINK})
endfunction()

function(llmp_cmocka_tests name)
  cmake_parse_arguments(T "" "SOURCE;PREFIX;LABEL" "LINK" ${ARGN})
  llmp_test_program(${name} SOURCES ${T_SOURCE} LINK ${T_LINK} ${CMOCKA_LIBRARIES})
  target_include_directories(${name} SYSTEM PRIVATE ${CMOCKA_INCLUDE_DIR})
  set_property(DIRECTORY APPEND PROPERTY CMAKE_CONFIGURE_DEPENDS ${T_SOURCE})
  # Every cmocka_unit_test(NAME) of the source, however many stand on one line.
  file(READ ${T_SOURCE} text)
  string(REGEX MATCHALL "cmocka_unit_test\\([A-Za-z0-9_]+\\)" entries "${text}")
  if(NOT entries)
    message(FATAL_ERROR "${T_SOURCE} registers no cmocka_unit_test(...)")
  endif()
  foreach(entry IN LISTS entries)
    string(REGEX MATCH "cmocka_unit_test\\(([A-Za-z0-9_]+)\\)" _ "${entry}")
    add_test(NAME ${T_PREFIX}.${CMAKE_MATCH_1} COMMAND ${name} ${CMAKE_MATCH_1})
    set_tests_properties(${T_PREFIX}.${CMAKE_MATCH_1} PROPERTIES LABELS "${T_LABEL}" TIMEOUT 300)
  endforeach()
endfunction()
