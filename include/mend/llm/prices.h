#pragma once

// Model prices and the cost of a completion: PriceTable (built-in list prices, overridden by a
// price file, docs/prices_format.md) and LoadPriceFile. A const table may be shared between
// threads.

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <string_view>

#include "mend/base/file_system.h"
#include "mend/base/result.h"
#include "mend/llm/types.h"

namespace mend::llm {

/// List prices of one model in US dollars per million tokens.
struct ModelPrice {
  double input_per_mtok = 0;   ///< per million input (prompt) tokens
  double output_per_mtok = 0;  ///< per million output (completion) tokens
};

/// Per-model prices, used to give every Completion its cost. Lookup is by exact model name, then by
/// the longest known prefix ("gpt-4o-2024-08-06" → "gpt-4o"), then the same for the part after the
/// last '/' (router names like "openai/gpt-4o"). Copyable; thread-compatible (share a const one).
class PriceTable {
 public:
  /// An empty table: every model is unknown.
  PriceTable() = default;

  /// Built-in list prices for well-known OpenAI and Anthropic models, as published when this table
  /// was written. They go stale: a price file (LoadPriceFile) overrides them.
  static PriceTable Defaults();

  /// Sets the price of `model`, replacing any it had.
  void Set(std::string model, ModelPrice price);
  /// The price of `model`, or nullopt when no entry matches.
  std::optional<ModelPrice> Find(std::string_view model) const;
  /// The cost of `usage` on `model` in USD; 0 for an unknown model (tell with Find()).
  double CostUsd(std::string_view model, const Usage& usage) const;

  /// Merges `json_text` ({"model": {"input_per_mtok": x, "output_per_mtok": y}, ...}) over this
  /// table. kInvalidArgument naming the model and key for a malformed file (nothing is merged
  /// then); prices must be finite and non-negative.
  Status MergeJson(std::string_view json_text);

  /// How many models have a price.
  size_t size() const { return prices_.size(); }

 private:
  std::optional<ModelPrice> FindPrefix(std::string_view model) const;

  std::map<std::string, ModelPrice, std::less<>> prices_;
};

/// The built-in defaults overridden by the price file at `path`. kNotFound etc. from the file
/// system (annotated with the path), kInvalidArgument for a malformed file.
Result<PriceTable> LoadPriceFile(FileSystem& fs, const std::string& path);

}  // namespace mend::llm
