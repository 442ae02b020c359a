import torch
import torch.nn as nn


class Model(nn.Module):
    """Classifier head: linear projection, logits multiplied by a constant, softmax over the classes."""

    def __init__(self, in_features: int, num_classes: int, logit_scale: float):
        super().__init__()
        self.proj = nn.Linear(in_features, num_classes)
        self.logit_scale = logit_scale

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        logits = self.proj(x) * self.logit_scale
        return torch.softmax(logits, dim=1)


batch_size = 8192
in_features = 4096
num_classes = 1024
logit_scale = 4.0


def get_inputs():
    return [torch.rand(batch_size, in_features)]


def get_init_inputs():
    return [in_features, num_classes, logit_scale]
