# kj-expect: incorrect
# Attention block with a block-per-row CUDA scaled softmax, but the scores are scaled by 1/head_dim instead of 1/sqrt(head_dim).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#define THREADS 256

__global__ void scaled_softmax_kernel(const float* __restrict__ x, float* __restrict__ y,
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
    for (int64_t c = tid; c < cols; c += THREADS) sum += expf(xr[c] * scale - row_max);
    red[tid] = sum;
    __syncthreads();
    for (int s = THREADS / 2; s > 0; s >>= 1) {
        if (tid < s) red[tid] += red[tid + s];
        __syncthreads();
    }
    const float inv = 1.0f / red[0];
    for (int64_t c = tid; c < cols; c += THREADS) yr[c] = expf(xr[c] * scale - row_max) * inv;
}

torch::Tensor scaled_softmax_lastdim(torch::Tensor x, double scale) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expected a CUDA float32 tensor");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t cols = xc.size(-1);
    if (xc.numel() == 0) return y;
    const int64_t rows = xc.numel() / cols;
    scaled_softmax_kernel<<<(unsigned)rows, THREADS, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), cols, (float)scale);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor scaled_softmax_lastdim(torch::Tensor x, double scale);"

_ext = load_inline(
    name="kj_ex_l3_p3_s1_cuda",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["scaled_softmax_lastdim"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, embed_dim: int, num_heads: int):
        super().__init__()
        assert embed_dim % num_heads == 0
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.norm = nn.LayerNorm(embed_dim)
        self.qkv = nn.Linear(embed_dim, 3 * embed_dim)
        self.proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.qkv(self.norm(x)).split(c, dim=2)
        q = q.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        k = k.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        v = v.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1))
        attn = _ext.scaled_softmax_lastdim(scores, 1.0 / self.head_dim)  # BUG: should be 1/sqrt(head_dim)
        y = torch.matmul(attn, v).transpose(1, 2).contiguous().view(b, t, c)
        return x + self.proj(y)
