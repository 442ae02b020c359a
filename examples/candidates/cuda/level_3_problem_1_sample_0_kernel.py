# kj-expect: correct
# MLP: the three matrix products stay in torch (x @ W^T); bias add (+ReLU on hidden layers) is one elementwise CUDA kernel.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

__global__ void bias_act_kernel(const float* __restrict__ y, const float* __restrict__ bias,
                                float* __restrict__ out, int64_t n, int64_t cols, bool relu) {
    const int64_t i = (int64_t)blockIdx.x * blockDim.x + threadIdx.x;
    if (i < n) {
        float v = y[i] + bias[i % cols];
        if (relu && v < 0.0f) v = 0.0f;
        out[i] = v;
    }
}

torch::Tensor bias_act(torch::Tensor y, torch::Tensor bias, bool relu) {
    TORCH_CHECK(y.is_cuda() && y.dim() == 2 && y.scalar_type() == torch::kFloat32, "expected a 2-D CUDA float32 tensor");
    auto yc = y.contiguous();
    auto bc = bias.contiguous();
    const int64_t cols = yc.size(1);
    TORCH_CHECK(bc.numel() == cols, "bias size mismatch");
    auto out = torch::empty_like(yc);
    const int64_t n = yc.numel();
    if (n == 0) return out;
    const int threads = 256;
    bias_act_kernel<<<(unsigned)((n + threads - 1) / threads), threads, 0, at::cuda::getCurrentCUDAStream()>>>(
        yc.data_ptr<float>(), bc.data_ptr<float>(), out.data_ptr<float>(), n, cols, relu);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return out;
}
"""

cpp_source = "torch::Tensor bias_act(torch::Tensor y, torch::Tensor bias, bool relu);"

_ext = load_inline(
    name="kj_ex_l3_p1_s0_cuda",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["bias_act"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, input_size: int, hidden1: int, hidden2: int, output_size: int):
        super().__init__()
        self.fc1 = nn.Linear(input_size, hidden1)
        self.fc2 = nn.Linear(hidden1, hidden2)
        self.fc3 = nn.Linear(hidden2, output_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = _ext.bias_act(torch.mm(x, self.fc1.weight.t()), self.fc1.bias, True)
        h = _ext.bias_act(torch.mm(h, self.fc2.weight.t()), self.fc2.bias, True)
        return _ext.bias_act(torch.mm(h, self.fc3.weight.t()), self.fc3.bias, False)
