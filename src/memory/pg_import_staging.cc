#include "memory/pg_import_staging.h"

#include <utility>

#include "memory/document_terms.h"
#include "memory/fact_rows.h"
#include "memory/pg_fact_store.h"

namespace mend::memory::internal {
namespace {

// The columns of `facts` and, for an active fact, what its index rows are made of: the text of
// its search vector (PgSearchText) and its tag keys (an array literal of TagKeys).
constexpr char kCreate[] =
    "CREATE TEMP TABLE mend_fact_import (ord BIGINT NOT NULL, id TEXT NOT NULL, "
    "content TEXT NOT NULL, category TEXT NOT NULL, tags TEXT NOT NULL, workspace TEXT NOT NULL, "
    "source TEXT NOT NULL, confidence DOUBLE PRECISION NOT NULL, created_at BIGINT NOT NULL, "
    "last_accessed BIGINT NOT NULL, access_count BIGINT NOT NULL, helped BIGINT NOT NULL, "
    "hurt BIGINT NOT NULL, superseded_by TEXT, episodes TEXT NOT NULL, provenance TEXT NOT NULL, "
    "as_written TEXT NOT NULL, search TEXT NOT NULL, tag_keys TEXT[] NOT NULL) ON COMMIT DROP";
constexpr char kLoad[] =
    "INSERT INTO pg_temp.mend_fact_import SELECT $1::bigint + n - 1, id, content, category, tags, "
    "workspace, source, confidence, created_at, last_accessed, access_count, helped, hurt, "
    "NULLIF(superseded_by, ''), episodes, provenance, as_written, search, tag_keys::text[] "
    "FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], "
    "$8::float8[], $9::int8[], $10::int8[], $11::int8[], $12::int8[], $13::int8[], $14::text[], "
    "$15::text[], $16::text[], $17::text[], $18::text[], $19::text[]) WITH ORDINALITY "
    "AS u(id, content, category, tags, workspace, source, confidence, created_at, last_accessed, "
    "access_count, helped, hurt, superseded_by, episodes, provenance, as_written, search, "
    "tag_keys, n)";

}  // namespace

void PgArrayLiteral::Add(std::string_view item) {
  if (text_.size() > 1) text_ += ',';
  text_ += '"';
  // Runs without a quote or a backslash are copied at once: contents are long and rarely hold one.
  while (!item.empty()) {
    const size_t special = item.find_first_of("\"\\");
    if (special == std::string_view::npos) {
      text_ += item;
      break;
    }
    text_.append(item.data(), special);
    text_ += '\\';
    text_ += item[special];
    item.remove_prefix(special + 1);
  }
  text_ += '"';
}

std::string PgArrayLiteral::Take() {
  std::string out = std::move(text_);
  out += '}';
  text_ = "{";
  return out;
}

const char* PgImportStaging::CreateStatement() { return kCreate; }

const char* PgImportStaging::LoadStatement() { return kLoad; }

size_t PgImportStaging::bytes() const {
  size_t total = 0;
  for (const PgArrayLiteral& column : columns_) total += column.bytes();
  return total;
}

void PgImportStaging::Add(const Fact& f) {
  const std::string tags = JoinTags(f.tags);
  const std::string provenance = ProvenanceText(f.provenance);
  const bool active = f.superseded_by.empty();
  columns_[kId].Add(f.id);
  columns_[kContent].Add(f.content);
  columns_[kCategory].Add(f.category);
  columns_[kTags].Add(tags);
  columns_[kWorkspace].Add(f.workspace);
  columns_[kSource].Add(f.source);
  columns_[kConfidence].Add(PgDoubleText(f.confidence));
  columns_[kCreatedAt].Add(std::to_string(ToMillis(f.created_at)));
  columns_[kLastAccessed].Add(std::to_string(ToMillis(f.last_accessed)));
  columns_[kAccessCount].Add(std::to_string(f.access_count));
  columns_[kHelped].Add(std::to_string(f.helped));
  columns_[kHurt].Add(std::to_string(f.hurt));
  columns_[kSupersededBy].Add(f.superseded_by);
  columns_[kEpisodes].Add(EncodeEpisodes(f.provenance));
  columns_[kProvenance].Add(provenance);
  columns_[kAsWritten].Add(EncodeAsWritten(f.as_written));
  // A superseded fact has no index rows.
  columns_[kSearch].Add(active ? PgSearchText(f.content, tags, provenance) : "");
  std::vector<std::string> keys;
  if (active) {
    for (const std::string& tag : f.tags) {
      for (std::string& key : TagKeys(tag)) keys.push_back(std::move(key));
    }
  }
  columns_[kTagKeys].Add(db::PgTextArray(keys));
  ++facts_;
}

std::vector<db::PgParam> PgImportStaging::TakeSlice() {
  std::vector<db::PgParam> params;
  params.reserve(1 + kColumns);
  params.push_back(db::PgParam::Int(first_));
  for (PgArrayLiteral& column : columns_) params.push_back(db::PgParam::Text(column.Take()));
  first_ += static_cast<int64_t>(facts_);
  facts_ = 0;
  return params;
}

}  // namespace mend::memory::internal
