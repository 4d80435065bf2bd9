#include "bench/lessonrecall_options.h"

#include <charconv>
#include <cstdlib>
#include <map>
#include <string_view>
#include <vector>

namespace mend::lessonrecall {
namespace {

bool ParseDouble(const std::string& text, double& out) {
  if (text.empty()) return false;
  char* end = nullptr;
  out = std::strtod(text.c_str(), &end);
  return end == text.c_str() + text.size();
}

bool ParseSize(const std::string& text, size_t& out) {
  const char* end = text.data() + text.size();
  auto [ptr, ec] = std::from_chars(text.data(), end, out);
  return !text.empty() && ec == std::errc() && ptr == end;
}

}  // namespace

bool SetOption(memory::RetrieverOptions& options, const std::string& key, const std::string& value,
               std::string& error) {
  const std::map<std::string_view, double*> doubles = {
      {"bm25_weight", &options.bm25_weight},
      {"trigram_weight", &options.trigram_weight},
      {"hint_weight", &options.hint_weight},
      {"vector_weight", &options.vector_weight},
      {"rrf_k", &options.rrf_k},
      {"gate", &options.gate},
      {"fact_gate", &options.fact_gate},
      {"coverage_gate", &options.coverage_gate},
      {"mmr_lambda", &options.mmr_lambda},
      {"recency_weight", &options.recency_weight},
      {"confidence_weight", &options.confidence_weight},
      {"usefulness_weight", &options.usefulness_weight}};
  const std::map<std::string_view, size_t*> sizes = {{"max_facts", &options.max_facts},
                                                     {"candidates", &options.candidates},
                                                     {"budget_chars", &options.budget_chars},
                                                     {"max_query_terms", &options.max_query_terms},
                                                     {"max_postings", &options.max_postings}};
  if (auto it = doubles.find(key); it != doubles.end()) {
    if (ParseDouble(value, *it->second)) return true;
    error = "--option " + key + ": not a number: " + value;
    return false;
  }
  if (auto it = sizes.find(key); it != sizes.end()) {
    if (ParseSize(value, *it->second)) return true;
    error = "--option " + key + ": not a non-negative integer: " + value;
    return false;
  }
  error = "--option: unknown RetrieverOptions field " + key;
  return false;
}

std::optional<Args> ParseArgs(int argc, char** argv, std::string& error) {
  Args args;
  bool postgres = false;
  std::vector<std::string> rest(argv + 1, argv + argc);
  for (size_t i = 0; i < rest.size(); ++i) {
    const std::string& flag = rest[i];
    const bool takes_value = flag == "--data" || flag == "--predictions" || flag == "--option" ||
                             flag == "--embedder" || flag == "--mend" || flag == "--small-draws" ||
                             flag == "--store" || flag == "--postgres-url";
    if (takes_value && i + 1 >= rest.size()) {
      error = flag + " needs a value";
      return std::nullopt;
    }
    if (flag == "--data") {
      args.data_dir = rest[++i];
    } else if (flag == "--predictions") {
      args.predictions_dir = rest[++i];
    } else if (flag == "--option") {
      const std::string& kv = rest[++i];
      const size_t eq = kv.find('=');
      if (eq == std::string::npos) {
        error = "--option expects key=value, got " + kv;
        return std::nullopt;
      }
      if (!SetOption(args.options, kv.substr(0, eq), kv.substr(eq + 1), error)) return std::nullopt;
      args.options_changed = true;
    } else if (flag == "--embedder") {
      if (rest[++i] != "hashing") {
        error = "--embedder: only \"hashing\" is available, got " + rest[i];
        return std::nullopt;
      }
      args.hashing_embedder = true;
    } else if (flag == "--mend") {
      args.mend_binary = rest[++i];
    } else if (flag == "--no-small") {
      args.small_memories = false;
    } else if (flag == "--small-draws") {
      const std::string& value = rest[++i];
      int draws = 0;
      auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), draws);
      if (ec != std::errc() || end != value.data() + value.size() || draws < 1) {
        error = "--small-draws expects a positive whole number, got " + value;
        return std::nullopt;
      }
      args.small_draws = draws;
    } else if (flag == "--store") {
      const std::string& store = rest[++i];
      if (store != "postgres" && store != "sqlite") {
        error = "--store expects sqlite or postgres, got " + store;
        return std::nullopt;
      }
      postgres = store == "postgres";
    } else if (flag == "--postgres-url") {
      args.postgres_url = rest[++i];
    } else if (flag.rfind("--", 0) != 0 && args.data_dir.empty()) {
      args.data_dir = flag;
    } else {
      error = "unknown argument " + flag;
      return std::nullopt;
    }
  }
  if (args.data_dir.empty()) {
    error = "no data directory (--data DIR)";
    return std::nullopt;
  }
  if (!postgres) {
    args.postgres_url.clear();
  } else if (args.postgres_url.empty()) {
    const char* url = std::getenv("MEND_TEST_POSTGRES_URL");
    if (url == nullptr || *url == '\0') {
      error = "--store postgres needs --postgres-url or MEND_TEST_POSTGRES_URL";
      return std::nullopt;
    }
    args.postgres_url = url;
  }
  return args;
}

}  // namespace mend::lessonrecall
