# Writes OUT (a header: #define DT_GIT_REV_BUILD "<git rev-parse HEAD of SRC>") at every
# build, touching it only when the revision changed, so the binary's revision is the
# commit it was built from, not the one CMake was configured at (a build carried to a
# machine without the repository reports it: src/cli/dt_main.c, dt_git_info).
execute_process(COMMAND git rev-parse HEAD WORKING_DIRECTORY ${SRC}
                OUTPUT_VARIABLE REV OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
if(NOT REV)
  set(REV unknown)
endif()
set(CONTENT "#define DT_GIT_REV_BUILD \"${REV}\"\n")
set(OLD "")
if(EXISTS ${OUT})
  file(READ ${OUT} OLD)
endif()
if(NOT OLD STREQUAL CONTENT)
  file(WRITE ${OUT} "${CONTENT}")
endif()
