# with_stdin.cmake: runs `llmp op ARGS` with STDIN as standard input, prints its standard
# output and then `exit N` with its exit status, so one regular expression checks both.
execute_process(COMMAND ${LLMP} op ${ARGS} INPUT_FILE ${STDIN} OUTPUT_VARIABLE out RESULT_VARIABLE rc)
execute_process(COMMAND ${CMAKE_COMMAND} -E echo_append "${out}exit ${rc}\n")
