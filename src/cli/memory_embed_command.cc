// `mend memory embed | stats`, the embedding done by commands that write facts, and the warning of
// commands that search a store the configured model does not cover.
#include <stdio.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <iomanip>
#include <iostream>
#include <memory>
#include <nlohmann/json.hpp>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "cli/memory_command.h"
#include "cli/progress_line.h"
#include "mend/app/runtime.h"
#include "mend/base/json.h"
#include "mend/memory/backfill.h"
#include "mend/memory/fact_store.h"

namespace mend::cli::memory_cli {
namespace {

// Progress goes to stderr only when it is the process's own terminal.
bool ErrIsTerminal(const CliContext& ctx) {
  return &ctx.err == &std::cerr && isatty(STDERR_FILENO) == 1;
}

std::string Facts(int64_t n) { return std::to_string(n) + (n == 1 ? " fact" : " facts"); }

// The facts of the store `model` does not cover (-1 when the store cannot tell).
int64_t Uncovered(app::Runtime& runtime, const std::string& model) {
  Result<std::vector<memory::EmbeddingCoverage>> coverage = runtime.facts->Coverage(model);
  if (!coverage.ok()) return -1;
  for (const memory::EmbeddingCoverage& c : *coverage) {
    if (c.model_id == model) return c.uncovered;
  }
  return 0;
}

// Runs EmbedMissing with the runtime's options, showing progress on a terminal.
memory::EmbedReport EmbedWithProgress(CliContext& ctx, app::Runtime& runtime,
                                      llm::Embedder& embedder,
                                      const std::vector<std::string>* ids) {
  Clock& clock = *runtime.env.clock;
  ProgressLine line(ctx.err, ErrIsTerminal(ctx));
  const Time start = clock.Now();
  memory::EmbedReport report =
      memory::EmbedMissing(*runtime.facts, embedder, clock, ids, runtime.embed_options,
                           [&](const memory::EmbedProgress& p) {
                             line.Show(EmbedProgressText(p, clock.Now() - start));
                           });
  line.Finish();
  return report;
}

}  // namespace

std::string EmbedProgressText(const memory::EmbedProgress& progress, Duration elapsed) {
  std::ostringstream text;
  text << "embedding: " << progress.facts_done << "/" << progress.facts_total << " facts";
  const double seconds = std::chrono::duration<double>(elapsed).count();
  if (seconds > 0) {
    text << ", " << static_cast<int64_t>(static_cast<double>(progress.texts) / seconds)
         << " texts/s";
  }
  if (progress.retries > 0) text << ", " << progress.retries << " retried";
  return text.str();
}

EmbedSummary EmbedWritten(CliContext& ctx, app::Runtime& runtime,
                          const std::vector<std::string>& ids) {
  EmbedSummary summary;
  if (runtime.embedder == nullptr) return summary;
  summary.attempted = true;
  memory::EmbedReport report = EmbedWithProgress(ctx, runtime, *runtime.embedder, &ids);
  summary.embedded = report.progress.facts_done;
  summary.not_embedded = report.progress.facts_total - report.progress.facts_done;
  if (!report.error.ok()) {
    const std::string model = runtime.embedder->model_id();
    int64_t missing = Uncovered(runtime, model);
    if (missing < 0) missing = summary.not_embedded;
    ctx.err << "mend: warning: " << Facts(missing) << " have no vector for " << model
            << " (the facts are stored; " << report.error.message()
            << "); run `mend memory embed` to complete them\n";
  }
  return summary;
}

void WarnIfUncovered(CliContext& ctx, app::Runtime& runtime) {
  if (runtime.embedder == nullptr) return;
  const std::string model = runtime.embedder->model_id();
  Result<std::vector<memory::EmbeddingCoverage>> coverage = runtime.facts->Coverage(model);
  if (!coverage.ok()) return;
  for (const memory::EmbeddingCoverage& c : *coverage) {
    if (c.model_id != model || c.uncovered == 0) continue;
    ctx.err << "mend: warning: " << c.uncovered << " of " << (c.covered + c.uncovered)
            << " facts have no vector for " << model
            << " and are ranked by their words alone; run `mend memory embed` to complete them\n";
  }
}

Status EmbedFacts(CliContext& ctx, app::Runtime& runtime, const std::string& model_flag) {
  std::unique_ptr<llm::Embedder> other;
  llm::Embedder* embedder = runtime.embedder.get();
  if (!model_flag.empty() || embedder == nullptr) {
    MEND_ASSIGN_OR_RETURN(
        other, app::CreateConfiguredEmbedder(
                   runtime, model_flag.empty() ? runtime.config.GetString("memory.embeddings.model")
                                               : model_flag));
    embedder = other.get();
  }
  const std::string model = embedder->model_id();
  memory::EmbedReport report = EmbedWithProgress(ctx, runtime, *embedder, nullptr);
  const memory::EmbedProgress& p = report.progress;
  int64_t missing = Uncovered(runtime, model);
  if (missing < 0) missing = p.facts_total - p.facts_done;
  if (ctx.json) {
    ctx.out << DumpJson({{"model", model},
                         {"embedded", p.facts_done},
                         {"not_embedded", missing},
                         {"texts", p.texts},
                         {"requests", p.requests},
                         {"retries", p.retries}})
            << "\n";
  } else {
    ctx.out << "embedded " << Facts(p.facts_done) << " for " << model << " (" << p.texts
            << (p.texts == 1 ? " text in " : " texts in ") << p.requests
            << (p.requests == 1 ? " request" : " requests") << "); " << Facts(missing)
            << " without a vector\n";
  }
  if (report.error.ok()) return OkStatus();
  ctx.error_reported = true;
  ctx.err << "mend: " << Facts(missing) << " still have no vector for " << model << ": "
          << report.error.message() << "; run `mend memory embed` again to complete them\n";
  return report.error;
}

Status ShowStats(CliContext& ctx, app::Runtime& runtime) {
  MEND_ASSIGN_OR_RETURN(memory::FactCounts counts, runtime.facts->CountFacts());
  const std::string configured = runtime.embedder == nullptr ? "" : runtime.embedder->model_id();
  MEND_ASSIGN_OR_RETURN(std::vector<memory::EmbeddingCoverage> coverage,
                        runtime.facts->Coverage(configured));
  if (ctx.json) {
    nlohmann::json categories = nlohmann::json::array();
    for (const auto& [category, n] : counts.categories) {
      categories.push_back({{"category", category}, {"facts", n}});
    }
    nlohmann::json embeddings = nlohmann::json::array();
    for (const memory::EmbeddingCoverage& c : coverage) {
      embeddings.push_back({{"model", c.model_id},
                            {"configured", c.model_id == configured},
                            {"with_vectors", c.covered},
                            {"without_vectors", c.uncovered},
                            {"dimension", c.dimension}});
    }
    ctx.out << DumpJson({{"facts", counts.active},
                         {"superseded", counts.superseded},
                         {"categories", categories},
                         {"embeddings", embeddings}})
            << "\n";
    return OkStatus();
  }
  ctx.out << "facts: " << counts.active << " active, " << counts.superseded << " superseded\n";
  size_t width = 8;
  for (const auto& entry : counts.categories) width = std::max(width, entry.first.size());
  for (const auto& [category, n] : counts.categories) {
    ctx.out << "  " << std::left << std::setw(static_cast<int>(width + 2)) << category << n << "\n";
  }
  if (coverage.empty()) {
    ctx.out << "embeddings: none (memory.embeddings.url is not set)\n";
    return OkStatus();
  }
  size_t model_width = 5;
  for (const memory::EmbeddingCoverage& c : coverage) {
    model_width = std::max(model_width, c.model_id.size() + 2);
  }
  auto row = [&](const std::string& model, const std::string& with, const std::string& without,
                 const std::string& dimension) {
    ctx.out << "  " << std::left << std::setw(static_cast<int>(model_width + 2)) << model
            << std::setw(15) << with << std::setw(18) << without << dimension << "\n";
  };
  ctx.out << "embeddings:\n";
  row("MODEL", "WITH VECTORS", "WITHOUT VECTORS", "DIMENSION");
  for (const memory::EmbeddingCoverage& c : coverage) {
    row(c.model_id == configured ? c.model_id + " *" : c.model_id, std::to_string(c.covered),
        std::to_string(c.uncovered), c.dimension == 0 ? "-" : std::to_string(c.dimension));
  }
  if (!configured.empty()) ctx.out << "  (* the configured model)\n";
  return OkStatus();
}

}  // namespace mend::cli::memory_cli
