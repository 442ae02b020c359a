// What generation cost: tokens in four buckets, dollars, and dollars per solved problem, per model of a run.
#pragma once

#include "adapters/llm/prices.hpp"
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

// Rows of the price table checked more than `max_age_days` ago ("" today = the system's date): listed for
// people, a row that prices one of `rows`' models marked; nothing when none is that old.
void write_price_age(const llm::price_table& prices, const std::vector<db::llm_cost_row>& rows,
                     std::ostream& out, int max_age_days = 90, const std::string& today = "");
// The same as JSON: {"file", "date", "max_age_days", "stale": [{"match", "provider", "checked", "age_days",
// "source", "used_by_run"}]}.
nlohmann::json price_age_json(const llm::price_table& prices, const std::vector<db::llm_cost_row>& rows,
                              int max_age_days = 90, const std::string& today = "");

} // namespace kj::adapters
