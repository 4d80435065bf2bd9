// The lexical query builders (src/memory/lexical.cc, pg_fact_store.cc): a memory search turns the
// task text, which a person or a model wrote, into an FTS5 MATCH expression (SQLite) or a tsquery
// (PostgreSQL). The promise is that no text can inject query syntax.
//
// Input: a free text. Its QueryTerms go through BuildFtsQuery, which must be accepted by a real
// FTS5 table (SQLite in memory, the store's tokenizer) whenever it is not empty; the lines of the
// input, taken as raw terms (any bytes), must be too, since the near-duplicate search quotes
// single terms. PgWordQuery's output must unquote to exactly the words given. PorterStem must
// return valid UTF-8 for valid UTF-8.
#include <sqlite3.h>

#include <string>

#include "fuzz/fuzz_util.h"
#include "memory/pg_fact_store.h"
#include "mend/base/utf8.h"
#include "mend/memory/lexical.h"

namespace mend::memory {
namespace {

sqlite3* Db() {
  static sqlite3* db = [] {
    sqlite3* d = nullptr;
    FUZZ_CHECK(sqlite3_open(":memory:", &d) == SQLITE_OK, "sqlite3_open");
    FUZZ_CHECK(sqlite3_exec(d,
                            "CREATE VIRTUAL TABLE t USING fts5(content, tags, "
                            "tokenize = 'porter unicode61');"
                            "INSERT INTO t VALUES ('run the database migrations', 'db');",
                            nullptr, nullptr, nullptr) == SQLITE_OK,
               "creating the FTS5 table");
    return d;
  }();
  return db;
}

void CheckMatches(const std::string& query) {
  if (query.empty()) return;
  sqlite3_stmt* stmt = nullptr;
  FUZZ_CHECK(sqlite3_prepare_v2(Db(), "SELECT rowid FROM t WHERE t MATCH ?", -1, &stmt, nullptr) ==
                 SQLITE_OK,
             "prepare");
  sqlite3_bind_text(stmt, 1, query.data(), static_cast<int>(query.size()), SQLITE_TRANSIENT);
  int rc = SQLITE_ROW;
  while (rc == SQLITE_ROW) rc = sqlite3_step(stmt);
  const std::string error = sqlite3_errmsg(Db());
  sqlite3_finalize(stmt);
  FUZZ_CHECK(rc == SQLITE_DONE, "FTS5 refused the query: " + error + " in " + query);
}

// Undoes PgWordQuery's quoting: 'word' joined by " op ", inside quotes '' and \x stand for x.
std::vector<std::string> UnquotePg(std::string_view q, char op) {
  std::vector<std::string> words;
  size_t i = 0;
  while (i < q.size()) {
    if (!words.empty()) {
      FUZZ_CHECK(q.substr(i, 3) == std::string({' ', op, ' '}), "no operator between words");
      i += 3;
    }
    FUZZ_CHECK(i < q.size() && q[i] == '\'', "a word that is not quoted");
    ++i;
    std::string word;
    for (;;) {
      FUZZ_CHECK(i < q.size(), "an unterminated word");
      const char c = q[i++];
      if (c == '\\') {
        FUZZ_CHECK(i < q.size(), "a trailing backslash");
        word += q[i++];
      } else if (c == '\'') {
        if (i < q.size() && q[i] == '\'') {
          word += '\'';
          ++i;
        } else {
          break;
        }
      } else {
        word += c;
      }
    }
    words.push_back(std::move(word));
  }
  return words;
}

}  // namespace
}  // namespace mend::memory

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace mend;
  using namespace mend::memory;
  const std::string_view input = fuzz::AsText(data, size);

  const std::vector<std::string> terms = QueryTerms(input, 32);
  FUZZ_CHECK(terms.size() <= 32, "more terms than asked for");
  CheckMatches(BuildFtsQuery(terms));
  for (const std::string& term : terms) {
    if (IsValidUtf8(term)) FUZZ_CHECK(IsValidUtf8(PorterStem(term)), "a stem is not valid UTF-8");
  }

  std::vector<std::string> lines;
  for (size_t start = 0; start <= input.size() && lines.size() < 8;) {
    size_t end = input.find('\n', start);
    if (end == std::string_view::npos) end = input.size();
    if (end > start) lines.emplace_back(input.substr(start, end - start));
    start = end + 1;
  }
  for (const std::string& line : lines) CheckMatches(BuildFtsQuery({line}));
  CheckMatches(BuildFtsQuery(lines));

  for (char op : {'|', '&'}) {
    std::vector<std::string> expected;
    for (const std::string& line : lines) {
      if (!line.empty()) expected.push_back(line);
    }
    FUZZ_CHECK(UnquotePg(memory::internal::PgWordQuery(lines, op), op) == expected,
               "PgWordQuery is not reversible");
  }
  return 0;
}
