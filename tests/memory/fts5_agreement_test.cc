// PorterStem and TermStatistics::Match's fts_bm25 against SQLite's own FTS5: the stems its porter
// tokenizer indexes and the scores its bm25() returns.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <numbers>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

#include "mend/memory/lexical.h"

namespace mend::memory {
namespace {

using ::testing::DoubleNear;
using ::testing::Gt;

// An in-memory FTS5 table shaped as the store's facts_fts.
class Fts5Facts {
 public:
  Fts5Facts() {
    sqlite3_open(":memory:", &db_);
    Exec(
        "CREATE VIRTUAL TABLE facts USING fts5(content, tags, provenance, "
        "tokenize = 'porter unicode61')");
    Exec("CREATE VIRTUAL TABLE words USING fts5vocab(facts, instance)");
  }
  ~Fts5Facts() { sqlite3_close(db_); }

  void Exec(const char* sql) {
    ASSERT_EQ(sqlite3_exec(db_, sql, nullptr, nullptr, nullptr), SQLITE_OK) << sqlite3_errmsg(db_);
  }

  void Insert(int64_t rowid, const std::string& content, const std::string& tags = "",
              const std::string& provenance = "") {
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(db_, "INSERT INTO facts (rowid, content, tags, provenance) VALUES (?,?,?,?)",
                       -1, &stmt, nullptr);
    sqlite3_bind_int64(stmt, 1, rowid);
    sqlite3_bind_text(stmt, 2, content.data(), static_cast<int>(content.size()), SQLITE_TRANSIENT);
    sqlite3_bind_text(stmt, 3, tags.data(), static_cast<int>(tags.size()), SQLITE_TRANSIENT);
    sqlite3_bind_text(stmt, 4, provenance.data(), static_cast<int>(provenance.size()),
                      SQLITE_TRANSIENT);
    EXPECT_EQ(sqlite3_step(stmt), SQLITE_DONE) << sqlite3_errmsg(db_);
    sqlite3_finalize(stmt);
  }

  // The term FTS5 indexed for the first token of each row, by rowid.
  std::map<int64_t, std::string> FirstTerms() {
    std::map<int64_t, std::string> out;
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(db_, "SELECT doc, term FROM words WHERE col = 'content' AND offset = 0", -1,
                       &stmt, nullptr);
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      out[sqlite3_column_int64(stmt, 0)] =
          reinterpret_cast<const char*>(sqlite3_column_text(stmt, 1));
    }
    sqlite3_finalize(stmt);
    return out;
  }

  // -bm25() of every row matching `match`, by rowid.
  std::map<int64_t, double> Bm25(const std::string& match) {
    std::map<int64_t, double> out;
    sqlite3_stmt* stmt = nullptr;
    sqlite3_prepare_v2(db_, "SELECT rowid, bm25(facts) FROM facts WHERE facts MATCH ?", -1, &stmt,
                       nullptr);
    sqlite3_bind_text(stmt, 1, match.data(), static_cast<int>(match.size()), SQLITE_TRANSIENT);
    while (sqlite3_step(stmt) == SQLITE_ROW) {
      out[sqlite3_column_int64(stmt, 0)] = -sqlite3_column_double(stmt, 1);
    }
    sqlite3_finalize(stmt);
    return out;
  }

 private:
  sqlite3* db_ = nullptr;
};

TEST(PorterStemTest, AgreesWithSqlitesPorterTokenizer) {
  // The published examples, words the two versions of step 2 treat differently, tokens with
  // digits, y as a vowel or consonant, and a token past the 64-byte limit.
  std::vector<std::string> words;
  std::istringstream list(
      "caresses ponies ties caress cats feed agreed plastered motoring sing conflated troubled "
      "sized hopping falling hissing filing happy sky relational conditional rational valenci "
      "hesitanci digitizer conformabli radicalli differentli vileli analogousli vietnamization "
      "predication operator feudalism decisiveness hopefulness callousness formaliti "
      "sensitiviti sensibiliti triplicate formative formalize electriciti electrical goodness "
      "revival allowance inference airliner gyroscopic adjustable defensible irritant "
      "replacement adjustment dependent adoption homologou communism activate angulariti "
      "homologous effective bowdlerize probate rate cease controll roll possibly sensibly "
      "biology analogies deployment migrations running databases k8s 1990s x86 utf8 v2ing "
      "python3 sqlite3 md5sums a4 dies ones yyy syzygy flying played crying");
  for (std::string w; list >> w;) words.push_back(w);
  words.push_back(std::string(65, 'a') + "tional");
  Fts5Facts fts;
  for (size_t i = 0; i < words.size(); ++i) fts.Insert(static_cast<int64_t>(i + 1), words[i]);
  const std::map<int64_t, std::string> stems = fts.FirstTerms();
  ASSERT_EQ(stems.size(), words.size());
  for (size_t i = 0; i < words.size(); ++i) {
    EXPECT_EQ(PorterStem(words[i]), stems.at(static_cast<int64_t>(i + 1))) << words[i];
  }
}

struct Doc {
  std::string content;
  std::string tags;
  std::string provenance;
};

// Twelve facts of different lengths, with stop words, repeats, tags and provenance.
const std::vector<Doc>& TwelveFacts() {
  static const auto* const docs = new std::vector<Doc>{
      {"Deploy the payments service only after the database migrations have run", "payments deploy",
       ""},
      {"Rotate the API keys of the payments service every month", "security", ""},
      {"The staging database is reset every night at one", "staging",
       "reset staging\nERROR: connection refused on port 5432"},
      {"Run npm ci in the package folder before npm run build", "npm node",
       "Build the admin dashboard\nERROR: npm error enoent Could not read package.json"},
      {"Set git user.name and user.email before committing in CI", "git ci", ""},
      {"Prefers tabs over spaces in Go code", "go style", ""},
      {"Kafka brokers are pinned to version 3.6 on the shared cluster", "kafka", ""},
      {"Use UTC timestamps everywhere; naive datetimes broke the billing report twice",
       "python datetime", ""},
      {"Grafana dashboards live in the observability repo", "grafana", ""},
      {"The nightly job compresses artifacts and mirrors them to the backup bucket", "ci artifacts",
       ""},
      {"Pytest fixtures for the ledger service are slow; run them with -n auto", "pytest", ""},
      {"Terraform state for k8s clusters lives in the platform bucket", "terraform k8s", ""},
  };
  return *docs;
}

std::unique_ptr<TermStatistics> StatisticsOf(const std::vector<Doc>& docs) {
  std::vector<std::vector<std::string_view>> fields;
  for (const Doc& d : docs) fields.push_back({d.content, d.tags, d.provenance});
  return TermStatistics::Build(fields);
}

std::string TextOf(const Doc& d) { return d.content + "\n" + d.tags + "\n" + d.provenance; }

TEST(TermStatisticsTest, FtsBm25IsFts5sBm25WhileNoWordIsCommon) {
  const std::vector<Doc>& docs = TwelveFacts();
  Fts5Facts fts;
  for (size_t i = 0; i < docs.size(); ++i) {
    fts.Insert(static_cast<int64_t>(i + 1), docs[i].content, docs[i].tags, docs[i].provenance);
  }
  auto stats = StatisticsOf(docs);
  // Every word of these is in at most 3 of the 12 facts, where FtsIdf is FTS5's IDF. "one" is
  // FTS5's "on", a stop word mend leaves out of queries but FTS5 indexes; "migrate the
  // migrations" repeats a stem; "k8s" is stemmed as FTS5 stems it.
  for (const char* text :
       {"deploy the payments migrations after the database run",
        "npm build fails: could not read package.json", "one nightly report on the cluster",
        "k8s terraform state bucket", "migrate the migrations of the payments service"}) {
    const std::vector<std::string> terms = QueryTerms(text);
    const auto query = stats->Query(terms);
    for (const auto& q : query) ASSERT_GE(q.fts_idf, std::numbers::ln2) << text << ": " << q.term;
    const std::map<int64_t, double> expected = fts.Bm25(BuildFtsQuery(terms));
    ASSERT_FALSE(expected.empty()) << text;
    for (size_t i = 0; i < docs.size(); ++i) {
      const double mine = stats->Match(query, TextOf(docs[i])).fts_bm25;
      auto it = expected.find(static_cast<int64_t>(i + 1));
      if (it == expected.end()) {
        EXPECT_EQ(mine, 0.0) << text << ": fact " << i;
      } else {
        EXPECT_THAT(mine, DoubleNear(it->second, 1e-9 * it->second)) << text << ": fact " << i;
      }
    }
  }
}

TEST(TermStatisticsTest, FtsIdfIsFts5sThenFallsSmoothlyWithoutReachingZero) {
  std::vector<std::vector<std::string_view>> docs(20, std::vector<std::string_view>{"x"});
  auto stats = TermStatistics::Build(docs);
  const double total = 20;
  // FTS5's own IDF up to a third of the documents.
  for (size_t n : {0, 1, 2, 6}) {
    const double d = static_cast<double>(n);
    EXPECT_THAT(stats->FtsIdf(n), DoubleNear(std::log((total - d + 0.5) / (d + 0.5)), 1e-12)) << n;
  }
  // ln 2 from there to half; Lucene's IDF beyond, where FTS5's is floored to 1e-6.
  for (size_t n : {7, 8, 10}) EXPECT_THAT(stats->FtsIdf(n), DoubleNear(std::numbers::ln2, 1e-12));
  EXPECT_THAT(stats->FtsIdf(15), DoubleNear(stats->Idf(15), 1e-12));
  EXPECT_THAT(stats->FtsIdf(20), DoubleNear(std::log(1 + 0.5 / 20.5), 1e-12));
  for (size_t n = 0; n < 20; ++n) {
    EXPECT_GE(stats->FtsIdf(n), stats->FtsIdf(n + 1)) << n;
    EXPECT_THAT(stats->FtsIdf(n + 1), Gt(0.0)) << n;
  }
}

TEST(TermStatisticsTest, WordsMostFactsShareCountWhereFts5FloorsThem) {
  // A new user's memory: five facts about one project. FTS5 floors every word found in three or
  // more of them, so its bm25() puts the API-key fact first for a deploy task; fts_bm25 does not.
  const std::vector<Doc> docs = {
      {"Deploy payments after running the database migrations", "", ""},
      {"Database migrations must run before the payments deploy", "", ""},
      {"Payments deploy checklist: migrations, then smoke tests", "", ""},
      {"Rotate the API keys of the payments service monthly", "", ""},
      {"The staging database is reset every night", "", ""},
  };
  Fts5Facts fts;
  for (size_t i = 0; i < docs.size(); ++i) fts.Insert(static_cast<int64_t>(i + 1), docs[i].content);
  const std::vector<std::string> terms =
      QueryTerms("deploy the payments service; the database migrations have not run");
  const std::map<int64_t, double> floored = fts.Bm25(BuildFtsQuery(terms));
  ASSERT_FALSE(floored.empty());
  auto best = std::max_element(floored.begin(), floored.end(),
                               [](const auto& a, const auto& b) { return a.second < b.second; });
  EXPECT_EQ(best->first, 4);  // the API-key fact

  auto stats = StatisticsOf(docs);
  const auto query = stats->Query(terms);
  std::vector<double> scores;
  for (const Doc& d : docs) scores.push_back(stats->Match(query, TextOf(d)).fts_bm25);
  const size_t top = std::max_element(scores.begin(), scores.end()) - scores.begin();
  EXPECT_LT(top, 3u) << "a deploy fact comes first";
  EXPECT_GT(scores[0], scores[3]);
}

}  // namespace
}  // namespace mend::memory
