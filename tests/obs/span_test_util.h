#pragma once

// Temporary homes and hand-built spans for the observe.db tests.

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <string>
#include <vector>

#include "mend/obs/trace.h"

namespace mend::obs::testing {

class TempDirTest : public ::testing::Test {
 protected:
  void SetUp() override {
    std::string pattern = (std::filesystem::temp_directory_path() / "mend-obs-XXXXXX").string();
    ASSERT_NE(mkdtemp(pattern.data()), nullptr);
    dir_ = pattern;
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  std::string dir_;
};

inline Time At(int64_t seconds) { return Time{} + std::chrono::seconds(1'700'000'000 + seconds); }

// A span of run `run_id` in trace `trace` (1..: expanded to 32 hex digits), id `id` (16 hex
// digits), from `start` to `end` seconds (At).
inline SpanData MakeSpan(int trace, int id, int parent, std::string name, std::string run_id,
                         int64_t start, int64_t end) {
  auto hex = [](int n, size_t width) {
    std::string s = std::to_string(n);
    return std::string(width - s.size(), '0') + s;
  };
  SpanData span;
  span.context = {hex(trace, 32), hex(id, 16), 1};
  span.parent_span_id = parent == 0 ? "" : hex(parent, 16);
  span.name = std::move(name);
  span.run_id = std::move(run_id);
  span.start = At(start);
  span.end = At(end);
  return span;
}

}  // namespace mend::obs::testing
