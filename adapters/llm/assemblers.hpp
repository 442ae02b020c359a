// The stream assemblers of the three wire formats (anthropic_stream.cpp, gemini_stream.cpp,
// openai_stream.cpp), for their providers.
#pragma once

#include "adapters/llm/stream.hpp"

#include <memory>

namespace kj::llm {

std::unique_ptr<stream_assembler> make_anthropic_assembler();
std::unique_ptr<stream_assembler> make_gemini_assembler();
std::unique_ptr<stream_assembler> make_openai_assembler();

} // namespace kj::llm
