# kj-expect: incorrect
# Conv2d in torch, then a fused C++ loop that clamps BEFORE scaling (outputs reach scale*bound instead of bound).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
torch::Tensor clamp_scale(torch::Tensor y, double scale, double lo, double hi) {
    TORCH_CHECK(y.scalar_type() == torch::kFloat32, "expected float32");
    auto yc = y.contiguous();
    auto out = torch::empty_like(yc);
    const float* in = yc.data_ptr<float>();
    float* o = out.data_ptr<float>();
    const float s = static_cast<float>(scale), l = static_cast<float>(lo), h = static_cast<float>(hi);
    const int64_t n = yc.numel();
    for (int64_t i = 0; i < n; ++i) {
        float v = in[i];
        v = v < l ? l : v;   // BUG: clamp is applied to the unscaled value
        v = v > h ? h : v;
        o[i] = v * s;
    }
    return out;
}
"""

_ext = load_inline(
    name="kj_ex_l2_p2_s1_cpu",
    cpp_sources=cpp_source,
    functions=["clamp_scale"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int,
                 scale: float, clamp_min: float, clamp_max: float):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.scale = scale
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.clamp_scale(self.conv(x), self.scale, self.clamp_min, self.clamp_max)
