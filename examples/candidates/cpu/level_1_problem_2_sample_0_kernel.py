# kj-expect: correct
# Exact GELU, 0.5*x*(1+erf(x/sqrt(2))), as a C++ loop over the flattened input.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <cmath>

torch::Tensor gelu_erf(torch::Tensor x) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "expected float32");
    auto xc = x.contiguous();
    auto out = torch::empty_like(xc);
    const float* in = xc.data_ptr<float>();
    float* o = out.data_ptr<float>();
    const int64_t n = xc.numel();
    const float inv_sqrt2 = 0.70710678118654752f;
    for (int64_t i = 0; i < n; ++i) {
        const float v = in[i];
        o[i] = 0.5f * v * (1.0f + std::erf(v * inv_sqrt2));
    }
    return out;
}
"""

_ext = load_inline(
    name="kj_ex_l1_p2_s0_cpu",
    cpp_sources=cpp_source,
    functions=["gelu_erf"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.gelu_erf(x)
