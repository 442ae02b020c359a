# Finds every third-party dependency with find_package; nothing is vendored. CUDA, CUPTI and NVML are optional.

# Python: the interpreter that has torch decides which libpython the worker embeds.
if(KJ_PYTHON)
  set(Python3_EXECUTABLE ${KJ_PYTHON})
endif()
find_package(Python3 REQUIRED COMPONENTS Interpreter Development.Embed)
# The real interpreter path (not a pyenv shim): the worker starts Python with it as program name at run time.
execute_process(COMMAND ${Python3_EXECUTABLE} -c "import sys; print(sys.executable)"
                OUTPUT_VARIABLE KJ_PYTHON_EXECUTABLE OUTPUT_STRIP_TRAILING_WHITESPACE)

# pybind11: the distribution's CMake package, else the one that ships inside the chosen Python's pip package.
find_package(pybind11 CONFIG QUIET)
if(NOT pybind11_FOUND)
  execute_process(COMMAND ${Python3_EXECUTABLE} -c "import pybind11; print(pybind11.get_cmake_dir())"
                  OUTPUT_VARIABLE _kj_pybind11_dir OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
  find_package(pybind11 CONFIG REQUIRED HINTS ${_kj_pybind11_dir})
endif()

find_package(fmt REQUIRED)
find_package(nlohmann_json 3.10 REQUIRED)
find_package(CLI11 REQUIRED)
find_package(SQLite3 REQUIRED) # -DSQLite3_INCLUDE_DIR=<prefix>/usr/include where the headers are unpacked by hand
find_package(CURL REQUIRED)
find_package(Threads REQUIRED)
# libseccomp (optional): the filter candidate processes install; without it they run unfiltered (docs/security.md).
find_package(PkgConfig QUIET)
set(KJ_HAVE_SECCOMP OFF)
if(PkgConfig_FOUND)
  pkg_check_modules(SECCOMP QUIET IMPORTED_TARGET libseccomp)
  if(SECCOMP_FOUND)
    set(KJ_HAVE_SECCOMP ON)
  endif()
endif()

if(KJ_BUILD_TESTS)
  find_package(Catch2 REQUIRED)
  if(Catch2_VERSION VERSION_GREATER_EQUAL 3)
    set(KJ_CATCH2_V3 ON)
  endif()
  # cpp-httplib, for the tests' fake LLM provider only (kj itself speaks HTTP through libcurl). Optional: without
  # it the LLM adapter tests that need the server are not built. Its CMake package where it ships one, else
  # pkg-config (Debian 12's libcpp-httplib-dev has only a .pc file).
  # KJ_HTTPLIB_INCLUDE_DIR: a folder holding httplib.h, for a machine without the package (the GPU machine:
  # Debian's libcpp-httplib-dev and libcpp-httplib0.11 unpacked with dpkg -x and carried along). Debian's header
  # only declares: the library beside it (../lib/x86_64-linux-gnu/libcpp-httplib.so) is linked when it is there.
  set(KJ_HTTPLIB_INCLUDE_DIR "" CACHE PATH "A folder with cpp-httplib's httplib.h, when no package provides it")
  find_package(httplib CONFIG QUIET)
  if(KJ_HTTPLIB_INCLUDE_DIR AND EXISTS "${KJ_HTTPLIB_INCLUDE_DIR}/httplib.h")
    add_library(kj_httplib INTERFACE)
    target_include_directories(kj_httplib SYSTEM INTERFACE "${KJ_HTTPLIB_INCLUDE_DIR}")
    target_link_libraries(kj_httplib INTERFACE Threads::Threads)
    find_library(KJ_HTTPLIB_LIBRARY NAMES cpp-httplib NO_DEFAULT_PATH
                 HINTS "${KJ_HTTPLIB_INCLUDE_DIR}/../lib/x86_64-linux-gnu" "${KJ_HTTPLIB_INCLUDE_DIR}/../lib")
    if(KJ_HTTPLIB_LIBRARY)
      target_link_libraries(kj_httplib INTERFACE "${KJ_HTTPLIB_LIBRARY}")
    endif()
  elseif(httplib_FOUND)
    add_library(kj_httplib INTERFACE)
    target_link_libraries(kj_httplib INTERFACE httplib::httplib)
  else()
    find_package(PkgConfig QUIET)
    if(PkgConfig_FOUND)
      pkg_check_modules(KJ_HTTPLIB QUIET IMPORTED_TARGET cpp-httplib)
      if(KJ_HTTPLIB_FOUND)
        add_library(kj_httplib INTERFACE)
        target_link_libraries(kj_httplib INTERFACE PkgConfig::KJ_HTTPLIB)
      endif()
    endif()
  endif()
  if(TARGET kj_httplib)
    set(KJ_HAVE_HTTPLIB ON)
  else()
    set(KJ_HAVE_HTTPLIB OFF)
    message(STATUS "kerneljudge: cpp-httplib not found: the LLM adapter tests with the fake server are not built")
  endif()
endif()
if(KJ_BUILD_BENCHMARKS)
  find_package(benchmark REQUIRED)
endif()

# CUDA: compiled and linked whenever the toolkit is found (AUTO) so CI proves it links; no GPU is needed to build.
set(KJ_HAVE_CUDA OFF)
set(KJ_HAVE_CUPTI OFF)
set(KJ_HAVE_NVML OFF)
if(NOT KJ_WITH_CUDA STREQUAL "OFF")
  if(KJ_WITH_CUDA STREQUAL "ON")
    find_package(CUDAToolkit REQUIRED)
  else()
    find_package(CUDAToolkit QUIET)
  endif()
  if(CUDAToolkit_FOUND)
    set(KJ_HAVE_CUDA ON)
    if(TARGET CUDA::cupti)
      set(KJ_HAVE_CUPTI ON)
    endif()
    find_path(KJ_NVML_INCLUDE_DIR nvml.h HINTS ${CUDAToolkit_INCLUDE_DIRS})
    if(TARGET CUDA::nvml AND KJ_NVML_INCLUDE_DIR)
      set(KJ_HAVE_NVML ON)
    endif()
  endif()
endif()
message(STATUS "kerneljudge: python=${KJ_PYTHON_EXECUTABLE} cuda=${KJ_HAVE_CUDA} cupti=${KJ_HAVE_CUPTI} "
               "nvml=${KJ_HAVE_NVML} seccomp=${KJ_HAVE_SECCOMP} catch2=${Catch2_VERSION} httplib=${KJ_HAVE_HTTPLIB}")
