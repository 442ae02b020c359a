import torch
import torch.nn as nn


class Model(nn.Module):
    """Post-norm residual sublayer: LayerNorm(x + Linear(x))."""

    def __init__(self, dim: int):
        super().__init__()
        self.fc = nn.Linear(dim, dim)
        self.norm = nn.LayerNorm(dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.norm(x + self.fc(x))


batch_size = 4096
dim = 4096


def get_inputs():
    return [torch.randn(batch_size, dim)]


def get_init_inputs():
    return [dim]
