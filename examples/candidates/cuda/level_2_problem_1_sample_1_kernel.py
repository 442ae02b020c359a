# kj-expect: incorrect
# Linear in torch, then a fused CUDA kernel that adds the post-bias BEFORE the ReLU (relu(y+b) instead of relu(y)+b).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void relu_then_bias_kernel(const float* __restrict__ y, const float* __restrict__ bias,
                                      float* __restrict__ out, int64_t n, int64_t cols) {
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        const float v = y[i] + bias[i % cols];  // BUG: bias belongs after the activation
        out[i] = fmaxf(v, 0.0f);
    }
}

torch::Tensor relu_then_bias(torch::Tensor y, torch::Tensor bias) {
    TORCH_CHECK(y.is_cuda() && y.dim() == 2 && y.scalar_type() == torch::kFloat32, "expected a 2-D CUDA float32 tensor");
    auto yc = y.contiguous();
    auto bc = bias.contiguous();
    const int64_t cols = yc.size(1);
    TORCH_CHECK(bc.numel() == cols, "bias size mismatch");
    auto out = torch::empty_like(yc);
    const int64_t n = yc.numel();
    if (n == 0) return out;
    const int threads = 256;
    relu_then_bias_kernel<<<(unsigned)((n + threads - 1) / threads), threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        yc.data_ptr<float>(), bc.data_ptr<float>(), out.data_ptr<float>(), n, cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor relu_then_bias(torch::Tensor y, torch::Tensor bias);"

_ext = load_inline(
    name="kj_ex_l2_p1_s1_cuda",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["relu_then_bias"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.post_bias = nn.Parameter(torch.randn(out_features) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.relu_then_bias(self.linear(x), self.post_bias)
