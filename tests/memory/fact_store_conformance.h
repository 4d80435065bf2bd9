#pragma once

// The conformance suite every FactStore passes: what long-term memory's interface promises,
// whichever database keeps the facts.
//
// To run it against a new backend:
//   1. Write a FactStoreHarness: it owns one empty store's storage (a file, a database schema)
//      for one test, and drops it when destroyed. Open(clock) gives a store over that storage,
//      built with `clock`; it is called again after the previous store was destroyed and must
//      then give a store over the same data (the durability tests reopen).
//   2. In the backend's test file, instantiate the suite with a factory of harnesses:
//        INSTANTIATE_TEST_SUITE_P(Sqlite, FactStoreConformanceTest,
//                                 ::testing::Values(FactStoreParam{"Sqlite", MakeHarness}),
//                                 FactStoreParamName);
//   Tests of what only that backend does (its schema, its migrations, its files) stay in its own
//   test files.

#include <gtest/gtest.h>

#include <functional>
#include <memory>
#include <ostream>
#include <string>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/manual_clock.h"
#include "mend/base/result.h"
#include "mend/memory/fact_store.h"

namespace mend::memory::testing {

// One store's storage for one test.
class FactStoreHarness {
 public:
  virtual ~FactStoreHarness() = default;
  // A store over this harness's data, built with `clock`. At most one is open at a time.
  virtual Result<std::unique_ptr<FactStore>> Open(Clock& clock) = 0;
};

struct FactStoreParam {
  std::string name;  // a valid test-name suffix, e.g. "Sqlite"
  std::function<std::unique_ptr<FactStoreHarness>()> make_harness;
};

inline void PrintTo(const FactStoreParam& p, std::ostream* os) { *os << p.name; }

inline std::string FactStoreParamName(const ::testing::TestParamInfo<FactStoreParam>& info) {
  return info.param.name;
}

// The statistics counted from scratch over the active facts of `store`, as
// TermStatistics::Build counts them, against those the store kept: the same idfs for every word
// and the same match of texts (which also compares the average lengths).
void ExpectKeptStatisticsMatchTheActiveFacts(FactStore& store);

class FactStoreConformanceTest : public ::testing::TestWithParam<FactStoreParam> {
 protected:
  void SetUp() override;
  void TearDown() override;
  // Closes the store and opens it again over the same data.
  void Reopen();
  AddResult MustAdd(NewFact fact);
  // The ids SearchLexical finds for `text` (built as the retriever builds its queries).
  std::vector<std::string> Search(const std::string& text, const std::string& workspace = "");
  // The ids MatchTags gives for `key` in `workspace`'s scope (no budget to speak of).
  std::vector<std::string> Tagged(const std::string& key, const std::string& workspace = "");
  void ExpectStatisticsOfTheActiveFacts() { ExpectKeptStatisticsMatchTheActiveFacts(*store_); }

  ManualClock clock_;
  std::unique_ptr<FactStoreHarness> harness_;
  std::unique_ptr<FactStore> store_;
};

// A file chatcli wrote, with the shapes it writes (duplicate tags, times with offsets and
// nanoseconds, a provenance word).
inline constexpr char kChatcliFile[] = R"([
  {
    "id": "aaaaaaaaaaaaaaaaaaaaaaaa",
    "content": "Deploy with make release",
    "category": "project",
    "tags": ["Deploy", "deploy", "CI/CD", "Deploy"],
    "created_at": "2026-03-01T10:00:00.123456789+02:00",
    "last_accessed": "2026-03-02T07:15:30.100000001Z",
    "access_count": 2,
    "score": 0,
    "provenance": "correction"
  },
  {
    "id": "bbbbbbbbbbbbbbbbbbbbbbbb",
    "content": "Prefers short answers",
    "category": "preference",
    "created_at": "2026-01-05T23:59:59.999999999-08:00",
    "last_accessed": "2026-01-06T00:00:00Z",
    "access_count": 0,
    "score": 0,
    "provenance": "user"
  },
  {
    "id": "cccccccccccccccccccccccc",
    "content": "Answers in English",
    "category": "preference",
    "tags": ["lang"],
    "created_at": "2026-01-07T08:00:00.5Z",
    "last_accessed": "2026-01-07T08:00:00.5Z",
    "access_count": 0,
    "score": 0,
    "provenance": "extraction"
  }
])";

}  // namespace mend::memory::testing
