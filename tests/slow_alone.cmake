# Read by ctest after the discovered tests (tests/CMakeLists.txt adds it to TEST_INCLUDE_FILES). The slow tests
# that check timings, or whose attack races another job within a window of time, take both of CI's two cores
# (PROCESSORS 2): `ctest -L slow -j 2` (scripts/test) runs each of them alone and the others two at a time. A test
# that only compiles on both cores shares them: alone, one core would idle while it judges (CPU judging is serial).
# The baselines' comparison shares too: its speedups are checked against a host that may have moved (host_moved).
# A name here that no longer matches a test makes ctest report an error: rename both together.
set(_kj_alone
    "acceptance:kj run on the built-in suite gives every CPU example its expected verdict"
    "acceptance:kj run over hostile and honest candidates gives every expected verdict and keeps the judge whole"
    "acceptance:kj run over the outside hack corpus records what each public source's hack must get"
    "acceptance:same-named extensions with different code, built in parallel, are each judged on their own code"
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
