// The judge's own clock as a bound on what a timer in another process claims: every timed call is bracketed
// by the judge's clock (a handshake per call), so that a sample below the bracket less the handshake's own
// cost is charged; and kj's input draw, timed in both processes, bounds work moved into it.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

namespace kj::timing {

struct clock_check {
  bool credited = true;
  double unaccounted_ms = 0; // [ms] per call: the candidate's overhead beyond the reference's and its copies'
  double allowance_ms = 0;   // [ms] per call: what noise may account for
  double charge_ms = 0;      // [ms] per call: the time beyond the allowance, charged to every timed call
  std::string reason;        // when not credited, or charged
};

// The handshake's own cost: per call the judge's clock around it less the sample the runner reported, for
// calls the judge made while only kj's code ran in the runner (its start, before the candidate is loaded).
struct handshake_bound {
  bool calibrated = false; // false: no calibration; the fallback allowance holds
  double floor_ms = 0;     // [ms] the fastest overhead
  double median_ms = 0;    // [ms]
  double allowance_ms = 0; // [ms] a call's bracket less its sample beyond this is charged to the call
  // [ms] the most a forged sample can gain per call: the allowance less the fastest overhead
  double max_gain_ms() const { return allowance_ms - floor_ms; }
};

// From the calibration's overheads: allowance = 2 x median + 0.02 ms (the median, not a tail: a host that
// delays a few handshakes while kj starts must not widen every later call's bound); no overheads: 0.2 ms
// (uncalibrated). A call whose handshake the host delays beyond it pays the excess, which a median of many
// calls absorbs.
handshake_bound bound_of_handshake(std::vector<double> overheads_ms);

// One call: the sample credited is never below the judge's bracket less the allowance; what that adds is the
// call's charge. A sample the runner forged smaller gains at most the allowance less the true overhead.
struct call_charge {
  double credited_ms = 0;
  double charge_ms = 0;
};
call_charge charge_call(double sample_ms, double bracket_ms, const handshake_bound& bound);

// All the calls of a timing (raw: the runner's samples; charges: charge_call's): `systematic` when more than
// half of them were charged and their median charge exceeds the allowance and a tenth of the median raw
// sample. A timer that under-reports every call looks so, but so does a host that delays every handshake (a
// 2-core box whose scheduler lets a woken judge wait a 4 ms slice behind an honest candidate's threads,
// 2026-12-03): the two cannot be told apart from here. The charged samples are the bound either way (a
// forged sample gains at most the allowance less the true overhead, charged or not), so the timing is
// credited at its charged samples and marked doubtful, never refused as the candidate's.
struct calls_check {
  bool systematic = false;
  std::size_t charged = 0; // calls with a charge
  double median_charge_ms = 0;
  double total_charge_ms = 0;
  std::string reason; // when systematic
};
calls_check check_calls(const std::vector<double>& raw_ms, const std::vector<double>& charges_ms,
                        const handshake_bound& bound);

// kj's own input draw for a timed call (the same code, synchronized with the device) takes `runner_ms` in the
// candidate's process and `judge_ms` in the judge, each the fastest of all its rounds (what the draw costs; a
// busy host only adds to some calls): code of the candidate's that runs while kj draws (a dispatcher kernel
// for a random op, a patched draw) adds to every call. Beyond 1.2 x the judge's plus 0.05 ms plus
// `judge_spread_ms` (how far the judge's own median draw lies above its fastest: the machine's noise as the
// judge saw it, which the candidate cannot touch) the draw is not credited, and what lies beyond is
// `charge_ms`: the caller adds it to every timed call instead of refusing the timing. A candidate that works
// while kj draws is charged that work (less the allowance); an honest one on a loaded host (eight compiles
// beside an H200 made the runner's fastest draw 1.4-2 x the judge's, 2026-11-28) is charged a few hundredths
// of a millisecond instead of losing its speedup.
clock_check check_draws(double runner_ms, double judge_ms, double judge_spread_ms = 0);

} // namespace kj::timing
