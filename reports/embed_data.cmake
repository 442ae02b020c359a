# Turns a data file into a C++ source holding it as a string, so that `kj` carries it (no file to install).
file(READ ${INPUT} _content)
file(WRITE ${OUTPUT} "// Generated from ${INPUT}; do not edit.\n#include <string_view>\nnamespace kj::reports::data {\nextern const std::string_view ${SYMBOL};\nconst std::string_view ${SYMBOL} = R\"kjdata(${_content})kjdata\";\n}\n")
