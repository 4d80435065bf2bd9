// mend::Pattern (RE2) beside std::regex, the backtracking engine mend used before, on the three
// jobs patterns do in mend: a tool schema's `pattern` compiled and checked once per tool call, a
// precompiled `grep` pattern searched line by line through 1 MB of text, and a pattern with nested
// repeats against a subject that makes backtracking explode. Same patterns, same subjects, same
// run; the reference is std::regex (ECMAScript), compiled and searched as the validator used to
// on every call. The validator's own figure includes its JSON work, which the reference lacks.
#include <benchmark/benchmark.h>

#include <nlohmann/json.hpp>
#include <regex>
#include <string>
#include <vector>

#include "mend/agent/json_schema.h"
#include "mend/base/pattern.h"

namespace {

constexpr char kSchemaPattern[] = R"(^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$)";
constexpr char kSchemaValue[] = "release-2026.12_candidate";
constexpr char kGrepPattern[] = R"(error: [a-z_]+ not found)";

const std::vector<std::string>& Lines() {
  static const std::vector<std::string> lines = [] {
    std::vector<std::string> out;
    std::size_t bytes = 0;
    for (int i = 0; bytes < (1 << 20); ++i) {
      std::string line = "2026-12-03T10:00:00Z worker " + std::to_string(i % 17) +
                         " processed item " + std::to_string(i) + " in 12 ms, queue depth 4";
      if (i % 997 == 0) line += " error: config_key not found";
      bytes += line.size() + 1;
      out.push_back(std::move(line));
    }
    return out;
  }();
  return lines;
}

void BM_SchemaCheck_Pattern(benchmark::State& state) {
  for (auto _ : state) {
    mend::Result<mend::Pattern> re = mend::Pattern::Compile(kSchemaPattern);
    benchmark::DoNotOptimize(re->Search(kSchemaValue));
  }
}

// What a tool call pays: the validator keeps compiled schema patterns.
void BM_SchemaCheck_Validator(benchmark::State& state) {
  const nlohmann::json schema = {{"type", "string"}, {"pattern", kSchemaPattern}};
  const nlohmann::json value = kSchemaValue;
  for (auto _ : state) benchmark::DoNotOptimize(mend::agent::ValidateAgainstSchema(value, schema));
}

void BM_SchemaCheck_StdRegex(benchmark::State& state) {
  for (auto _ : state) {
    std::regex re(kSchemaPattern, std::regex::ECMAScript);
    benchmark::DoNotOptimize(std::regex_search(kSchemaValue, re));
  }
}

void BM_Grep1MB_Pattern(benchmark::State& state) {
  const mend::Pattern re = *mend::Pattern::Compile(kGrepPattern);
  std::size_t hits = 0;
  for (auto _ : state) {
    for (const std::string& line : Lines()) hits += re.Search(line) ? 1 : 0;
  }
  benchmark::DoNotOptimize(hits);
  state.SetBytesProcessed(state.iterations() * (1 << 20));
}

void BM_Grep1MB_StdRegex(benchmark::State& state) {
  const std::regex re(kGrepPattern, std::regex::ECMAScript);
  std::size_t hits = 0;
  for (auto _ : state) {
    for (const std::string& line : Lines()) hits += std::regex_search(line, re) ? 1 : 0;
  }
  benchmark::DoNotOptimize(hits);
  state.SetBytesProcessed(state.iterations() * (1 << 20));
}

// `^(a|aa)+$` against n a's and a final b: backtracking tries every way to split the a's (about
// 1.6^n); an automaton reads the subject once.
std::string Exploding(int n) { return std::string(n, 'a') + "b"; }

void BM_NestedRepeat_Pattern(benchmark::State& state) {
  const mend::Pattern re = *mend::Pattern::Compile("^(a|aa)+$");
  const std::string subject = Exploding(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(re.Search(subject));
}

void BM_NestedRepeat_StdRegex(benchmark::State& state) {
  const std::regex re("^(a|aa)+$", std::regex::ECMAScript);
  const std::string subject = Exploding(static_cast<int>(state.range(0)));
  for (auto _ : state) benchmark::DoNotOptimize(std::regex_search(subject, re));
}

BENCHMARK(BM_SchemaCheck_Pattern);
BENCHMARK(BM_SchemaCheck_Validator);
BENCHMARK(BM_SchemaCheck_StdRegex);
BENCHMARK(BM_Grep1MB_Pattern)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_Grep1MB_StdRegex)->Unit(benchmark::kMillisecond);
BENCHMARK(BM_NestedRepeat_Pattern)->Arg(16)->Arg(24)->Arg(32)->Unit(benchmark::kMicrosecond);
BENCHMARK(BM_NestedRepeat_StdRegex)->Arg(16)->Arg(24)->Arg(32)->Unit(benchmark::kMicrosecond);

}  // namespace

BENCHMARK_MAIN();
