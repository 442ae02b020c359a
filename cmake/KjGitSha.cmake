# Script mode (cmake -DSOURCE=... -DOUTPUT=... -DGIT=... -P): writes `#define KJ_GIT_SHA "<sha>[-dirty]"`
# ("unknown" without git or a .git folder) to OUTPUT, only when it differs from what is there.
set(sha "unknown")
if(GIT AND EXISTS ${SOURCE}/.git)
  execute_process(COMMAND ${GIT} rev-parse --short=12 HEAD WORKING_DIRECTORY ${SOURCE}
                  OUTPUT_VARIABLE sha OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  execute_process(COMMAND ${GIT} status --porcelain --untracked-files=no WORKING_DIRECTORY ${SOURCE}
                  OUTPUT_VARIABLE dirty ERROR_QUIET)
  if(NOT sha)
    set(sha "unknown")
  elseif(dirty)
    string(APPEND sha "-dirty")
  endif()
endif()
set(text "#pragma once\n#define KJ_GIT_SHA \"${sha}\"\n")
if(EXISTS ${OUTPUT})
  file(READ ${OUTPUT} old)
endif()
if(NOT old STREQUAL text)
  file(WRITE ${OUTPUT} "${text}")
endif()
