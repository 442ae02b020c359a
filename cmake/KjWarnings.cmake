# One interface target that carries the project's warning flags.
add_library(kj_warnings INTERFACE)
target_compile_options(kj_warnings INTERFACE -Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor
                                             -Wno-missing-field-initializers)
