// kj merge's copy plan (db/merge.cpp): for each table, how its rows are matched and which of its columns are
// ids of other tables, rewritten through their id maps. Internal to db/.
#pragma once

#include "db/sqlite.hpp"

#include <vector>

namespace kj::db::merge_detail {

// A column that holds an id of another table: it is rewritten through that table's id map.
struct reference {
  const char* column;
  const char* table;
};

// How one table is copied. `match` is the natural key as a condition between an output row `d` and a mapped
// source row `x` (nullptr: every selected row is new, for rows that only exist under a new parent); `filter`
// selects source rows `s` (children are copied only with their new parents).
struct table_copy {
  const char* table;
  std::vector<reference> references;
  const char* match;
  const char* filter = "1";
  bool has_id = true; // an `id INTEGER PRIMARY KEY`, mapped in temp.map_<table>
};

// Every table merge copies, parents before children.
const std::vector<table_copy>& copy_plan();
// Throws db_error when a foreign key of the schema is not a column the plan maps (a migration added one).
void check_plan(const sqlite::connection& db);

} // namespace kj::db::merge_detail
