# The git SHA of the source tree for `kj --version` and run rows, read at every build (not only at configure
# time: a rebuild after a commit records that commit): the kj_git_sha target runs KjGitSha.cmake, which rewrites
# ${CMAKE_BINARY_DIR}/generated/kj_git_sha.hpp only when the SHA changed.
find_package(Git QUIET)
set(KJ_GIT_SHA_HEADER ${CMAKE_BINARY_DIR}/generated/kj_git_sha.hpp)
add_custom_target(kj_git_sha ALL
  COMMAND ${CMAKE_COMMAND} -DSOURCE=${PROJECT_SOURCE_DIR} -DOUTPUT=${KJ_GIT_SHA_HEADER}
          -DGIT=${GIT_EXECUTABLE} -P ${PROJECT_SOURCE_DIR}/cmake/KjGitSha.cmake
  BYPRODUCTS ${KJ_GIT_SHA_HEADER}
  COMMENT "Reading the source tree's git SHA" VERBATIM)
