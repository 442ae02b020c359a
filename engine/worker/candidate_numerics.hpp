// What the judge makes of the floating dtypes a candidate's forward made (the runner's `findings` reply:
// dtype -> op -> count) and the numerics flags it changed, against the run's precision.
#pragma once

#include "core/precision.hpp"

#include <nlohmann/json.hpp>
#include <optional>
#include <string>

namespace kj::worker {

// What ModelNew.forward computed in a floating type narrower than the run's precision (CUDA-Agent issue #16:
// a candidate in a lower precision against a full-precision baseline gets the difference as speedup), e.g.
// "ModelNew.forward made bfloat16 tensors (_to_copy x2, mm x1) in an fp32 run"; '' when none.
std::string lower_precision(const nlohmann::json& dtypes, precision run);

// The numerics the candidate computed at when narrower than the run's, as the judge saw them: the narrowest
// floating type its forward made (bf16 before fp16), else tf32 when it turned TF32 (or a float32 matmul
// precision of "high") on in an fp32 run; none when it computed at the run's own. Recorded in its timing
// (`numerics`), where the reports compare it with an eager baseline at the same numerics.
std::optional<precision> candidate_numerics(const nlohmann::json& dtypes, const nlohmann::json& flags,
                                            precision run);

} // namespace kj::worker
