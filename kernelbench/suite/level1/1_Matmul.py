import torch
import torch.nn as nn


class Model(nn.Module):
    """Plain dense matrix product: C = A @ B with A of shape (M, K) and B of shape (K, N)."""

    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return torch.matmul(A, B)


M = 4096
K = 4096
N = 4096


def get_inputs():
    A = torch.rand(M, K)
    B = torch.rand(K, N)
    return [A, B]


def get_init_inputs():
    return []
