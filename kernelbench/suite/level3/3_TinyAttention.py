import math

import torch
import torch.nn as nn


class Model(nn.Module):
    """Pre-norm multi-head self-attention block (no mask): x + Proj(Attn(LayerNorm(x)))."""

    def __init__(self, embed_dim: int, num_heads: int):
        super().__init__()
        assert embed_dim % num_heads == 0
        self.num_heads = num_heads
        self.head_dim = embed_dim // num_heads
        self.norm = nn.LayerNorm(embed_dim)
        self.qkv = nn.Linear(embed_dim, 3 * embed_dim)
        self.proj = nn.Linear(embed_dim, embed_dim)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        h = self.norm(x)
        q, k, v = self.qkv(h).split(c, dim=2)
        q = q.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        k = k.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        v = v.view(b, t, self.num_heads, self.head_dim).transpose(1, 2)
        scores = torch.matmul(q, k.transpose(-2, -1)) / math.sqrt(self.head_dim)
        attn = torch.softmax(scores, dim=-1)
        y = torch.matmul(attn, v)
        y = y.transpose(1, 2).contiguous().view(b, t, c)
        return x + self.proj(y)


batch_size = 8
seq_len = 1024
embed_dim = 1024
num_heads = 16


def get_inputs():
    return [torch.rand(batch_size, seq_len, embed_dim)]


def get_init_inputs():
    return [embed_dim, num_heads]
