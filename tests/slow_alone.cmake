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
    "acceptance:no work escapes the timed window: deferred and pick-reading candidates get no credited speedup")
foreach(_kj_test IN LISTS _kj_alone)
  set_tests_properties("${_kj_test}" PROPERTIES PROCESSORS 2)
endforeach()
