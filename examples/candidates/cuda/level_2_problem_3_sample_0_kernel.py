# kj-expect: correct
# Linear projection in torch; logit scaling and the row softmax fused in a block-per-row CUDA kernel.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#define THREADS 256

__global__ void scaled_softmax_rows_kernel(const float* __restrict__ x, float* __restrict__ y,
                                           int64_t cols, float scale) {
    __shared__ float red[THREADS];
    const float* xr = x + (int64_t)blockIdx.x * cols;
    float* yr = y + (int64_t)blockIdx.x * cols;
    const int tid = threadIdx.x;

    float m = -INFINITY;
    for (int64_t c = tid; c < cols; c += THREADS) m = fmaxf(m, xr[c] * scale);
    red[tid] = m;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (tid < s) red[tid] = fmaxf(red[tid], red[tid + s]);
        __syncthreads();
    }
    const float row_max = red[0];
    __syncthreads();

    float sum = 0.0f;
    for (int64_t c = tid; c < cols; c += THREADS) {
        const float e = expf(xr[c] * scale - row_max);
        yr[c] = e;
        sum += e;
    }
    red[tid] = sum;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (tid < s) red[tid] += red[tid + s];
        __syncthreads();
    }
    const float inv = 1.0f / red[0];
    // Each thread rescales exactly the entries it wrote above, so no extra barrier is needed.
    for (int64_t c = tid; c < cols; c += THREADS) yr[c] *= inv;
}

torch::Tensor scaled_softmax_rows(torch::Tensor x, double scale) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 2 && x.scalar_type() == torch::kFloat32, "expected a 2-D CUDA float32 tensor");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t rows = xc.size(0), cols = xc.size(1);
    if (rows == 0 || cols == 0) return y;
    scaled_softmax_rows_kernel<<<(unsigned)rows, THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), cols, (float)scale);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor scaled_softmax_rows(torch::Tensor x, double scale);"

_ext = load_inline(
    name="kj_ex_l2_p3_s0_cuda",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["scaled_softmax_rows"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, num_classes: int, logit_scale: float):
        super().__init__()
        self.proj = nn.Linear(in_features, num_classes)
        self.logit_scale = logit_scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.scaled_softmax_rows(self.proj(x), self.logit_scale)
