// `kj export`: a run's evaluations in other tools' formats: KernelBench's eval_results.json (its analysis
// scripts read it) and JUnit XML (CI dashboards).
#pragma once

#include "reports/metrics.hpp"

#include <ostream>
#include <string>
#include <vector>

namespace kj::reports {

// KernelBench's eval_results.json (scripts/eval_from_generations.py): {"<problem id>": [{"sample_id",
// "compiled", "correctness", "metadata", "runtime", "runtime_stats"}, ...]}, problems in numeric order, one
// level and one producer (KernelBench's file holds one run of one level). runtime and runtime_stats are the
// candidate's timing in ms as KernelBench reports it (the mean; -1.0 and {} when not timed); metadata keeps
// KernelBench's error keys and adds kj's verdicts under "kj_*". Throws std::invalid_argument when the rows
// hold several levels or producers, or two rows of one problem and sample.
void write_kernelbench(const std::vector<result_row>& rows, std::ostream& out);

// JUnit XML: one <testsuite> per run, one <testcase> per evaluation (classname "L<level>.<problem file>",
// name "<producer> sample <s>", time its duration), <failure> for a candidate's failing verdict (compatible
// not correct, or strict fail), <error> for a harness or problem error, <skipped> for needs_weights; the
// timings as <properties>.
void write_junit(const std::vector<result_row>& rows, const std::string& run_uid, std::ostream& out);

// XML-escaped text (&, <, >, ", ') with characters XML 1.0 forbids (most controls) dropped.
std::string xml_escape(const std::string& text);

} // namespace kj::reports
