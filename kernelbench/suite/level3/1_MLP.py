import torch
import torch.nn as nn


class Model(nn.Module):
    """Three-layer perceptron: Linear-ReLU-Linear-ReLU-Linear."""

    def __init__(self, input_size: int, hidden1: int, hidden2: int, output_size: int):
        super().__init__()
        self.fc1 = nn.Linear(input_size, hidden1)
        self.fc2 = nn.Linear(hidden1, hidden2)
        self.fc3 = nn.Linear(hidden2, output_size)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        h = torch.relu(self.fc1(x))
        h = torch.relu(self.fc2(h))
        return self.fc3(h)


batch_size = 2048
input_size = 4096
hidden1 = 4096
hidden2 = 4096
output_size = 1024


def get_inputs():
    return [torch.rand(batch_size, input_size)]


def get_init_inputs():
    return [input_size, hidden1, hidden2, output_size]
