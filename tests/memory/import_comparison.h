#pragma once

// What the bulk-import tests compare between two stores holding the same facts, one written a
// fact at a time and one imported (or two stores' imports): the facts themselves, lexical search,
// tag matches and term statistics. Defined in fact_store_conformance_bulk_test.cc, which both
// test binaries compile.

#include <memory>
#include <string>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/manual_clock.h"
#include "mend/memory/fact_store.h"
#include "tests/memory/fact_store_conformance.h"
#include "tests/support/status_matchers.h"

namespace mend::memory::testing {

// The conformance suite's bulk-import tests (fact_store_conformance_bulk_test.cc), instantiated by
// each backend's test file as FactStoreConformanceTest is. OpenAnother gives a second empty store
// of the backend under test, which lives as long as the test.
class FactStoreBulkImportTest : public FactStoreConformanceTest {
 protected:
  FactStore* OpenAnother() {
    harnesses_.push_back(GetParam().make_harness());
    Result<std::unique_ptr<FactStore>> store = harnesses_.back()->Open(clock_);
    EXPECT_THAT(store.status(), ::mend::testing::IsOk());
    if (!store.ok()) return nullptr;
    others_.push_back(std::move(store).value());
    return others_.back().get();
  }
  void TearDown() override {
    others_.clear();
    harnesses_.clear();
    FactStoreConformanceTest::TearDown();
  }

  std::vector<std::unique_ptr<FactStoreHarness>> harnesses_;
  std::vector<std::unique_ptr<FactStore>> others_;
};

// Every field of a fact, as one line, so two stores' facts compare in one assertion.
std::string Describe(const Fact& f);
// Describe of every fact of `store`, superseded ones too, newest first.
std::vector<std::string> DescribeAll(FactStore& store);

// Queries over the words of the test facts, and one over a word none holds.
extern const std::vector<std::string> kImportQueries;

// Writes, one at a time, facts of every kind a store holds: tags (one with keys that repeat),
// workspaces, episodes, a reinforcement, a merged near duplicate and a superseded fact. Seven
// facts, one of them superseded. `clock` moves a second before each write.
void WriteOneAtATime(FactStore& store, ManualClock& clock);

// Every fact of `store`, superseded ones too, in the order they were written.
std::vector<Fact> ExportInOrder(FactStore& store);

// `n` facts over the words of kImportQueries, with tags, workspaces, episodes and superseded ones.
std::vector<Fact> ManyFacts(Time now, int n);

// The same ids, scores and texts from SearchLexical for every query of kImportQueries, in every
// workspace of the test facts.
void ExpectSameSearches(FactStore& want, FactStore& got);
// The same tag matches, term counts and fact count.
void ExpectSameTagsAndCounts(FactStore& want, FactStore& got);

}  // namespace mend::memory::testing
