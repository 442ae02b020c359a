# Records the git SHA of the source tree at configure time for `kj --version` and run rows.
find_package(Git QUIET)
set(KJ_GIT_SHA "unknown")
if(GIT_FOUND AND EXISTS ${PROJECT_SOURCE_DIR}/.git)
  execute_process(COMMAND ${GIT_EXECUTABLE} rev-parse --short=12 HEAD WORKING_DIRECTORY ${PROJECT_SOURCE_DIR}
                  OUTPUT_VARIABLE KJ_GIT_SHA OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  execute_process(COMMAND ${GIT_EXECUTABLE} status --porcelain --untracked-files=no
                  WORKING_DIRECTORY ${PROJECT_SOURCE_DIR} OUTPUT_VARIABLE _kj_dirty ERROR_QUIET)
  if(_kj_dirty)
    string(APPEND KJ_GIT_SHA "-dirty")
  endif()
  if(NOT KJ_GIT_SHA)
    set(KJ_GIT_SHA "unknown")
  endif()
endif()
