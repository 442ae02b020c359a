// The judge's own clock as a bound on what a timer in another process claims: the time a round took on the
// judge's clock, less what its samples account for, is compared with the same overhead of a round the judge
// timed itself (the reference's), so that a timer that reports less than the calls took is not credited.
#pragma once

#include <cstddef>
#include <string>

namespace kj::timing {

struct round_clock {
  double wall_ms = 0;    // [ms] the round's request on the judge's clock (its own round: around the loop)
  double samples_ms = 0; // [ms] the sum of the samples the timer reported
  double warmup_ms = 0;  // [ms] the sum of the warmup samples it reported
  std::size_t calls = 0; // warmup calls and samples

  round_clock& operator+=(const round_clock& other) { // rounds pooled: their times and calls summed
    wall_ms += other.wall_ms;
    samples_ms += other.samples_ms;
    warmup_ms += other.warmup_ms;
    calls += other.calls;
    return *this;
  }
};

struct clock_check {
  bool credited = true;
  double unaccounted_ms = 0; // [ms] per call: the candidate's overhead beyond the reference's and its copies'
  double allowance_ms = 0;   // [ms] per call: what noise may account for
  double charge_ms = 0;      // [ms] per call: the time beyond the allowance, charged to every timed call
  std::string reason;        // when not credited, or charged
};

// Per call, the candidate round's time outside its samples, less the reference round's and less
// `copies_ms` (kj's own snapshot copies in the candidate's round, spread over its calls), is noise only up to
// twice the candidate's median sample, half the reference's overhead per call, a quarter of the candidate's
// wall clock per call, or 0.05 ms, whichever is largest. What lies beyond is `charge_ms`, which the caller
// adds to every timed call; when it exceeds the candidate's median sample (the timer missed more than it
// reported) the timer lied and the timing is not credited at all. So a timer patched in native code gains at
// most the allowance, and one that hides most of each call loses its speedup; an honest kernel whose round a
// loaded host slowed (an H200 beside eight compiles: 0.76 ms a call against a 0.70 ms allowance, 2026-11-28)
// pays the excess instead of its speedup. Honest kernels on an H100 showed up to 1.7 x their median of such
// time.
clock_check check_against_wall(const round_clock& candidate, const round_clock& reference,
                               double candidate_median_ms, double copies_ms);

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
