# kj-expect: correct
# Matmul as a classic 16x16 shared-memory tiled CUDA kernel (one thread per output element, fp32 accumulation).
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cuda_source = r"""
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>

#define TILE 16

__global__ void matmul_tiled_kernel(const float* __restrict__ A, const float* __restrict__ B,
                                    float* __restrict__ C, int M, int K, int N) {
    __shared__ float As[TILE][TILE];
    __shared__ float Bs[TILE][TILE];
    const int row = blockIdx.y * TILE + threadIdx.y;
    const int col = blockIdx.x * TILE + threadIdx.x;
    float acc = 0.0f;
    for (int t = 0; t < K; t += TILE) {
        const int ak = t + threadIdx.x;
        const int bk = t + threadIdx.y;
        As[threadIdx.y][threadIdx.x] = (row < M && ak < K) ? A[(size_t)row * K + ak] : 0.0f;
        Bs[threadIdx.y][threadIdx.x] = (bk < K && col < N) ? B[(size_t)bk * N + col] : 0.0f;
        __syncthreads();
#pragma unroll
        for (int k = 0; k < TILE; ++k) acc += As[threadIdx.y][k] * Bs[k][threadIdx.x];
        __syncthreads();
    }
    if (row < M && col < N) C[(size_t)row * N + col] = acc;
}

torch::Tensor matmul_tiled(torch::Tensor A, torch::Tensor B) {
    TORCH_CHECK(A.is_cuda() && B.is_cuda(), "expected CUDA tensors");
    TORCH_CHECK(A.dim() == 2 && B.dim() == 2 && A.size(1) == B.size(0), "bad shapes");
    TORCH_CHECK(A.scalar_type() == torch::kFloat32 && B.scalar_type() == torch::kFloat32, "expected float32");
    auto a = A.contiguous();
    auto b = B.contiguous();
    const int M = a.size(0), K = a.size(1), N = b.size(1);
    auto C = torch::empty({M, N}, a.options());
    dim3 block(TILE, TILE);
    dim3 grid((N + TILE - 1) / TILE, (M + TILE - 1) / TILE);
    matmul_tiled_kernel<<<grid, block, 0, at::cuda::getCurrentCUDAStream()>>>(
        a.data_ptr<float>(), b.data_ptr<float>(), C.data_ptr<float>(), M, K, N);
    C10_CUDA_KERNEL_LAUNCH_CHECK();
    return C;
}
"""

cpp_source = "torch::Tensor matmul_tiled(torch::Tensor A, torch::Tensor B);"

_ext = load_inline(
    name="kj_ex_l1_p1_s0_cuda",
    cpp_sources=cpp_source,
    cuda_sources=cuda_source,
    functions=["matmul_tiled"],
    extra_cuda_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self):
        super().__init__()

    def forward(self, A: torch.Tensor, B: torch.Tensor) -> torch.Tensor:
        return _ext.matmul_tiled(A, B)
