// CUDA-Agent-style workdirs as candidates: model_new.py plus kernels/*.cu and kernels/*_binding.cpp (and the
// workdir's own binding files), turned into one self-contained candidate source.
#pragma once

#include <filesystem>
#include <string>

namespace kj::adapters {

// A folder with a model_new.py is a workdir.
bool is_workdir(const std::filesystem::path& dir);

// One Python source that needs nothing but itself: the workdir's C++/CUDA files (root and kernels/: .cu,
// .cpp, .cc, .h, .hpp, .cuh) embedded as strings, written at import into a folder of the extension build root
// named by their hash, compiled together as one extension named `cuda_extension` with
// torch.utils.cpp_extension.load and CUDA-Agent's flags, registered so that `import cuda_extension` finds
// it, followed by model_new.py unchanged. The same files give the same text (content-addressed builds).
// Throws kb::source_error naming the folder when model_new.py or every .cu/.cpp source is missing.
std::string workdir_candidate_source(const std::filesystem::path& dir);

} // namespace kj::adapters
