# kj-expect: incorrect
# Linear in torch, then a fused scale+softmax C++ loop that normalizes over the wrong axis (down each column, dim 0).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <cmath>
#include <vector>

torch::Tensor scaled_softmax(torch::Tensor x, double scale) {
    TORCH_CHECK(x.dim() == 2 && x.scalar_type() == torch::kFloat32, "expected a 2-D float32 tensor");
    auto xc = x.contiguous();
    const int64_t rows = xc.size(0), cols = xc.size(1);
    auto out = torch::empty_like(xc);
    const float* in = xc.data_ptr<float>();
    float* o = out.data_ptr<float>();
    const float s = static_cast<float>(scale);
    // BUG: the reduction runs over rows (dim 0) instead of over the classes of each row (dim 1).
    std::vector<float> colmax(cols, -INFINITY);
    std::vector<double> colsum(cols, 0.0);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) colmax[c] = std::max(colmax[c], in[r * cols + c] * s);
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) {
            const float e = std::exp(in[r * cols + c] * s - colmax[c]);
            o[r * cols + c] = e;
            colsum[c] += e;
        }
    for (int64_t r = 0; r < rows; ++r)
        for (int64_t c = 0; c < cols; ++c) o[r * cols + c] = static_cast<float>(o[r * cols + c] / colsum[c]);
    return out;
}
"""

_ext = load_inline(
    name="kj_ex_l2_p3_s1_cpu",
    cpp_sources=cpp_source,
    functions=["scaled_softmax"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, num_classes: int, logit_scale: float):
        super().__init__()
        self.proj = nn.Linear(in_features, num_classes)
        self.logit_scale = logit_scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.scaled_softmax(self.proj(x), self.logit_scale)
