// The results table's telling line is the cause (issue 46: it was the `--- its output ---` separator on
// crashes, compile errors and kills), and the strict column is cut at a whole item.
#include "reports/telling_line.hpp"
#include "tests/support/catch_compat.hpp"

using kj::reports::cut_list;
using kj::reports::telling_line;

TEST_CASE("the telling line of an error is its cause, never kj's separator") {
  // A runner killed by a signal, with its output after the separator.
  CHECK(telling_line("the candidate's process was killed by signal 11 (Segmentation fault) during 'forward'\n"
                     "--- its output ---\nstarting\nloaded 3 kernels\n") ==
        "the candidate's process was killed by signal 11 (Segmentation fault) during 'forward'");
  // Nothing printed after the separator: still the cause.
  CHECK(telling_line("the candidate's process did not finish 'forward' within its time limit\n"
                     "--- its output ---\n") ==
        "the candidate's process did not finish 'forward' within its time limit");
  // A compile error: g++'s or nvcc's error line, wherever it is.
  CHECK(telling_line("the candidate's build ended compile_error:\n[1/3] c++ -c main.cpp\nFAILED: main.o\n"
                     "main.cpp:12:5: error: 'foo' was not declared in this scope\n   12 |     foo();\n"
                     "ninja: build stopped\nTraceback (most recent call last):\n  File \"x.py\"\n"
                     "RuntimeError: Error building extension 'k'\n") ==
        "main.cpp:12:5: error: 'foo' was not declared in this scope");
  CHECK(telling_line("build failed\nkernel.cu(7): error: identifier \"blockDimx\" is undefined\n") ==
        "kernel.cu(7): error: identifier \"blockDimx\" is undefined");
  // The build folder's path never fills the note: the file name, its line and the error (a reviewer's table
  // showed "/tmp/review/cache/builds/77/77e5115f91e78393cdcdbab46090a..." and nothing of the error).
  CHECK(telling_line(
            "FAILED: main.o\n/tmp/r/cache/builds/77/77e5115f91e78393cdcdbab46090a55ae8525c3ac103a3e2c50/ext/"
            "gelu_ext/main.cpp:14:61: error: expected ';' before '}' token\n",
            60) == "main.cpp:14:61: error: expected ';' before '}' token");
  CHECK(telling_line("/x/y/kernel.cu(7): error: identifier \"blockDimx\" is undefined\n") ==
        "kernel.cu(7): error: identifier \"blockDimx\" is undefined");
  // A Python traceback: its last line.
  CHECK(telling_line("Traceback (most recent call last):\n  File \"k.py\", line 3, in forward\n"
                     "RuntimeError: CUDA error: an illegal memory access was encountered\n") ==
        "RuntimeError: CUDA error: an illegal memory access was encountered");
  // The worker's own end, its output after the separator.
  CHECK(telling_line("worker killed by signal 9 (Killed) during timing without reporting a verdict\n"
                     "--- end of worker output ---\nsome line\n") ==
        "worker killed by signal 9 (Killed) during timing without reporting a verdict");
  // Only output: the telling line comes from it.
  CHECK(telling_line(
            "\n--- its output ---\nTraceback (most recent call last):\n  File \"a\"\nValueError: bad\n") ==
        "ValueError: bad");
  // kj's header for a candidate's exception: the exception, not the header.
  CHECK(telling_line("ModelNew.forward raised:\nTraceback (most recent call last):\n  File \"k.py\", line 9\n"
                     "ValueError: boom from candidate\n") == "ValueError: boom from candidate");
  CHECK(telling_line("ModelNew.forward raised:\nRuntimeError: deep failure in inner()") ==
        "RuntimeError: deep failure in inner()");
  CHECK(telling_line("a one-line message") == "a one-line message");
  CHECK(telling_line("") == "");
  CHECK(telling_line("a long message that is cut", 10) == "a long ...");
}

TEST_CASE("a comma list is cut at a whole item, the rest counted") {
  CHECK(cut_list("fail: random,distribution,adversarial,scale", 26) == "fail: random +3");
  CHECK(cut_list("fail: random,distribution,adversarial,scale", 32) == "fail: random,distribution +2");
  CHECK(cut_list("fail: random,distribution", 26) == "fail: random,distribution");
  CHECK(cut_list("fail: random,distribution,scale", 12) == "fail: +3");
  CHECK(cut_list("pass", 3) == "pas");
  CHECK(cut_list("fail: a,b", 0) == "fail: a,b");
}
