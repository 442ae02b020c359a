# kj-expect: correct
# MLP: the three matrix products stay in torch (x @ W^T); bias add (+ReLU on the hidden layers) is a C++ loop.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
torch::Tensor bias_act(torch::Tensor y, torch::Tensor bias, bool relu) {
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
            float v = py[r * cols + c] + pb[c];
            if (relu && v < 0.0f) v = 0.0f;
            o[r * cols + c] = v;
        }
    }
    return out;
}
"""

_ext = load_inline(
    name="kj_ex_l3_p1_s0_cpu",
    cpp_sources=cpp_source,
    functions=["bias_act"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, input_size: int, hidden1: int, hidden2: int, output_size: int):
        super().__init__()
        self.fc1 = nn.Linear(input_size, hidden1)
        self.fc2 = nn.Linear(hidden1, hidden2)
        self.fc3 = nn.Linear(hidden2, output_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = _ext.bias_act(torch.mm(x, self.fc1.weight.t()), self.fc1.bias, True)
        h = _ext.bias_act(torch.mm(h, self.fc2.weight.t()), self.fc2.bias, True)
        return _ext.bias_act(torch.mm(h, self.fc3.weight.t()), self.fc3.bias, False)
