// The parts of a merged run (`kj merge`, kj-ray): which shard counts they name and which shards are missing.
#pragma once

#include "db/store.hpp"

#include <map>
#include <set>
#include <string>
#include <vector>

namespace kj::cli {

// The shard counts the parts of one run name, each with the shard numbers present.
std::map<int, std::set<int>> shards_of(const std::vector<db::run_part_record>& parts);

// "2/3", "3/3": the shards of each named count that no part holds.
std::vector<std::string> missing_shards(const std::vector<db::run_part_record>& parts);

} // namespace kj::cli
