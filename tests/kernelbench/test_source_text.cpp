// Source bytes as text: UTF-8 checks, replacement, and PEP 263 decoding of candidate files that are not
// UTF-8.
#include "kernelbench/id_set.hpp"
#include "kernelbench/problems.hpp"
#include "kernelbench/source_text.hpp"
#include "tests/support/catch_compat.hpp"
#include "tests/support/paths.hpp"

#include <string>

using namespace kj::kb;

TEST_CASE("is_utf8 accepts well-formed UTF-8 only") {
  CHECK(is_utf8("plain ascii\n"));
  CHECK(is_utf8("caf\xC3\xA9 \xE2\x82\xAC \xF0\x9F\x98\x80"));
  for (const std::string& bad :
       {std::string("caf\xE9"), std::string("\xC0\xAF"), std::string("\xED\xA0\x80"),
        std::string("\xF4\x90\x80\x80"), std::string("\xE2\x82"), std::string("\xFF")}) {
    INFO(bad.size());
    CHECK_FALSE(is_utf8(bad));
  }
}

TEST_CASE("utf8_replaced puts U+FFFD in place of each invalid byte and keeps the rest") {
  CHECK(utf8_replaced("ok") == "ok");
  CHECK(utf8_replaced("a\xE9z") == "a\xEF\xBF\xBDz");
  CHECK(utf8_replaced(std::string("\x00\xFF", 2)) == std::string("\x00\xEF\xBF\xBD", 4));
  CHECK(is_utf8(utf8_replaced("\xFE\xFF\xC3")));
}

TEST_CASE("python_source_text reads a file as Python would, and judges what Python would refuse") {
  SECTION("UTF-8 is kept exactly") {
    const auto t = python_source_text("x = 'caf\xC3\xA9'\n");
    CHECK(t.exact);
    CHECK(t.text == "x = 'caf\xC3\xA9'\n");
    CHECK(t.note.empty());
  }
  SECTION("a latin-1 coding declaration decodes the file") {
    const auto t = python_source_text("# -*- coding: latin-1 -*-\nx = 'caf\xE9'\n");
    CHECK_FALSE(t.exact);
    CHECK(t.text == "# -*- coding: latin-1 -*-\nx = 'caf\xC3\xA9'\n");
    CHECK(t.line == 2);
    CHECK(t.note.find("byte 0xE9 at line 2, column 9") != std::string::npos);
    CHECK(t.note.find("decoded as latin-1") != std::string::npos);
  }
  SECTION("cp1252 maps its own 0x80-0x9F") {
    const auto t = python_source_text("#!/usr/bin/python\n# coding=windows-1252\ns = '\x80'\n");
    CHECK(t.text.find("'\xE2\x82\xAC'") != std::string::npos);
  }
  SECTION("without a declaration, invalid bytes become U+FFFD and the note says how many") {
    const auto t = python_source_text("import torch\n# caf\xE9 \xFF\n");
    CHECK_FALSE(t.exact);
    CHECK(is_utf8(t.text));
    CHECK(t.text == "import torch\n# caf\xEF\xBF\xBD \xEF\xBF\xBD\n");
    CHECK(t.line == 2);
    CHECK(t.note.find("2 bytes read as U+FFFD") != std::string::npos);
  }
  SECTION("a utf-8 declaration over bytes that are not says so, not that kj cannot decode utf-8") {
    for (const char* cookie : {"# -*- coding: utf-8 -*-\n", "# coding: UTF8\n"}) {
      const auto t = python_source_text(std::string(cookie) + "# caf\xE9\n");
      CHECK(t.note.find("it declares utf-8, which these bytes are not") != std::string::npos);
      CHECK(t.note.find("not one kj decodes") == std::string::npos);
    }
  }
  SECTION("a binary file gives valid text") {
    const std::string binary("\x7F"
                             "ELF\x02\x01\x01\x00\xFF\xFE\x00",
                             12);
    const auto t = python_source_text(binary);
    CHECK(is_utf8(t.text));
    CHECK(t.line == 1);
  }
}

TEST_CASE("an id selection prints as it is written") {
  CHECK(id_set::parse("1-3,19,7-7").text() == "1-3,19,7");
  CHECK(id_set{}.text().empty());
}

TEST_CASE("a problem file that is not UTF-8 loads as valid text") {
  kj::test::scratch_dir dir;
  kj::test::write_file(dir / "level1" / "7_Latin.py", "# caf\xE9\nclass Model: pass\n");
  source_options options;
  options.files.push_back(dir / "level1" / "7_Latin.py");
  const auto problems = load_problems(options);
  REQUIRE(problems.size() == 1);
  CHECK(problems[0].source == "# caf\xEF\xBF\xBD\nclass Model: pass\n");
}
