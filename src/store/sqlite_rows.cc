#include "store/sqlite_rows.h"

#include <string>

namespace mend::store::internal {
namespace {

// A SQLite row as a RunRowSource: a column of another storage class reads as missing.
class SqliteRow final : public RunRowSource {
 public:
  explicit SqliteRow(const SqliteStmt& stmt) : stmt_(stmt) {}
  bool IsNull(int col) const override { return stmt_.IsNull(col); }
  std::optional<std::string> Text(int col) const override {
    if (stmt_.ColumnType(col) != SQLITE_TEXT) return std::nullopt;
    return stmt_.Text(col);
  }
  std::optional<int64_t> Int(int col) const override {
    if (stmt_.ColumnType(col) != SQLITE_INTEGER) return std::nullopt;
    return stmt_.Int(col);
  }

 private:
  const SqliteStmt& stmt_;
};

// Binds column c as parameter c + 1.
class SqliteBinder final : public RunRowSink {
 public:
  explicit SqliteBinder(SqliteStmt& stmt) : stmt_(stmt) {}
  void Text(int col, std::string_view value) override { stmt_.BindText(col + 1, value); }
  void Int(int col, int64_t value) override { stmt_.Bind(col + 1, value); }
  void Null(int col) override { stmt_.BindNull(col + 1); }

 private:
  SqliteStmt& stmt_;
};

}  // namespace

Result<StoredRun> ParseRunRow(const SqliteStmt& stmt) { return ParseRunColumns(SqliteRow(stmt)); }

RunRecord CorruptRunMarker(const SqliteStmt& stmt, const Status& why) {
  return CorruptRunMarker(SqliteRow(stmt), why);
}

void BindRun(SqliteStmt& stmt, const StoredRun& run) {
  SqliteBinder binder(stmt);
  WriteRunColumns(run, binder);
}

}  // namespace mend::store::internal
