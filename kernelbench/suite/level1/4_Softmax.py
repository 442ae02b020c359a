import torch
import torch.nn as nn


class Model(nn.Module):
    """Row-wise softmax of a (batch_size, dim) matrix."""

    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.softmax(x, dim=1)


batch_size = 4096
dim = 32768


def get_inputs():
    # Logit-like inputs (std 3) so the softmax has a spread of probabilities,
    # not just values far below an absolute tolerance of 1e-4.
    x = torch.randn(batch_size, dim) * 3.0
    return [x]


def get_init_inputs():
    return []
