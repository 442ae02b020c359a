# kj-expect: incorrect
# Linear in torch, then a fused C++ loop that adds the post-bias BEFORE the ReLU (relu(y+b) instead of relu(y)+b).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
torch::Tensor bias_relu(torch::Tensor y, torch::Tensor bias) {
    TORCH_CHECK(y.dim() == 2 && y.scalar_type() == torch::kFloat32, "expected a 2-D float32 tensor");
    auto yc = y.contiguous();
    auto bc = bias.contiguous();
    const int64_t rows = yc.size(0), cols = yc.size(1);
    TORCH_CHECK(bc.numel() == cols, "bias size mismatch");
    auto out = torch::empty_like(yc);
    const float* py = yc.data_ptr<float>();
    const float* pb = bc.data_ptr<float>();
    float* o = out.data_ptr<float>();
    for (int64_t r = 0; r < rows; ++r) {
        for (int64_t c = 0; c < cols; ++c) {
            const float v = py[r * cols + c] + pb[c];  // BUG: bias belongs after the activation
            o[r * cols + c] = v > 0.0f ? v : 0.0f;
        }
    }
    return out;
}
"""

_ext = load_inline(
    name="kj_ex_l2_p1_s1_cpu",
    cpp_sources=cpp_source,
    functions=["bias_relu"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.post_bias = nn.Parameter(torch.randn(out_features) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.bias_relu(self.linear(x), self.post_bias)
