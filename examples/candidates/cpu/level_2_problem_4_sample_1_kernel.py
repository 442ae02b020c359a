# kj-expect: incorrect
# Linear in torch, then a C++ pass that normalizes fc(x) first and adds the residual after (pre-/post-norm mix-up).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <cmath>

torch::Tensor add_layernorm(torch::Tensor x, torch::Tensor y, torch::Tensor weight, torch::Tensor bias, double eps) {
    TORCH_CHECK(x.sizes() == y.sizes() && x.scalar_type() == torch::kFloat32, "expected equal float32 shapes");
    auto xc = x.contiguous();
    auto yc = y.contiguous();
    auto w = weight.contiguous();
    auto b = bias.contiguous();
    const int64_t cols = xc.size(-1);
    const int64_t rows = xc.numel() / cols;
    auto out = torch::empty_like(xc);
    const float* px = xc.data_ptr<float>();
    const float* py = yc.data_ptr<float>();
    const float* pw = w.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    float* o = out.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        const float* yr = py + r * cols;
        float* orow = o + r * cols;
        double s = 0.0;
        for (int64_t c = 0; c < cols; ++c) s += yr[c];
        const double mean = s / cols;
        double sq = 0.0;
        for (int64_t c = 0; c < cols; ++c) {
            const double d = yr[c] - mean;
            sq += d * d;
        }
        const float rstd = static_cast<float>(1.0 / std::sqrt(sq / cols + eps));
        const float meanf = static_cast<float>(mean);
        // BUG: LayerNorm(x + y) expected; this computes x + LayerNorm(y).
        for (int64_t c = 0; c < cols; ++c) orow[c] = px[r * cols + c] + (yr[c] - meanf) * rstd * pw[c] + pb[c];
    }
    return out;
}
"""

_ext = load_inline(
    name="kj_ex_l2_p4_s1_cpu",
    cpp_sources=cpp_source,
    functions=["add_layernorm"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.add_layernorm(x, self.fc(x), self.norm.weight, self.norm.bias, self.norm.eps)
