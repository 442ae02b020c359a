# kj-expect: incorrect
# Linear in torch, then a fused scale+softmax CUDA kernel (one thread per column) that normalizes over the wrong axis (dim 0).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

// BUG: each thread owns a column and normalizes down the rows (dim 0);
// the model's softmax runs over the classes of each row (dim 1).
__global__ void scaled_softmax_cols_kernel(const float* __restrict__ x, float* __restrict__ y,
                                           int64_t rows, int64_t cols, float scale) {
    const int64_t c = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (c >= cols) return;
    float m = -INFINITY;
    for (int64_t r = 0; r < rows; ++r) m = fmaxf(m, x[r * cols + c] * scale);
    float sum = 0.0f;
    for (int64_t r = 0; r < rows; ++r) sum += expf(x[r * cols + c] * scale - m);
    const float inv = 1.0f / sum;
    for (int64_t r = 0; r < rows; ++r) y[r * cols + c] = expf(x[r * cols + c] * scale - m) * inv;
}

torch::Tensor scaled_softmax(torch::Tensor x, double scale) {
    TORCH_CHECK(x.is_cuda() && x.dim() == 2 && x.scalar_type() == torch::kFloat32, "expected a 2-D CUDA float32 tensor");
    auto xc = x.contiguous();
    auto y = torch::empty_like(xc);
    const int64_t rows = xc.size(0), cols = xc.size(1);
    if (rows == 0 || cols == 0) return y;
    const int threads = 128;
    scaled_softmax_cols_kernel<<<(unsigned)((cols + threads - 1) / threads), threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        xc.data_ptr<float>(), y.data_ptr<float>(), rows, cols, (float)scale);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return y;
}
"""

cpp_source = "torch::Tensor scaled_softmax(torch::Tensor x, double scale);"

_ext = load_inline(
    name="kj_ex_l2_p3_s1_cuda",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["scaled_softmax"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, num_classes: int, logit_scale: float):
        super().__init__()
        self.proj = nn.Linear(in_features, num_classes)
        self.logit_scale = logit_scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.scaled_softmax(self.proj(x), self.logit_scale)
