# Turns a Python file into a C++ source holding it as a string, so the `kj` binary carries its worker runtime.
file(READ ${INPUT} _content)
file(WRITE ${OUTPUT} "// Generated from ${INPUT}; do not edit.\n#include <string_view>\nnamespace kj::worker {\nextern const std::string_view ${SYMBOL};\nconst std::string_view ${SYMBOL} = R\"kjpy(${_content})kjpy\";\n}\n")
