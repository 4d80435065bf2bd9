#include "store/pg_rows.h"

#include <string>

namespace mend::store::internal {
namespace {

// A row of a text-format libpq result as a RunRowSource.
class PgRow final : public RunRowSource {
 public:
  PgRow(const PgResult& res, int row) : res_(res), row_(row) {}
  bool IsNull(int col) const override { return res_.IsNull(row_, col); }
  std::optional<std::string> Text(int col) const override {
    if (res_.IsNull(row_, col)) return std::nullopt;
    return res_.Text(row_, col);
  }
  std::optional<int64_t> Int(int col) const override { return res_.Int(row_, col); }

 private:
  const PgResult& res_;
  int row_;
};

// Collects the parameters $1..$25.
class PgParams final : public RunRowSink {
 public:
  PgParams() : params_(kRunColumnCount, PgParam::Null()) {}
  void Text(int col, std::string_view value) override { params_[col] = PgParam::Text(value); }
  void Int(int col, int64_t value) override { params_[col] = PgParam::Int(value); }
  void Null(int col) override { params_[col] = PgParam::Null(); }
  std::vector<PgParam> Take() { return std::move(params_); }

 private:
  std::vector<PgParam> params_;
};

}  // namespace

Result<StoredRun> ParsePgRunRow(const PgResult& res, int row) {
  return ParseRunColumns(PgRow(res, row));
}

RunRecord PgCorruptRunMarker(const PgResult& res, int row, const Status& why) {
  return CorruptRunMarker(PgRow(res, row), why);
}

std::vector<PgParam> PgRunParams(const StoredRun& run) {
  PgParams params;
  WriteRunColumns(run, params);
  return params.Take();
}

}  // namespace mend::store::internal
