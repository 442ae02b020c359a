// What generation cost: tokens in four buckets, dollars, and dollars per solved problem, per model of a run.
#pragma once

#include "db/store.hpp"

#include <nlohmann/json.hpp>
#include <ostream>
#include <string>
#include <vector>

namespace kj::adapters {

// An aligned table of `rows` (store::llm_costs) for people; nothing when there are none.
void write_cost_table(const std::vector<db::llm_cost_row>& rows, std::ostream& out);

// The same fields as JSON: one object per provider and model, with cost per solved problem (null when
// nothing was solved).
nlohmann::json cost_json(const std::vector<db::llm_cost_row>& rows);

} // namespace kj::adapters
