# Read by ctest after the discovered tests (tests/CMakeLists.txt adds it to TEST_INCLUDE_FILES). The slow tests
# that compile on every core, or that check timings, take both of CI's two cores (PROCESSORS 2): `ctest -L slow
# -j 2` (scripts/test) runs each of them alone and the others two at a time. A name here that no longer matches a
# test makes ctest report an error: rename both together.
set(_kj_alone
    "acceptance:kj baselines measures level 1 of the built-in suite once, then answers from the cache"
    "acceptance:kj run compares with the cached baselines whose key matches, and measures missing ones on request"
    "acceptance:kj run on the built-in suite gives every CPU example its expected verdict"
    "acceptance:kj run over hostile and honest candidates gives every expected verdict and keeps the judge whole"
    "acceptance:same-named extensions with different code, built in parallel, are each judged on their own code"
    "acceptance:every output of a tuple is compared, dtypes must match, and a torch fallback is reported"
    "acceptance:a killed and resumed run, and a sharded and merged one, judge what an uninterrupted run does"
    "acceptance:fresh inputs per timed call defeat an input-keyed cache, and timed outputs are checked"
    "acceptance:no work escapes the timed window: deferred and pick-reading candidates get no credited speedup"
    "acceptance:class 1: a candidate can lower no limit, priority or CPU of kj's processes or another job's"
    "acceptance:class 2: a daemon a build step starts dies with its job and slows no later candidate"
    "acceptance:class 3: parallel builds cannot reach each other, and a damaged cached build is built again"
    "acceptance:class 4: samples a proxy on the runner's socket rewrites are charged back by the judge's clock"
    "acceptance:class 5: a candidate cannot know a timed call's inputs before the judge prepares that call"
    "acceptance:class 6: timed calls look like checked ones, and their outputs meet the strict tolerance"
    "acceptance:class 7: a candidate cannot reach the runner its warm judge started ahead for the next candidate")
foreach(_kj_test IN LISTS _kj_alone)
  set_tests_properties("${_kj_test}" PROPERTIES PROCESSORS 2)
endforeach()

# The order the slow tests start in (ctest runs the costliest first; CTestCostData.txt, once a run made it,
# outranks these): the precompiled-header test first, since it makes kj's precompiled torch/extension.h
# (KJ_PCH_DIR, shared by every test) that later CPU builds read (a build without it takes about twice as long),
# then the longest, so that no long test is left for the end on one core. Seconds measured on a fresh clone of
# 2026-12-06 (two cores, -j 2); a stale number only changes the order.
set(_kj_costs
    "100000|acceptance:a CPU run's builds are offered kj's precompiled torch/extension.h, which none can write"
    "271|acceptance:kj run on the built-in suite gives every CPU example its expected verdict"
    "214|acceptance:kj run over hostile and honest candidates gives every expected verdict and keeps the judge whole"
    "149|acceptance:a 256 MiB-input problem under a 1.5 GiB limit: honest correct, greedy out of memory, kj's own OOM is harness_error"
    "140|acceptance:the strict corpus: bad candidates fail the classes they target, honest ones pass everything"
    "118|acceptance:outputs larger than the first arena keep their request's answers: timed outputs, changed inputs"
    "107|acceptance:kj run records the expected verdict for every failure mode of a candidate"
    "106|acceptance:kj baselines measures level 1 of the built-in suite once, then answers from the cache"
    "104|acceptance:kj run compares with the cached baselines whose key matches, and measures missing ones on request"
    "96|acceptance:kj run over the outside hack corpus records what each public source's hack must get"
    "95|acceptance:class 3: parallel builds cannot reach each other, and a damaged cached build is built again"
    "69|acceptance:every output of a tuple is compared, dtypes must match, and a torch fallback is reported"
    "66|acceptance:kj's draw of each timed call's inputs in the candidate's process is kj's time, not the candidate's"
    "64|acceptance:a new user's first hour: runs, two models, mistakes, Ctrl-C, report, compare, export"
    "62|acceptance:kj's own slow work is never a candidate's timeout, and the candidate's own time still is"
    "60|acceptance:no work escapes the timed window: deferred and pick-reading candidates get no credited speedup"
    "52|acceptance:same-named extensions with different code, built in parallel, are each judged on their own code"
    "51|acceptance:baseline failures are recorded with their reasons"
    "47|acceptance:the README's quick start works as written: two model folders, a report, a comparison"
    "46|acceptance:fresh inputs per timed call defeat an input-keyed cache, and timed outputs are checked")
foreach(_kj_cost IN LISTS _kj_costs)
  string(FIND "${_kj_cost}" "|" _kj_bar)
  string(SUBSTRING "${_kj_cost}" 0 ${_kj_bar} _kj_seconds)
  math(EXPR _kj_from "${_kj_bar} + 1")
  string(SUBSTRING "${_kj_cost}" ${_kj_from} -1 _kj_test)
  set_tests_properties("${_kj_test}" PROPERTIES COST ${_kj_seconds})
endforeach()
