# kj-expect: correct
# Row softmax in CUDA: one 256-thread block per row, shared-memory tree reductions for the row max and the exp-sum.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#define THREADS 256

__global__ void softmax_rows_kernel(const float* __restrict__ x, float* __restrict__ y, int64_t cols) {
    __shared__ float red[THREADS];
    const float* xr = x + (int64_t)blockIdx.x * cols;
    float* yr = y + (int64_t)blockIdx.x * cols;
    const int tid = threadIdx.x;

    float m = -INFINITY;
    for (int64_t c = tid; c < cols; c += THREADS) m = fmaxf(m, xr[c]);
    red[tid] = m;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (tid < s) red[tid] = fmaxf(red[tid], red[tid + s]);
        __syncthreads();
    }
    const float row_max = red[0];
    __syncthreads();

    float sum = 0.0f;
    for (int64_t c = tid; c < cols; c += THREADS) sum += expf(xr[c] - row_max);
    red[tid] = sum;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (tid < s) red[tid] += red[tid + s];
        __syncthreads();
    }
    const float inv = 1.0f / red[0];

    for (int64_t c = tid; c < cols; c += THREADS) yr[c] = expf(xr[c] - row_max) * inv;
}

torch::Tensor softmax_rows(torch::Tensor x) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 2 && x.scalar_type() == torch::kFloat32, "expected a 2-D CUDA float32 tensor");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t rows = xc.size(0), cols = xc.size(1);
    if (rows == 0 || cols == 0) return y;
    softmax_rows_kernel<<<(unsigned)rows, THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), cols);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor softmax_rows(torch::Tensor x);"

_ext = load_inline(
    name="kj_ex_l1_p4_s0_cuda",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["softmax_rows"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.softmax_rows(x)
