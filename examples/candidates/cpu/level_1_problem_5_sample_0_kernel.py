# kj-expect: correct
# LayerNorm over the last dim in C++: two-pass mean/variance per row, then affine with the module's own weight and bias.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <cmath>

torch::Tensor layernorm_rows(torch::Tensor x, torch::Tensor weight, torch::Tensor bias, double eps) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "expected float32");
    auto xc = x.contiguous();
    auto w = weight.contiguous();
    auto b = bias.contiguous();
    const int64_t cols = xc.size(-1);
    const int64_t rows = xc.numel() / cols;
    TORCH_CHECK(w.numel() == cols && b.numel() == cols, "weight/bias size mismatch");
    auto out = torch::empty_like(xc);
    const float* in = xc.data_ptr<float>();
    const float* pw = w.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    float* o = out.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        const float* xr = in + r * cols;
        float* orow = o + r * cols;
        double s = 0.0;
        for (int64_t c = 0; c < cols; ++c) s += xr[c];
        const double mean = s / cols;
        double sq = 0.0;
        for (int64_t c = 0; c < cols; ++c) {
            const double d = xr[c] - mean;
            sq += d * d;
        }
        const double var = sq / cols;  // biased variance, as nn.LayerNorm uses
        const float rstd = static_cast<float>(1.0 / std::sqrt(var + eps));
        const float meanf = static_cast<float>(mean);
        for (int64_t c = 0; c < cols; ++c) orow[c] = (xr[c] - meanf) * rstd * pw[c] + pb[c];
    }
    return out;
}
"""

_ext = load_inline(
    name="kj_ex_l1_p5_s0_cpu",
    cpp_sources=cpp_source,
    functions=["layernorm_rows"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, features: int):
        super().__init__()
        self.ln = nn.LayerNorm(features, eps=1e-5)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.layernorm_rows(x, self.ln.weight, self.ln.bias, self.ln.eps)
