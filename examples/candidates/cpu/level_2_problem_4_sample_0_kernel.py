# kj-expect: correct
# Linear in torch; residual add and LayerNorm (with the module's weight/bias) fused in one C++ pass per row.
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
        float* orow = o + r * cols;
        double s = 0.0;
        for (int64_t c = 0; c < cols; ++c) {
            const float z = px[r * cols + c] + py[r * cols + c];
            orow[c] = z;
            s += z;
        }
        const double mean = s / cols;
        double sq = 0.0;
        for (int64_t c = 0; c < cols; ++c) {
            const double d = orow[c] - mean;
            sq += d * d;
        }
        const float rstd = static_cast<float>(1.0 / std::sqrt(sq / cols + eps));
        const float meanf = static_cast<float>(mean);
        for (int64_t c = 0; c < cols; ++c) orow[c] = (orow[c] - meanf) * rstd * pw[c] + pb[c];
    }
    return out;
}
"""

_ext = load_inline(
    name="kj_ex_l2_p4_s0_cpu",
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
