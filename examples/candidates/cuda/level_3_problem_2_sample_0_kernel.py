# kj-expect: correct
# TinyCNN: convs and the head stay in torch; ReLU+2x2 max pool (thread per output) and ReLU+global avg pool (block per plane) in CUDA.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#define THREADS 256

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
    const float m = nan_max(nan_max(plane[h0 * W + w0], plane[h0 * W + w0 + 1]),
                            nan_max(plane[(h0 + 1) * W + w0], plane[(h0 + 1) * W + w0 + 1]));
    y[idx] = m < 0.0f ? 0.0f : m;
}

__global__ void relu_gap_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t hw) {
    __shared__ float red[THREADS];
    const float* plane = x + (int64_t)blockIdx.x * hw;
    const int tid = threadIdx.x;
    float s = 0.0f;
    for (int64_t i = tid; i < hw; i += THREADS) {
        const float v = plane[i];
        s += v < 0.0f ? 0.0f : v;
    }
    red[tid] = s;
    __syncthreads();
    for (int k = THREADS / 2; k > 0; k >>= 1) {
        if (tid < k) red[tid] += red[tid + k];
        __syncthreads();
    }
    if (tid == 0) y[blockIdx.x] = red[0] / (float)hw;
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

torch::Tensor relu_global_avgpool(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 4 && x.scalar_type() == torch::kFloat32, "expected NCHW CUDA float32");
    auto xc = x.contiguous();
    const int64_t N = xc.size(0), C = xc.size(1), HW = xc.size(2) * xc.size(3);
    auto y = torch::empty({N, C}, xc.options());
    if (N * C == 0) return y;
    relu_gap_kernel<<<(unsigned)(N * C), THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), HW);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = """
torch::Tensor relu_maxpool2x2(torch::Tensor x);
torch::Tensor relu_global_avgpool(torch::Tensor x);
"""

_ext = load_inline(
    name="kj_ex_l3_p2_s0_cuda",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["relu_maxpool2x2", "relu_global_avgpool"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, width1: int, width2: int, num_classes: int):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, width1, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.conv2 = nn.Conv2d(width1, width2, kernel_size=3, padding=1)
        self.head = nn.Linear(width2, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = _ext.relu_maxpool2x2(self.conv1(x))
        x = _ext.relu_global_avgpool(self.conv2(x))
        return self.head(x)
