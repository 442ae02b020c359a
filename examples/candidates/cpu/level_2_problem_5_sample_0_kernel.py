# kj-expect: correct
# Conv2d in torch; ReLU and the 2x2/stride-2 max pool fused in one C++ loop over the pooled output.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
#include <cmath>

torch::Tensor relu_maxpool2x2(torch::Tensor y) {
    TORCH_CHECK(y.dim() == 4 && y.scalar_type() == torch::kFloat32, "expected NCHW float32");
    auto yc = y.contiguous();
    const int64_t N = yc.size(0), C = yc.size(1), H = yc.size(2), W = yc.size(3);
    const int64_t OH = H / 2, OW = W / 2;
    auto out = torch::empty({N, C, OH, OW}, yc.options());
    const float* in = yc.data_ptr<float>();
    float* o = out.data_ptr<float>();
    for (int64_t nc = 0; nc < N * C; ++nc) {
        const float* plane = in + nc * H * W;
        float* oplane = o + nc * OH * OW;
        for (int64_t oh = 0; oh < OH; ++oh) {
            for (int64_t ow = 0; ow < OW; ++ow) {
                // max over the window (a NaN wins, as in torch), then ReLU (NaN stays NaN)
                float m = plane[(2 * oh) * W + 2 * ow];
                for (int64_t dh = 0; dh < 2; ++dh)
                    for (int64_t dw = 0; dw < 2; ++dw) {
                        const float v = plane[(2 * oh + dh) * W + (2 * ow + dw)];
                        m = (v > m || std::isnan(v)) ? v : m;
                    }
                oplane[oh * OW + ow] = m < 0.0f ? 0.0f : m;
            }
        }
    }
    return out;
}
"""

_ext = load_inline(
    name="kj_ex_l2_p5_s0_cpu",
    cpp_sources=cpp_source,
    functions=["relu_maxpool2x2"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, in_channels: int, out_channels: int, kernel_size: int):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size, padding=kernel_size // 2)
        self.pool = nn.MaxPool2d(2)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.relu_maxpool2x2(self.conv(x))
