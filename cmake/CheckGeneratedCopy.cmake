# Fails when COPY (a generated file kept in the source tree) differs from
# GENERATED, the file the build just generated; touches STAMP otherwise.
execute_process(COMMAND ${CMAKE_COMMAND} -E compare_files ${GENERATED} ${COPY}
                RESULT_VARIABLE differs)
if(differs)
  message(FATAL_ERROR
    "${COPY} is out of date with the definitions it is generated from.\n"
    "Regenerate it:\n  cp ${GENERATED} ${COPY}")
endif()
file(TOUCH ${STAMP})
