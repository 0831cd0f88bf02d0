# with_stdin.cmake: runs `llmp op ARGS` with STDIN as standard input, prints its standard
# output, then `stderr:` and its standard error, then `exit N` with its exit status, so one
# regular expression checks all three.
execute_process(COMMAND ${LLMP} op ${ARGS} INPUT_FILE ${STDIN} OUTPUT_VARIABLE out ERROR_VARIABLE err
                RESULT_VARIABLE rc)
execute_process(COMMAND ${CMAKE_COMMAND} -E echo_append "${out}stderr:\n${err}exit ${rc}\n")
