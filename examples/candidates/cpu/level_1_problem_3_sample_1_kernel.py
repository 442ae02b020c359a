# kj-expect: incorrect
# Sum over one dimension (keepdim) in C++, with an off-by-one loop bound: the last slice along the dim is never added.
import torch
import torch.nn as nn
from torch.utils.cpp_extension import load_inline

cpp_source = r"""
torch::Tensor sum_keepdim(torch::Tensor x, int64_t dim) {
    TORCH_CHECK(x.scalar_type() == torch::kFloat32, "expected float32");
    if (dim < 0) dim += x.dim();
    TORCH_CHECK(dim >= 0 && dim < x.dim(), "dim out of range");
    auto xc = x.contiguous();
    int64_t outer = 1, inner = 1;
    for (int64_t d = 0; d < dim; ++d) outer *= xc.size(d);
    for (int64_t d = dim + 1; d < xc.dim(); ++d) inner *= xc.size(d);
    const int64_t R = xc.size(dim);
    auto out_sizes = xc.sizes().vec();
    out_sizes[dim] = 1;
    auto out = torch::zeros(out_sizes, xc.options());
    const float* in = xc.data_ptr<float>();
    float* o = out.data_ptr<float>();
    for (int64_t a = 0; a < outer; ++a) {
        float* orow = o + a * inner;
        for (int64_t r = 0; r < R - 1; ++r) {  // BUG: should be r < R
            const float* irow = in + (a * R + r) * inner;
            for (int64_t i = 0; i < inner; ++i) orow[i] += irow[i];
        }
    }
    return out;
}
"""

_ext = load_inline(
    name="kj_ex_l1_p3_s1_cpu",
    cpp_sources=cpp_source,
    functions=["sum_keepdim"],
    extra_cflags=["-O3"],
    verbose=False,
)


class ModelNew(nn.Module):
    def __init__(self, dim: int):
        super().__init__()
        self.dim = dim

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _ext.sum_keepdim(x, self.dim)
