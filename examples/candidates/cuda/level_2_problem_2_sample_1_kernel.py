# kj-expect: incorrect
# Conv2d in torch, then a fused CUDA kernel that clamps BEFORE scaling (outputs reach scale*bound instead of bound).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void scale_clamp_kernel(const float* __restrict__ y, float* __restrict__ out, int64_t n,
                                   float scale, float lo, float hi) {
    const int64_t stride = (int64_t)gridDim.x * blockDim.x;
    for (int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        const float v = fminf(fmaxf(y[i], lo), hi);  // BUG: clamp is applied to the unscaled value
        out[i] = v * scale;
    }
}

torch::Tensor scale_clamp(torch::Tensor y, double scale, double lo, double hi) {
    TORCH_CHECK(y.is_cuda() && y.scalar_type() == torch::kFloat32, "expected a CUDA float32 tensor");
    auto yc = y.contiguous();
    auto out = torch::empty_like(yc);
    const int64_t n = yc.numel();
    if (n == 0) return out;
    const int threads = 256;
    const int64_t want = (n + threads - 1) / threads;
    const int blocks = (int)(want < 65536 ? want : 65536);
    scale_clamp_kernel<<<blocks, threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        yc.data_ptr<float>(), out.data_ptr<float>(), n, (float)scale, (float)lo, (float)hi);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor scale_clamp(torch::Tensor y, double scale, double lo, double hi);"

_ext = load_inline(
    name="kj_ex_l2_p2_s1_cuda",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["scale_clamp"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int,
                 scale: float, clamp_min: float, clamp_max: float):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.scale = scale
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.scale_clamp(self.conv(x), self.scale, self.clamp_min, self.clamp_max)
