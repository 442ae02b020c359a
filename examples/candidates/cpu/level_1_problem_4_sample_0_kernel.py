# kj-expect: correct
# Row-wise softmax in C++: max pass, exp-and-sum pass, normalize pass (max subtracted for stability).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <cmath>

torch::Tensor softmax_rows(torch::Tensor x) {
    TORCH_CHECK(x.dim() == 2 && x.scalar_type() == torch::kFloat32, "expected a 2-D float32 tensor");
    auto xc = x.contiguous();
    const int64_t rows = xc.size(0), cols = xc.size(1);
    auto out = torch::empty_like(xc);
    const float* in = xc.data_ptr<float>();
    float* o = out.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = in + r * cols;
        float* orow = o + r * cols;
        float m = -INFINITY;
        for (int64_t c = 0; c < cols; ++c) m = std::max(m, xr[c]);
        double s = 0.0;
        for (int64_t c = 0; c < cols; ++c) {
            const float e = std::exp(xr[c] - m);
            orow[c] = e;
            s += e;
        }
        const float inv = static_cast<float>(1.0 / s);
        for (int64_t c = 0; c < cols; ++c) orow[c] *= inv;
    }
    return out;
}
"""

_ext = load_inline(
    name="kj_ex_l1_p4_s0_cpu",
    cpp_sources=cpp_source,
    functions=["softmax_rows"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.softmax_rows(x)
