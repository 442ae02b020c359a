import torch
import torch.nn as nn


class Model(nn.Module):
    """Sum of a 3-D tensor over one dimension, keeping that dimension (size 1)."""

    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=self.dim, keepdim=True)


batch_size = 112
dim1 = 2048
dim2 = 1024
reduce_dim = 1


def get_inputs():
    x = torch.rand(batch_size, dim1, dim2)
    return [x]


def get_init_inputs():
    return [reduce_dim]
