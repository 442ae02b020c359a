# kj-expect: incorrect
# "Fast GELU" x*sigmoid(1.702*x) as an elementwise CUDA kernel: an approximation off by up to ~2e-2, far above 1e-4.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void gelu_sigmoid_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t n) {
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float v = x[i];
        y[i] = v / (1.0f + expf(-1.702f * v));
    }
}

torch::Tensor gelu_sigmoid_approx(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expected a CUDA float32 tensor");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t n = xc.numel();
    if (n == 0) return y;
    const int threads = 256;
    const int64_t blocks = (n + threads - 1) / threads;
    gelu_sigmoid_kernel<<<(unsigned)blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), n);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor gelu_sigmoid_approx(torch::Tensor x);"

_ext = load_inline(
    name="kj_ex_l1_p2_s1_cuda",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["gelu_sigmoid_approx"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.gelu_sigmoid_approx(x)
