#include "mend/llm/prices.h"

#include <cmath>

#include "llm/json_util.h"

namespace mend::llm {

PriceTable PriceTable::Defaults() {
  PriceTable t;
  // USD per million input / output tokens, from the providers' public price lists.
  t.Set("gpt-4o", {2.50, 10.00});
  t.Set("gpt-4o-mini", {0.15, 0.60});
  t.Set("gpt-4.1", {2.00, 8.00});
  t.Set("gpt-4.1-mini", {0.40, 1.60});
  t.Set("gpt-4.1-nano", {0.10, 0.40});
  t.Set("o3-mini", {1.10, 4.40});
  t.Set("o4-mini", {1.10, 4.40});
  t.Set("claude-3-5-sonnet", {3.00, 15.00});
  t.Set("claude-3-5-haiku", {0.80, 4.00});
  t.Set("claude-3-7-sonnet", {3.00, 15.00});
  t.Set("claude-sonnet-4", {3.00, 15.00});
  t.Set("claude-opus-4", {15.00, 75.00});
  t.Set("text-embedding-3-small", {0.02, 0});
  t.Set("text-embedding-3-large", {0.13, 0});
  return t;
}

void PriceTable::Set(std::string model, ModelPrice price) {
  prices_.insert_or_assign(std::move(model), price);
}

std::optional<ModelPrice> PriceTable::FindPrefix(std::string_view model) const {
  if (auto it = prices_.find(model); it != prices_.end()) return it->second;
  // The longest key that is a prefix of `model`. Keys are few; a linear scan is plenty.
  const ModelPrice* best = nullptr;
  size_t best_len = 0;
  for (const auto& [key, price] : prices_) {
    if (key.size() > best_len && model.substr(0, key.size()) == key) {
      best = &price;
      best_len = key.size();
    }
  }
  if (best == nullptr) return std::nullopt;
  return *best;
}

std::optional<ModelPrice> PriceTable::Find(std::string_view model) const {
  if (model.empty()) return std::nullopt;
  if (auto p = FindPrefix(model)) return p;
  size_t slash = model.rfind('/');
  if (slash == std::string_view::npos || slash + 1 == model.size()) return std::nullopt;
  return FindPrefix(model.substr(slash + 1));
}

double PriceTable::CostUsd(std::string_view model, const Usage& usage) const {
  std::optional<ModelPrice> p = Find(model);
  if (!p) return 0;
  return (static_cast<double>(usage.input_tokens) * p->input_per_mtok +
          static_cast<double>(usage.output_tokens) * p->output_per_mtok) /
         1e6;
}

namespace {

Result<double> PriceField(const Json& entry, const std::string& model, std::string_view key) {
  const Json* v = Member(entry, key);
  if (v == nullptr) {
    return InvalidArgumentError("price of \"" + model + "\": missing \"" + std::string(key) + "\"");
  }
  std::optional<double> d = NumberMember(entry, key);
  if (!d || !std::isfinite(*d) || *d < 0) {
    return InvalidArgumentError("price of \"" + model + "\": \"" + std::string(key) +
                                "\" must be a non-negative number");
  }
  return *d;
}

}  // namespace

Status PriceTable::MergeJson(std::string_view json_text) {
  MEND_ASSIGN_OR_RETURN(Json j, ParseJson(json_text));
  if (!j.is_object()) return InvalidArgumentError("price table must be a JSON object");
  std::map<std::string, ModelPrice, std::less<>> merged = prices_;
  for (const auto& [model, entry] : j.items()) {
    if (!entry.is_object()) {
      return InvalidArgumentError("price of \"" + ForMessage(model, 100) +
                                  "\" must be an object with input_per_mtok and output_per_mtok");
    }
    const std::string name = ForMessage(model, 100);
    MEND_ASSIGN_OR_RETURN(double in, PriceField(entry, name, "input_per_mtok"));
    MEND_ASSIGN_OR_RETURN(double out, PriceField(entry, name, "output_per_mtok"));
    merged.insert_or_assign(model, ModelPrice{in, out});
  }
  prices_ = std::move(merged);
  return OkStatus();
}

Result<PriceTable> LoadPriceFile(FileSystem& fs, const std::string& path) {
  Result<std::string> text = ReadFileToString(fs, path);
  if (!text.ok()) return text.status().Annotate("price file " + path);
  PriceTable table = PriceTable::Defaults();
  Status s = table.MergeJson(*text);
  if (!s.ok()) return s.Annotate("price file " + path);
  return table;
}

}  // namespace mend::llm
