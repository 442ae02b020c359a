# Turns a text file into a C++ source holding it as a string, so the `kj` binary carries its worker runtime (and
# the agent its skill document). -DNAMESPACE=... names the namespace (default kj::worker).
if(NOT NAMESPACE)
  set(NAMESPACE kj::worker)
endif()
file(READ ${INPUT} _content)
file(WRITE ${OUTPUT} "// Generated from ${INPUT}; do not edit.\n#include <string_view>\nnamespace ${NAMESPACE} {\nextern const std::string_view ${SYMBOL};\nconst std::string_view ${SYMBOL} = R\"kjpy(${_content})kjpy\";\n}\n")
