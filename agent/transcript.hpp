// Text views of the agent's records for people: one line per finished trajectory, the table of a run's
// trajectories, a trajectory's whole transcript, and one evaluation (`kj show`).
#pragma once

#include "db/store.hpp"

#include <ostream>
#include <string>
#include <vector>

namespace kj::agent {

// "L1 2_GELU.py attempt 0: submitted after 9 turns, 12345 tokens, $0.0214; selected 3f2a9c1e: 1.52x in the
// loop, 1.41x re-measured vs eager (selection inflated it 1.08x)".
std::string trajectory_line(const db::trajectory_record& t, const std::string& problem_label);

// One row per trajectory: problem, attempt, status, turns, tokens, cost, speedups, the result's verdicts.
void write_trajectory_table(const std::vector<db::trajectory_record>& trajectories, const db::store& store,
                            std::ostream& out);

struct transcript_options {
  bool full = false;             // the prompts and every tool result whole
  std::size_t result_lines = 24; // otherwise: the first lines of each tool result
};

// A trajectory as it happened: header (status, budget use, selection, re-measurement), then every turn: kj's
// notes, context management, the assistant's text and thinking, each tool call with its arguments and result.
void write_transcript(const db::trajectory_transcript& t, const db::store& store, std::ostream& out,
                      const transcript_options& options = {});

// One evaluation: problem, candidate, verdicts, cases, timings, findings, and the trajectory turn that made
// it.
void write_evaluation(std::int64_t evaluation_id, const db::evaluation_record& e, const db::store& store,
                      std::ostream& out, bool with_source = false);

} // namespace kj::agent
