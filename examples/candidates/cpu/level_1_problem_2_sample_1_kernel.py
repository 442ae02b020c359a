# kj-expect: incorrect
# "Fast GELU" x*sigmoid(1.702*x) in a C++ loop: an approximation that is off by up to ~2e-2, far above 1e-4.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <cmath>

torch::Tensor gelu_sigmoid_approx(torch::Tensor x) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "expected float32");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const float* in = xc.data_ptr<float>();
    float* o = out.data_ptr<float>();
    const int64_t n = xc.numel();
    for (int64_t i = 0; i < n; ++i) {
        const float v = in[i];
        o[i] = v / (1.0f + std::exp(-1.702f * v));
    }
    return out;
}
"""

_ext = load_inline(
    name="kj_ex_l1_p2_s1_cpu",
    cpp_sources=cpp_source,
    functions=["gelu_sigmoid_approx"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.gelu_sigmoid_approx(x)
