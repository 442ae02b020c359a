# kj-expect: correct
# Linear in torch; residual add + LayerNorm fused in a block-per-row CUDA kernel (sum staged in the output buffer).
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

__global__ void add_layernorm_kernel(const float* __restrict__ x, const float* __restrict__ y,
                                     const float* __restrict__ w, const float* __restrict__ b,
                                     float* __restrict__ out, int64_t cols, float eps) {
    __shared__ float red[THREADS];
    const int64_t base = (int64_t)blockIdx.x * cols;
    const int tid = threadIdx.x;

    float s = 0.0f;
    for (int64_t c = tid; c < cols; c += THREADS) {
        const float z = x[base + c] + y[base + c];
        out[base + c] = z;  // each thread re-reads only what it wrote itself
        s += z;
    }
    const float mean = block_sum(s, red) / (float)cols;

    float sq = 0.0f;
    for (int64_t c = tid; c < cols; c += THREADS) {
        const float d = out[base + c] - mean;
        sq += d * d;
    }
    const float rstd = rsqrtf(block_sum(sq, red) / (float)cols + eps);

    for (int64_t c = tid; c < cols; c += THREADS) out[base + c] = (out[base + c] - mean) * rstd * w[c] + b[c];
}

torch::Tensor add_layernorm(torch::Tensor x, torch::Tensor y, torch::Tensor weight, torch::Tensor bias, double eps) {
    TORCH_CHECK(x.is_cuda() && y.is_cuda() && x.sizes() == y.sizes(), "expected CUDA tensors of equal shape");
    TORCH_CHECK(x.scalar_type() == torch::kFloat32 && y.scalar_type() == torch::kFloat32, "expected float32");
    auto xc = x.contiguous();
    auto yc = y.contiguous();
    auto w = weight.contiguous();
    auto b = bias.contiguous();
    const int64_t cols = xc.size(-1);
    const int64_t rows = xc.numel() / cols;
    TORCH_CHECK(w.numel() == cols && b.numel() == cols, "weight/bias size mismatch");
    auto out = torch::empty_like(xc);
    if (rows == 0) return out;
    add_layernorm_kernel<<<(unsigned)rows, THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), yc.data_ptr<float>(), w.data_ptr<float>(), b.data_ptr<float>(),
        out.data_ptr<float>(), cols, (float)eps);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor add_layernorm(torch::Tensor x, torch::Tensor y, torch::Tensor weight, torch::Tensor bias, double eps);"

_ext = load_inline(
    name="kj_ex_l2_p4_s0_cuda",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["add_layernorm"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.add_layernorm(x, self.fc(x), self.norm.weight, self.norm.bias, self.norm.eps)
