# kj-expect: incorrect
# Sum over one dim (keepdim) in CUDA, one thread per output, with an off-by-one loop bound: the last slice is never added.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void sum_dim_kernel(const float* __restrict__ x, float* __restrict__ y,
                               int64_t outer, int64_t R, int64_t inner) {
    const int64_t idx = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (idx >= outer * inner) return;
    const int64_t a = idx / inner, i = idx % inner;
    const float* p = x + a * R * inner + i;
    float acc = 0.0f;
    for (int64_t r = 0; r < R - 1; ++r) acc += p[r * inner];  // BUG: should be r < R
    y[idx] = acc;
}

torch::Tensor sum_keepdim(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.is_cuda() && x.scalar_type() == torch::kFloat32, "expected a CUDA float32 tensor");
    if (dim < 0) dim += x.dim();
    TORCH_CHECK(dim >= 0 && dim < x.dim(), "dim out of range");
    auto xc = x.contiguous();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= xc.size(d);
    for (int64_t d = dim + 1; d < xc.dim(); ++d) inner *= xc.size(d);
    const int64_t R = xc.size(dim);
    auto sizes = xc.sizes().vec();
    sizes[dim] = 1;
    auto y = torch::empty(sizes, xc.options());
    const int64_t n = outer * inner;
    if (n == 0) return y;
    const int threads = 256;
    sum_dim_kernel<<<(unsigned)((n + threads - 1) / threads), threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), outer, R, inner);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor sum_keepdim(torch::Tensor x, int64_t dim);"

_ext = load_inline(
    name="kj_ex_l1_p3_s1_cuda",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["sum_keepdim"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.sum_keepdim(x, self.dim)
