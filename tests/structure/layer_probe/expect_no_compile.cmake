# cmake -DBUILD_DIR=... -DTARGET=... -DEXPECT=<header> -P expect_no_compile.cmake: building TARGET must fail,
# and fail because EXPECT was not found (not for any other reason).
execute_process(COMMAND ${CMAKE_COMMAND} --build ${BUILD_DIR} --target ${TARGET}
                RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _err)
string(APPEND _out "${_err}")
if(_rc EQUAL 0)
  message(FATAL_ERROR "${TARGET} compiled: the layer let an upward include through")
endif()
string(FIND "${_out}" "${EXPECT}" _at)
string(FIND "${_out}" "No such file or directory" _gcc) # GCC's words
string(FIND "${_out}" "file not found" _clang)         # Clang's
if(_at EQUAL -1 OR (_gcc EQUAL -1 AND _clang EQUAL -1))
  message(FATAL_ERROR "${TARGET} failed to build, but not on ${EXPECT} not being found:\n${_out}")
endif()
message(STATUS "${TARGET} failed as it must: ${EXPECT} is not visible from its layer")
