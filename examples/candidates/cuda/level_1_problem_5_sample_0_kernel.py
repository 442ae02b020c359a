# kj-expect: correct
# LayerNorm in CUDA: one 256-thread block per row, shared-memory reductions for the mean and then the centered variance.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#define THREADS 256

__device__ float block_sum(float v, float* red) {
    const int tid = threadIdx.x;
    red[tid] = v;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (tid < s) red[tid] += red[tid + s];
        __syncthreads();
    }
    const float total = red[0];
    __syncthreads();
    return total;
}

__global__ void layernorm_kernel(const float* __restrict__ x, const float* __restrict__ w,
                                 const float* __restrict__ b, float* __restrict__ y,
                                 int64_t cols, float eps) {
    __shared__ float red[THREADS];
    const float* xr = x + (int64_t)blockIdx.x * cols;
    float* yr = y + (int64_t)blockIdx.x * cols;
    const int tid = threadIdx.x;

    float s = 0.0f;
    for (int64_t c = tid; c < cols; c += THREADS) s += xr[c];
    const float mean = block_sum(s, red) / (float)cols;

    float sq = 0.0f;
    for (int64_t c = tid; c < cols; c += THREADS) {
        const float d = xr[c] - mean;
        sq += d * d;
    }
    const float var = block_sum(sq, red) / (float)cols;
    const float rstd = rsqrtf(var + eps);

    for (int64_t c = tid; c < cols; c += THREADS) yr[c] = (xr[c] - mean) * rstd * w[c] + b[c];
}

torch::Tensor layernorm_rows(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expected a CUDA float32 tensor");
    auto xc = x.contiguous();
    auto w = weight.contiguous();
    auto b = bias.contiguous();
    const int64_t cols = xc.size(-1);
    const int64_t rows = xc.numel() / cols;
    TORCH_CHECK(w.numel() == cols && b.numel() == cols, "weight/bias size mismatch");
    auto y = torch::empty_like(xc);
    if (rows == 0) return y;
    layernorm_kernel<<<(unsigned)rows, THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(), y.data_ptr<float>(), cols, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor layernorm_rows(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps);"

_ext = load_inline(
    name="kj_ex_l1_p5_s0_cuda",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["layernorm_rows"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.ln = nn.LayerNorm(features, eps=1e-5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.layernorm_rows(x, self.ln.weight, self.ln.bias, self.ln.eps)
