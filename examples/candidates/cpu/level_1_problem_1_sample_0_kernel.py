# kj-expect: correct
# Matmul as a hand-written C++ i-k-j triple loop (row of A times rows of B, accumulated into a zeroed C).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
torch::Tensor matmul_ikj(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.dim() == 2 && B.dim() == 2, "expected 2-D inputs");
    TORCH_CHECK(A.size(1) == B.size(0), "inner dimensions differ");
    TORCH_CHECK(A.scalar_type() == torch::kFloat32 && B.scalar_type() == torch::kFloat32, "expected float32");
    auto a = A.contiguous();
    auto b = B.contiguous();
    const int64_t M = a.size(0), K = a.size(1), N = b.size(1);
    auto C = torch::zeros({M, N}, a.options());
    const float* pa = a.data_ptr<float>();
    const float* pb = b.data_ptr<float>();
    float* pc = C.data_ptr<float>();
    for (int64_t i = 0; i < M; ++i) {
        float* crow = pc + i * N;
        for (int64_t k = 0; k < K; ++k) {
            const float aik = pa[i * K + k];
            const float* brow = pb + k * N;
            for (int64_t j = 0; j < N; ++j) {
                crow[j] += aik * brow[j];
            }
        }
    }
    return C;
}
"""

_ext = load_inline(
    name="kj_ex_l1_p1_s0_cpu",
    cpp_sources=cpp_source,
    functions=["matmul_ikj"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return _ext.matmul_ikj(A, B)
