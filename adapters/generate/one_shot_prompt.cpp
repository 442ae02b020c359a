// The one-shot prompt's text (ours), for CPU (C++ extensions) and CUDA (CUDA extensions).
#include "adapters/generate/one_shot_prompt.hpp"

#include "core/hashing.hpp"
#include "db/store.hpp"

#include <fmt/core.h>

namespace kj::adapters {
namespace {

constexpr const char* system_text =
    "You are an expert in high-performance kernels for PyTorch models (CUDA, C++, vectorization, memory "
    "hierarchy, numerics). You replace a PyTorch reference program with a faster one that computes the same "
    "outputs. You answer with one complete Python file in one ```python code block.";

constexpr const char* example_reference = R"(import torch
import torch.nn as nn


class Model(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return a + b


def get_inputs():
    return [torch.rand(4096), torch.rand(4096)]


def get_init_inputs():
    return []
)";

constexpr const char* example_cpu = R"(import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
torch::Tensor add_forward(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.sizes() == b.sizes(), "a and b must have the same shape");
    auto x = a.contiguous();
    auto y = b.contiguous();
    auto out = torch::empty_like(x);
    const float* px = x.data_ptr<float>();
    const float* py = y.data_ptr<float>();
    float* po = out.data_ptr<float>();
    const int64_t n = x.numel();
    for (int64_t i = 0; i < n; ++i) po[i] = px[i] + py[i];
    return out;
}
"""

add_ext = load_inline(name="example_elementwise_add", cpp_sources=cpp_source,
                      functions=["add_forward"], extra_cflags=["-O3"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return add_ext.add_forward(a, b)
)";

constexpr const char* example_cuda = R"(import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <torch/extension.h>
#include <ATen/cuda/CUDAContext.h>

__global__ void add_kernel(const float* a, const float* b, float* out, int64_t n) {
    const int64_t i = blockIdx.x * (int64_t)blockDim.x + threadIdx.x;
    if (i < n) out[i] = a[i] + b[i];
}

torch::Tensor add_forward(torch::Tensor a, torch::Tensor b) {
    TORCH_CHECK(a.is_cuda() && b.is_cuda(), "expected CUDA tensors");
    TORCH_CHECK(a.sizes() == b.sizes(), "a and b must have the same shape");
    auto x = a.contiguous();
    auto y = b.contiguous();
    auto out = torch::empty_like(x);
    const int64_t n = x.numel();
    const int threads = 256;
    const int64_t blocks = (n + threads - 1) / threads;
    add_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        x.data_ptr<float>(), y.data_ptr<float>(), out.data_ptr<float>(), n);
    return out;
}
"""

cpp_source = "torch::Tensor add_forward(torch::Tensor a, torch::Tensor b);"

add_ext = load_inline(name="example_elementwise_add", cpp_sources=cpp_source, cuda_sources=cuda_source,
                      functions=["add_forward"], verbose=False)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, a, b):
        return add_ext.add_forward(a, b)
)";

constexpr const char* rules_common = R"(Rules:
- Answer with one complete Python file in one ```python code block. It defines `class ModelNew(nn.Module)`
  with the same constructor arguments and the same `forward` arguments as `Model`. Leave out `Model`,
  `get_inputs` and `get_init_inputs`: the harness supplies them.
- Create the same parameters and buffers as `Model`, with the same names and shapes, in the same order: the
  weights are initialised under the same seed, and some protocols copy `Model`'s state dict into `ModelNew`.
- Do the work in your own kernels, compiled with `torch.utils.cpp_extension.load_inline` under an extension
  name unique to this problem. Do not call `Model`, and do not hand the main computation back to PyTorch.
- Compute in the input's precision (fp32 unless the inputs say otherwise). Outputs must match the reference
  for any input the program accepts, not only the example sizes: NaN, infinities, negative and very large
  values, other batch sizes. Do not cache results between calls and do not modify the inputs.
)";

constexpr const char* rules_cpu =
    R"(- The kernels run on the CPU: pass C++ (C++17) in `cpp_sources` only, no CUDA. Take tensors as
  `torch::Tensor`, call `.contiguous()` before reading raw pointers, and allocate outputs with torch.
)";

constexpr const char* rules_cuda =
    R"(- The kernels run on an NVIDIA GPU: pass CUDA in `cuda_sources` and the C++ declarations of the
  functions you export in `cpp_sources`. Launch on the current stream (`at::cuda::getCurrentCUDAStream()`).
)";

} // namespace

prompt one_shot_prompt(const kb::problem& problem, const std::string& device) {
  const bool cuda = device != "cpu";
  prompt p;
  p.system = system_text;
  p.user = fmt::format(
      "Here is an example of a reference program and a faster replacement in the format you must use.\n\n"
      "Example reference:\n```python\n{}```\n\nExample answer:\n```python\n{}```\n\n{}{}\n"
      "Your task: KernelBench level {} problem {} (`{}`). Write `ModelNew` for this reference program:\n\n"
      "```python\n{}\n```\n",
      example_reference, cuda ? example_cuda : example_cpu, rules_common, cuda ? rules_cuda : rules_cpu,
      problem.level, problem.number, problem.file_name, problem.source);
  p.hash = core::sha256_hex(p.system + "\n\n" + p.user);
  return p;
}

} // namespace kj::adapters
