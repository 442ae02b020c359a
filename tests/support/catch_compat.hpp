// Our shim (not Catch2 itself): includes Catch2 through one header so tests build against v2 (Debian) and v3
// (Ubuntu).
#pragma once

#if defined(KJ_CATCH2_V3)
#include <catch2/catch_approx.hpp>
#include <catch2/catch_test_macros.hpp>
#include <catch2/matchers/catch_matchers_string.hpp>
using Catch::Approx;
#else
#include <catch2/catch.hpp>
#endif
