# check.cmake - an installed llmp runs every shipped example from any folder.
#
# Installs the build into WORK/prefix, moves the prefix (the binary must find its data from its
# own folder, not from where it was installed), and from a fresh folder outside the source and
# build trees runs the installed llmp: `check` of a missing import must name the moved
# share/llmp as the data folder; `op -v linear` on a100_sxm4_80gb must be calibrated (the
# tables installed) and `llmp run` of every installed example must print what the build
# tree's llmp prints for the source copy.
#
#   cmake -DLLMP=build/llmp -DBUILD_DIR=... -DSOURCE_DIR=... -DWORK=... -DDATADIR=share
#         -DBINDIR=bin -P check.cmake
foreach(v LLMP BUILD_DIR SOURCE_DIR WORK DATADIR BINDIR)
  if(NOT DEFINED ${v})
    message(FATAL_ERROR "check.cmake: -D${v}=... is required")
  endif()
endforeach()
unset(ENV{LLMP_DATA})
unset(ENV{LLMP_PATH})

set(prefix ${WORK}/prefix)
set(moved ${WORK}/moved)
string(RANDOM LENGTH 8 tag)
if(DEFINED ENV{TMPDIR} AND IS_DIRECTORY "$ENV{TMPDIR}")
  set(away "$ENV{TMPDIR}/llmp-install-${tag}")
else()
  set(away "/tmp/llmp-install-${tag}")
endif()

function(fail msg)
  file(REMOVE_RECURSE ${away})
  message(FATAL_ERROR "${msg}")
endfunction()

file(REMOVE_RECURSE ${prefix} ${moved})
execute_process(COMMAND ${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix}
                RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE out)
if(NOT rc EQUAL 0)
  fail("cmake --install failed (${rc}):\n${out}")
endif()
file(RENAME ${prefix} ${moved})
set(llmp ${moved}/${BINDIR}/llmp)
set(data ${moved}/${DATADIR}/llmp)
file(MAKE_DIRECTORY ${away})

# llmp ARGS... from the fresh folder: "rc\nstdout+stderr" in the variable named out.
function(installed out)
  execute_process(COMMAND ${llmp} ${ARGN} WORKING_DIRECTORY ${away}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE text)
  set(${out} "${rc}\n${text}" PARENT_SCOPE)
endfunction()

# The data folder is the moved share/llmp, found from the binary.
file(WRITE ${away}/missing.llmp "import \"no_such_file_llmp_install\"\n")
installed(got check missing.llmp)
if(NOT got MATCHES "LLMP_PATH and ${data}\\)")
  fail("the installed llmp does not read ${data}:\n${got}")
endif()

# A calibrated operator: the tables are installed.
set(op op --gpu a100_sxm4_80gb -v linear 4096 4096 4096)
list(JOIN op " " opline)
installed(got ${op})
execute_process(COMMAND ${LLMP} ${op} WORKING_DIRECTORY ${SOURCE_DIR}
                RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE text)
if(NOT got MATCHES "^0\n[^ \n]+ [^ \n]+ calibrated\n$")
  fail("llmp ${opline} (installed) is not calibrated:\n${got}")
endif()
if(NOT got STREQUAL "${rc}\n${text}")
  fail("llmp ${opline}: installed\n${got}\nbuild tree\n${rc}\n${text}")
endif()

# Every example, installed against the build tree's llmp on the source copy.
file(GLOB_RECURSE examples RELATIVE ${SOURCE_DIR}/examples ${SOURCE_DIR}/examples/*.llmp)
set(n 0)
foreach(f ${examples})
  if(f MATCHES "models\\.llmp$")
    continue()
  endif()
  if(NOT EXISTS ${data}/examples/${f})
    fail("examples/${f} is not installed")
  endif()
  installed(got run ${data}/examples/${f})
  execute_process(COMMAND ${LLMP} run ${SOURCE_DIR}/examples/${f} WORKING_DIRECTORY ${SOURCE_DIR}
                  RESULT_VARIABLE rc OUTPUT_VARIABLE text ERROR_VARIABLE text)
  string(REPLACE "${data}/examples/" "${SOURCE_DIR}/examples/" got "${got}")
  if(NOT got STREQUAL "${rc}\n${text}")
    fail("llmp run examples/${f}: installed\n${got}\nbuild tree\n${rc}\n${text}")
  endif()
  if(NOT rc EQUAL 0)
    fail("llmp run examples/${f} failed:\n${got}")
  endif()
  math(EXPR n "${n} + 1")
endforeach()
if(n LESS 3)
  fail("only ${n} examples under ${SOURCE_DIR}/examples")
endif()
file(REMOVE_RECURSE ${away} ${moved})
message(STATUS "installed llmp: data ${data}, ${n} examples as in the build tree")
