// PorterStem against SQLite's own FTS5: the stems its porter tokenizer indexes.

#include <gmock/gmock.h>
#include <gtest/gtest.h>
#include <sqlite3.h>

#include <map>
#include <sstream>
#include <string>
#include <vector>

#include "mend/memory/lexical.h"

namespace mend::memory {
namespace {

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

}  // namespace
}  // namespace mend::memory
