#include "mend/improve/card.h"

#include <algorithm>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

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

std::string Usd(std::optional<double> value) {
  if (!value.has_value()) return "n/a (no run passed)";
  char buffer[64];
  std::snprintf(buffer, sizeof(buffer), "$%.4f", *value);
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
  out += "\ncost per successful run\n";
  out += "  before: " + Usd(d.baseline_cost.per_success_usd) + "\n";
  out += "  after:  " + Usd(d.candidate_cost.per_success_usd) + "\n";
  out += "  limit:  " +
         (d.cost_limit_usd.has_value() ? Usd(d.cost_limit_usd) + " (" + percent + ")"
                                       : std::string("none (the baseline never passed)")) +
         "\n";
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
  return out;
}

}  // namespace mend::improve
