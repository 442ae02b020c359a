# A model's sum reduction: the same sum, over the same dimension, written with a view (correct).
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return x.sum(dim=self.dim).unsqueeze(self.dim)
