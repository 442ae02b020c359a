# Another model's softmax: exp without subtracting the row maximum. Right on KernelBench's inputs (the
# compatible verdict), it overflows to inf/NaN on large logits: the strict verdict's extreme inputs catch it.
import torch
import torch.nn as nn


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        e = torch.exp(x)
        return e / e.sum(dim=1, keepdim=True)
