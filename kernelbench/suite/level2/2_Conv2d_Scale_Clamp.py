import torch
import torch.nn as nn


class Model(nn.Module):
    """Square convolution (no padding), multiplied by a constant, then clamped to [clamp_min, clamp_max]."""

    def __init__(self, in_channels: int, out_channels: int, kernel_size: int,
                 scale: float, clamp_min: float, clamp_max: float):
        super().__init__()
        self.conv = nn.Conv2d(in_channels, out_channels, kernel_size)
        self.scale = scale
        self.clamp_min = clamp_min
        self.clamp_max = clamp_max

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.conv(x)
        y = y * self.scale
        return torch.clamp(y, min=self.clamp_min, max=self.clamp_max)


batch_size = 32
in_channels = 16
out_channels = 64
height = 256
width = 256
kernel_size = 3
scale = 1.5
clamp_min = -0.5
clamp_max = 0.5


def get_inputs():
    return [torch.rand(batch_size, in_channels, height, width)]


def get_init_inputs():
    return [in_channels, out_channels, kernel_size, scale, clamp_min, clamp_max]
