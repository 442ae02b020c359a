# Another model's sum reduction: sums over the last dimension instead of the one the problem names (wrong).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.sum(x, dim=-1, keepdim=True).transpose(-1, self.dim)
