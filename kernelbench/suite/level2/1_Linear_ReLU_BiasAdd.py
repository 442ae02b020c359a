import torch
import torch.nn as nn


class Model(nn.Module):
    """Linear layer, then ReLU, then a learned per-feature bias added after the activation."""

    def __init__(self, in_features: int, out_features: int):
        super().__init__()
        self.linear = nn.Linear(in_features, out_features)
        self.post_bias = nn.Parameter(torch.randn(out_features) * 0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.linear(x)
        y = torch.relu(y)
        return y + self.post_bias


batch_size = 4096
in_features = 4096
out_features = 4096


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, out_features]
