# Layers the compiler enforces (docs/design.md, "Layers"). A layer's target does not export the project root as
# an include folder: it exports a folder of its own, <build>/layers/<target>, that holds symbolic links to its
# own sources only (e.g. layers/kj_exec/engine/exec -> <source>/engine/exec). A target sees the headers of the
# layers it links and of no other, so `#include "planning/orchestrator/run.hpp"` from engine/exec/ fails to
# compile: "No such file or directory".
#
# kj_layer(<target> <path>...): each <path> (a folder or a header, relative to the project root) is linked into
# the target's include folder, which the target exports PUBLIC.
function(kj_layer target)
  set(_root ${PROJECT_BINARY_DIR}/layers/${target})
  foreach(_path IN LISTS ARGN)
    set(_link ${_root}/${_path})
    get_filename_component(_parent ${_link} DIRECTORY)
    file(MAKE_DIRECTORY ${_parent})
    if(IS_SYMLINK ${_link})
      file(READ_SYMLINK ${_link} _target)
      if(NOT _target STREQUAL ${PROJECT_SOURCE_DIR}/${_path}) # a build folder reused by a moved checkout
        file(REMOVE ${_link})
      endif()
    endif()
    if(NOT IS_SYMLINK ${_link})
      file(CREATE_LINK ${PROJECT_SOURCE_DIR}/${_path} ${_link} SYMBOLIC)
    endif()
  endforeach()
  target_include_directories(${target} PUBLIC ${_root})
endfunction()

# kj_precompile(<target> <header>...): the third-party headers most of a layer's files include (nlohmann/json,
# fmt, CLI11, pybind11), parsed once per target instead of once per file: they are most of the compile time
# on CI's two cores. Only libraries' headers: kj's own stay included where they are used.
function(kj_precompile target)
  target_precompile_headers(${target} PRIVATE ${ARGN})
endfunction()
