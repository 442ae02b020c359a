# kj-expect: correct
# Conv2d in torch; ReLU and the 2x2/stride-2 max pool fused in a CUDA kernel with one thread per pooled output.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__device__ __forceinline__ float nan_max(float a, float b) { return (a > b || a != a) ? a : b; }

__global__ void relu_maxpool2x2_kernel(const float* __restrict__ x, float* __restrict__ y,
                                       int64_t planes, int64_t H, int64_t W, int64_t OH, int64_t OW) {
    const int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= planes * OH * OW) return;
    const int64_t ow = idx % OW;
    const int64_t oh = (idx / OW) % OH;
    const int64_t p = idx / (OW * OH);
    const float* plane = x + p * H * W;
    const int64_t h0 = 2 * oh, w0 = 2 * ow;
    // max over the window (a NaN wins, as in torch), then ReLU (NaN stays NaN)
    float m = nan_max(nan_max(plane[h0 * W + w0], plane[h0 * W + w0 + 1]),
                      nan_max(plane[(h0 + 1) * W + w0], plane[(h0 + 1) * W + w0 + 1]));
    y[idx] = m < 0.0f ? 0.0f : m;
}

torch::Tensor relu_maxpool2x2(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 4 && x.scalar_type() == torch::kFloat32, "expected NCHW CUDA float32");
    auto xc = x.contiguous();
    const int64_t N = xc.size(0), C = xc.size(1), H = xc.size(2), W = xc.size(3);
    const int64_t OH = H / 2, OW = W / 2;
    auto y = torch::empty({N, C, OH, OW}, xc.options());
    const int64_t n = N * C * OH * OW;
    if (n == 0) return y;
    const int threads = 256;
    relu_maxpool2x2_kernel<<<(unsigned)((n + threads - 1) / threads), threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), N * C, H, W, OH, OW);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor relu_maxpool2x2(torch::Tensor x);"

_ext = load_inline(
    name="kj_ex_l2_p5_s0_cuda",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["relu_maxpool2x2"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.relu_maxpool2x2(self.conv(x))
