import torch
import torch.nn as nn


class Model(nn.Module):
    """Small image classifier: conv-ReLU-maxpool, conv-ReLU, global average pool, linear head."""

    def __init__(self, in_channels: int, width1: int, width2: int, num_classes: int):
        super().__init__()
        self.conv1 = nn.Conv2d(in_channels, width1, kernel_size=3, padding=1)
        self.pool = nn.MaxPool2d(kernel_size=2, stride=2)
        self.conv2 = nn.Conv2d(width1, width2, kernel_size=3, padding=1)
        self.head = nn.Linear(width2, num_classes)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.pool(torch.relu(self.conv1(x)))
        x = torch.relu(self.conv2(x))
        x = x.mean(dim=(2, 3))
        return self.head(x)


batch_size = 32
in_channels = 3
image_size = 256
width1 = 64
width2 = 128
num_classes = 1000


def get_inputs():
    return [torch.rand(batch_size, in_channels, image_size, image_size)]


def get_init_inputs():
    return [in_channels, width1, width2, num_classes]
