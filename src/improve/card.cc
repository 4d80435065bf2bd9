#include "mend/improve/card.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace mend::improve {
namespace {

// Model-written text reaches a terminal: escape what could move the cursor or change colours.
std::string Printable(std::string_view text) {
  std::string out;
  for (char c : text) {
    const auto byte = static_cast<unsigned char>(c);
    if ((byte < 0x20 && c != '\n' && c != '\t') || byte == 0x7f) {
      char buffer[8];
      std::snprintf(buffer, sizeof(buffer), "\\x%02X", byte);
      out += buffer;
    } else {
      out += c;
    }
  }
  return out;
}

// Decimals that show the smallest positive figure with three significant digits (at least four,
// at most twelve), so figures printed side by side can be compared: $0.0000450 beside $0.0001000,
// not $0.0000 beside $0.0001.
int UsdDecimals(std::initializer_list<std::optional<double>> values) {
  int decimals = 4;
  for (const std::optional<double>& v : values) {
    if (!v.has_value() || !(*v > 0) || !std::isfinite(*v)) continue;
    const int needed = 2 - static_cast<int>(std::floor(std::log10(*v)));
    decimals = std::max(decimals, std::min(needed, 12));
  }
  return decimals;
}

std::string Usd(std::optional<double> value, int decimals) {
  if (!value.has_value()) return "n/a (no run passed)";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "$%.*f", decimals, *value);
  return buffer;
}

std::string Pad(std::string text, std::size_t width) {
  if (text.size() < width) text.append(width - text.size(), ' ');
  return text;
}

std::string Rate(int passes, int runs) {
  return std::to_string(passes) + "/" + std::to_string(runs);
}

void AppendCases(const GateDecision& d, std::string& out) {
  std::size_t width = 4;  // "case"
  for (const CaseResult& c : d.cases) width = std::max(width, c.case_id.size());
  out +=
      "\ncases (passing runs out of K; a verdict needs a difference of a strict majority of K)\n";
  out += "  " + Pad("case", width) + "  split     before  after  verdict\n";
  for (const CaseResult& c : d.cases) {
    out += "  " + Pad(Printable(c.case_id), width) + "  " +
           Pad(c.held_out ? "held-out" : "training", 8) + "  " +
           Pad(Rate(c.baseline_passes, c.runs), 6) + "  " +
           Pad(Rate(c.candidate_passes, c.runs), 5) + "  " +
           std::string(CaseVerdictName(c.verdict)) + "\n";
  }
}

void AppendCost(const GateDecision& d, std::string& out) {
  char percent[32];
  std::snprintf(percent, sizeof(percent), "+%g%%", d.max_cost_increase * 100.0);
  const int decimals = UsdDecimals(
      {d.baseline_cost.per_success_usd, d.candidate_cost.per_success_usd, d.cost_limit_usd});
  out += "\ncost per successful run\n";
  out += "  before: " + Usd(d.baseline_cost.per_success_usd, decimals) + "\n";
  out += "  after:  " + Usd(d.candidate_cost.per_success_usd, decimals) + "\n";
  out += "  limit:  " +
         (d.cost_limit_usd.has_value() ? Usd(d.cost_limit_usd, decimals) + " (" + percent + ")"
                                       : std::string("none (the baseline never passed)")) +
         "\n";
}

std::string Reply(int round, int request) {
  return "round " + std::to_string(round) + " candidate " + std::to_string(request);
}

void AppendIdentical(const std::vector<IdenticalCandidate>& identical, std::string& out) {
  if (identical.empty()) return;
  out += "\nidentical candidates (evaluated once)\n";
  for (const IdenticalCandidate& i : identical) {
    out += "  " + Reply(i.round, i.request) + ": the same files as candidate-" +
           std::to_string(i.same_as) + " (" + Reply(i.same_as_round, i.same_as_request) + ")\n";
  }
}

}  // namespace

std::string FormatImproveResult(const ImproveResult& result) {
  const GateDecision& d = result.decision;
  std::string out = "improve: " + std::string(GateOutcomeName(d.outcome));
  if (d.refused_by.has_value()) out += " by gate " + std::string(GateName(*d.refused_by));
  out += "\n  " + d.reason + "\n";
  AppendCases(d, out);
  AppendCost(d, out);
  if (!result.rationale.empty()) {
    out += "\nrationale\n" + Printable(result.rationale) + "\n";
  }
  if (!result.diffs.empty()) {
    out += "\nchanges\n";
    for (const FileDiff& f : result.diffs) out += Printable(f.diff);
  }
  if (!result.refused_edits.empty()) {
    out += "\nrefused edits (never applied)\n";
    for (const RefusedEdit& r : result.refused_edits) {
      out += "  " + Printable(r.path) + ": " + std::string(EditRefusalName(r.refusal)) + " - " +
             Printable(r.reason) + "\n";
    }
  }
  AppendIdentical(result.identical, out);
  return out;
}

}  // namespace mend::improve
