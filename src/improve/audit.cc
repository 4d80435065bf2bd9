#include "mend/improve/audit.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <utility>

#include "mend/base/hash.h"
#include "mend/base/home_layout.h"
#include "mend/base/json.h"
#include "mend/base/time_format.h"

namespace mend::improve {
namespace {

using nlohmann::json;

bool IsDigits(std::string_view s) {
  return !s.empty() && std::all_of(s.begin(), s.end(), [](char c) { return c >= '0' && c <= '9'; });
}

bool IsLowerHex(std::string_view s) {
  return std::all_of(s.begin(), s.end(),
                     [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'); });
}

std::optional<int> ParsePositive(std::string_view s) {
  if (!IsDigits(s) || s.size() > 9 || s[0] == '0') return std::nullopt;
  int v = 0;
  std::from_chars(s.data(), s.data() + s.size(), v);
  return v;
}

// The n of "candidate-<n>", std::nullopt for anything else.
std::optional<int> CandidateNumber(std::string_view arm) {
  constexpr std::string_view kPrefix = "candidate-";
  if (arm.substr(0, kPrefix.size()) != kPrefix) return std::nullopt;
  return ParsePositive(arm.substr(kPrefix.size()));
}

bool IsValidArm(std::string_view arm) {
  return arm == "baseline" || CandidateNumber(arm).has_value();
}

std::string AttemptPath(std::string_view home, std::string_view id) {
  return home::AttemptDir(home, id);
}

std::string EditorName(int round, int n, std::string_view kind) {
  return std::to_string(round) + "-" + std::to_string(n) + "." + std::string(kind) + ".txt";
}

Status DataLoss(const std::string& file, std::string_view what) {
  return DataLossError(file + ": " + std::string(what));
}

json CaseToJson(const Case& c) {
  return json{{"id", c.id},
              {"task", c.task},
              {"workspace", c.workspace},
              {"check_args", c.check_args},
              {"tags", c.tags}};
}

Result<std::vector<std::string>> StringArray(const json& obj, std::string_view key) {
  MEND_ASSIGN_OR_RETURN(const json* arr, GetArray(obj, key));
  std::vector<std::string> out;
  for (const json& v : *arr) {
    if (!v.is_string()) return InvalidArgumentError(std::string(key) + ": expected strings");
    out.push_back(v.get<std::string>());
  }
  return out;
}

Result<Case> CaseFromJson(const json& j) {
  Case c;
  MEND_ASSIGN_OR_RETURN(c.id, GetString(j, "id"));
  MEND_ASSIGN_OR_RETURN(c.task, GetString(j, "task"));
  MEND_ASSIGN_OR_RETURN(c.workspace, GetString(j, "workspace"));
  MEND_ASSIGN_OR_RETURN(c.check_args, StringArray(j, "check_args"));
  MEND_ASSIGN_OR_RETURN(c.tags, StringArray(j, "tags"));
  return c;
}

Result<AuditInputs> InputsFromJson(const json& j) {
  AuditInputs in;
  MEND_ASSIGN_OR_RETURN(in.agent_dir, GetString(j, "agent_dir"));
  MEND_ASSIGN_OR_RETURN(in.instructions_sha256, GetString(j, "instructions_sha256"));
  MEND_ASSIGN_OR_RETURN(const json* skills, GetArray(j, "skills"));
  for (const json& s : *skills) {
    MEND_ASSIGN_OR_RETURN(std::string name, GetString(s, "name"));
    MEND_ASSIGN_OR_RETURN(std::string sha, GetString(s, "sha256"));
    in.skills_sha256.emplace_back(std::move(name), std::move(sha));
  }
  MEND_ASSIGN_OR_RETURN(const json* cases, GetArray(j, "cases"));
  for (const json& c : *cases) {
    MEND_ASSIGN_OR_RETURN(Case parsed, CaseFromJson(c));
    in.cases.push_back(std::move(parsed));
  }
  MEND_ASSIGN_OR_RETURN(const json* opt, GetObject(j, "options"));
  MEND_ASSIGN_OR_RETURN(std::int64_t repeats, GetInt64(*opt, "repeats"));
  MEND_ASSIGN_OR_RETURN(std::int64_t rounds, GetInt64(*opt, "max_rounds"));
  MEND_ASSIGN_OR_RETURN(in.options.gates.max_cost_increase, GetDouble(*opt, "max_cost_increase"));
  MEND_ASSIGN_OR_RETURN(std::int64_t min_repeats, GetInt64(*opt, "min_repeats"));
  in.options.repeats = static_cast<int>(repeats);
  in.options.max_rounds = static_cast<int>(rounds);
  in.options.gates.min_repeats = static_cast<int>(min_repeats);
  return in;
}

Result<AuditSplit> SplitFromJson(const json& j) {
  AuditSplit s;
  MEND_ASSIGN_OR_RETURN(std::string seed, GetString(j, "seed"));
  auto [ptr, ec] = std::from_chars(seed.data(), seed.data() + seed.size(), s.seed);
  if (!IsDigits(seed) || ec != std::errc() || ptr != seed.data() + seed.size()) {
    return InvalidArgumentError("seed: not a decimal uint64");
  }
  MEND_ASSIGN_OR_RETURN(s.held_out_fraction, GetDouble(j, "held_out_fraction"));
  MEND_ASSIGN_OR_RETURN(s.training_ids, StringArray(j, "training_ids"));
  MEND_ASSIGN_OR_RETURN(s.held_out_ids, StringArray(j, "held_out_ids"));
  return s;
}

Status CheckRow(const ScoreRow& r) {
  if (r.case_id.empty()) return InvalidArgumentError("score row: empty case_id");
  if (!IsValidArm(r.arm)) return InvalidArgumentError("score row: invalid arm \"" + r.arm + "\"");
  if (r.repeat < 0) return InvalidArgumentError("score row: negative repeat");
  if (!std::isfinite(r.score) || r.score < 0 || !std::isfinite(r.cost_usd) || r.cost_usd < 0) {
    return InvalidArgumentError("score row: score and cost_usd must be finite and >= 0");
  }
  return Status();
}

Result<ScoreRow> RowFromJson(const json& j) {
  ScoreRow r;
  MEND_ASSIGN_OR_RETURN(r.case_id, GetString(j, "case_id"));
  MEND_ASSIGN_OR_RETURN(r.held_out, GetBool(j, "held_out"));
  MEND_ASSIGN_OR_RETURN(r.arm, GetString(j, "arm"));
  MEND_ASSIGN_OR_RETURN(std::int64_t repeat, GetInt64(j, "repeat"));
  if (repeat < 0 || repeat > 1'000'000) return InvalidArgumentError("repeat out of range");
  r.repeat = static_cast<int>(repeat);
  MEND_ASSIGN_OR_RETURN(r.pass, GetBool(j, "pass"));
  MEND_ASSIGN_OR_RETURN(r.score, GetDouble(j, "score"));
  MEND_ASSIGN_OR_RETURN(r.cost_usd, GetDouble(j, "cost_usd"));
  MEND_RETURN_IF_ERROR(CheckRow(r));
  return r;
}

template <typename Enum, std::size_t N>
std::optional<Enum> EnumByName(std::string_view name, std::string_view (*namer)(Enum),
                               const Enum (&values)[N]) {
  for (Enum v : values) {
    if (namer(v) == name) return v;
  }
  return std::nullopt;
}

json ArmCostToJson(const ArmCost& cost) {
  return json{{"total_usd", cost.total_usd},
              {"runs", cost.runs},
              {"passes", cost.passes},
              {"per_success_usd", cost.per_success_usd ? json(*cost.per_success_usd) : json()}};
}

Result<ArmCost> ArmCostFromJson(const json& j) {
  ArmCost cost;
  MEND_ASSIGN_OR_RETURN(cost.total_usd, GetDouble(j, "total_usd"));
  MEND_ASSIGN_OR_RETURN(std::int64_t runs, GetInt64(j, "runs"));
  MEND_ASSIGN_OR_RETURN(std::int64_t passes, GetInt64(j, "passes"));
  if (runs < 0 || passes < 0 || passes > runs || runs > 1'000'000'000) {
    return InvalidArgumentError("inconsistent cost counts");
  }
  cost.runs = static_cast<int>(runs);
  cost.passes = static_cast<int>(passes);
  MEND_ASSIGN_OR_RETURN(cost.per_success_usd, GetOptionalDouble(j, "per_success_usd"));
  return cost;
}

// The cost figures of decision.json; std::nullopt for a folder written before they were recorded.
Result<std::optional<RecordedCosts>> RecordedCostsFromJson(const json& j) {
  MEND_ASSIGN_OR_RETURN(std::optional<const json*> baseline, GetOptionalObject(j, "baseline_cost"));
  if (!baseline) return std::optional<RecordedCosts>();
  RecordedCosts costs;
  MEND_ASSIGN_OR_RETURN(costs.baseline, ArmCostFromJson(**baseline));
  MEND_ASSIGN_OR_RETURN(const json* candidate, GetObject(j, "candidate_cost"));
  MEND_ASSIGN_OR_RETURN(costs.candidate, ArmCostFromJson(*candidate));
  MEND_ASSIGN_OR_RETURN(costs.max_cost_increase, GetDouble(j, "max_cost_increase"));
  MEND_ASSIGN_OR_RETURN(costs.cost_limit_usd, GetOptionalDouble(j, "cost_limit_usd"));
  return std::optional<RecordedCosts>(std::move(costs));
}

Result<RecordedError> ErrorFromJson(const json& j) {
  RecordedError e;
  MEND_ASSIGN_OR_RETURN(e.code, GetString(j, "code"));
  MEND_ASSIGN_OR_RETURN(e.message, GetString(j, "message"));
  return e;
}

Result<RecordedDecision> DecisionFromJson(const json& j) {
  RecordedDecision d;
  MEND_ASSIGN_OR_RETURN(std::int64_t cand, GetInt64(j, "candidate"));
  if (cand < 1 || cand > 1'000'000) return InvalidArgumentError("candidate out of range");
  d.candidate = static_cast<int>(cand);
  MEND_ASSIGN_OR_RETURN(std::string outcome, GetString(j, "outcome"));
  constexpr GateOutcome kOutcomes[] = {GateOutcome::kProposal, GateOutcome::kNoImprovement,
                                       GateOutcome::kRejected};
  auto o = EnumByName(outcome, &GateOutcomeName, kOutcomes);
  if (!o) return InvalidArgumentError("unknown outcome \"" + outcome + "\"");
  d.outcome = *o;
  MEND_ASSIGN_OR_RETURN(std::optional<std::string> gate, GetOptionalString(j, "gate"));
  if (gate) {
    constexpr Gate kGates[] = {Gate::kWorseCase, Gate::kCost};
    auto g = EnumByName(*gate, &GateName, kGates);
    if (!g) return InvalidArgumentError("unknown gate \"" + *gate + "\"");
    d.refused_by = *g;
  }
  MEND_ASSIGN_OR_RETURN(d.reason, GetString(j, "reason"));
  MEND_ASSIGN_OR_RETURN(const json* cases, GetArray(j, "cases"));
  constexpr CaseVerdict kVerdicts[] = {CaseVerdict::kBetter, CaseVerdict::kWorse,
                                       CaseVerdict::kSame};
  for (const json& c : *cases) {
    CaseResult r;
    MEND_ASSIGN_OR_RETURN(r.case_id, GetString(c, "case_id"));
    MEND_ASSIGN_OR_RETURN(r.held_out, GetBool(c, "held_out"));
    MEND_ASSIGN_OR_RETURN(std::int64_t runs, GetInt64(c, "runs"));
    MEND_ASSIGN_OR_RETURN(std::int64_t bp, GetInt64(c, "baseline_passes"));
    MEND_ASSIGN_OR_RETURN(std::int64_t cp, GetInt64(c, "candidate_passes"));
    if (runs < 0 || bp < 0 || cp < 0 || bp > runs || cp > runs || runs > 1'000'000) {
      return InvalidArgumentError("case \"" + r.case_id + "\": inconsistent counts");
    }
    r.runs = static_cast<int>(runs);
    r.baseline_passes = static_cast<int>(bp);
    r.candidate_passes = static_cast<int>(cp);
    MEND_ASSIGN_OR_RETURN(std::string verdict, GetString(c, "verdict"));
    auto v = EnumByName(verdict, &CaseVerdictName, kVerdicts);
    if (!v) return InvalidArgumentError("unknown verdict \"" + verdict + "\"");
    r.verdict = *v;
    MEND_ASSIGN_OR_RETURN(std::optional<std::int64_t> gain, GetOptionalInt64(c, "gain"));
    if (gain && (*gain < -r.runs || *gain > r.runs)) {
      return InvalidArgumentError("case \"" + r.case_id + "\": gain out of range");
    }
    if (gain) d.gains.push_back(static_cast<int>(*gain));
    d.cases.push_back(std::move(r));
  }
  // Folders written before gains were recorded have none; a folder has all or none.
  if (!d.gains.empty() && d.gains.size() != d.cases.size()) {
    return InvalidArgumentError("a case has no gain");
  }
  MEND_ASSIGN_OR_RETURN(d.costs, RecordedCostsFromJson(j));
  return d;
}

// Reads `dir/name`; std::nullopt when it does not exist.
Result<std::optional<std::string>> ReadOptional(FileSystem& fs, const std::string& dir,
                                                std::string_view name) {
  const std::string path = JoinPath(dir, name);
  if (!fs.Exists(path)) return std::optional<std::string>();
  MEND_ASSIGN_OR_RETURN(std::string text, ReadFileToString(fs, path));
  return std::optional<std::string>(std::move(text));
}

// Parses a JSON file's text with `parse`, turning every error into kDataLoss naming `name`.
template <typename T, typename F>
Result<T> ParseFile(std::string_view name, const std::string& text, F parse) {
  Result<json> j = ParseJson(text);
  if (!j.ok()) return DataLoss(std::string(name), j.status().message());
  Result<T> v = parse(*j);
  if (!v.ok()) return DataLoss(std::string(name), v.status().message());
  return v;
}

}  // namespace

bool IsValidAttemptId(std::string_view id) {
  // imp-yyyymmddThhmmss-xxxxxxxx
  if (id.size() != 28 || id.substr(0, 4) != "imp-" || id[12] != 'T' || id[19] != '-') {
    return false;
  }
  const std::string_view hex = id.substr(20);
  return IsDigits(id.substr(4, 8)) && IsDigits(id.substr(13, 6)) && hex.size() == 8 &&
         IsLowerHex(hex);
}

Result<std::string> NewAttemptId(const Env& env) {
  const std::string stamp = FormatRfc3339Seconds(env.clock->Now());  // 2006-01-02T15:04:05Z
  std::string digits;
  for (char c : stamp) {
    if ((c >= '0' && c <= '9') || c == 'T') digits.push_back(c);
  }
  static constexpr char kHex[] = "0123456789abcdef";
  std::uint64_t bits = env.random->Next64();
  std::string suffix(8, '0');
  for (int i = 7; i >= 0; --i) {
    suffix[static_cast<std::size_t>(i)] = kHex[bits & 0xF];
    bits >>= 4;
  }
  std::string id = "imp-" + digits + "-" + suffix;
  if (stamp.size() != 20 || !IsValidAttemptId(id)) {
    return InvalidArgumentError("clock time " + stamp + " cannot form an attempt id");
  }
  return id;
}

AuditInputs MakeAuditInputs(std::string agent_dir, std::string_view instructions,
                            const std::vector<std::pair<std::string, std::string>>& skills,
                            std::vector<Case> cases, AuditOptions options) {
  AuditInputs in;
  in.agent_dir = std::move(agent_dir);
  in.instructions_sha256 = Sha256Hex(instructions);
  for (const auto& [name, text] : skills) in.skills_sha256.emplace_back(name, Sha256Hex(text));
  in.cases = std::move(cases);
  in.options = options;
  return in;
}

std::string CandidateArm(int n) { return "candidate-" + std::to_string(n); }

Result<AuditFolder> AuditFolder::Create(FileSystem& fs, std::string_view home,
                                        std::string attempt_id) {
  if (!IsValidAttemptId(attempt_id)) {
    return InvalidArgumentError("invalid attempt id \"" + attempt_id + "\"");
  }
  std::string path = AttemptPath(home, attempt_id);
  if (fs.Exists(path)) return AlreadyExistsError("audit folder " + path + " already exists");
  MEND_RETURN_IF_ERROR(fs.CreateDirs(JoinPath(path, "editor")));
  return AuditFolder(fs, std::move(attempt_id), std::move(path));
}

Status AuditFolder::WriteInputs(const AuditInputs& inputs) {
  json skills = json::array();
  for (const auto& [name, sha] : inputs.skills_sha256) {
    skills.push_back(json{{"name", name}, {"sha256", sha}});
  }
  json cases = json::array();
  for (const Case& c : inputs.cases) cases.push_back(CaseToJson(c));
  json j{{"agent_dir", inputs.agent_dir},
         {"instructions_sha256", inputs.instructions_sha256},
         {"skills", skills},
         {"cases", cases},
         {"options",
          {{"repeats", inputs.options.repeats},
           {"max_rounds", inputs.options.max_rounds},
           {"max_cost_increase", inputs.options.gates.max_cost_increase},
           {"min_repeats", inputs.options.gates.min_repeats}}}};
  return WriteFileAtomically(*fs_, JoinPath(path_, "inputs.json"), DumpJson(j, 2) + "\n");
}

Status AuditFolder::WriteSplit(const Split& split) {
  json training = json::array();
  for (const Case& c : split.training) training.push_back(c.id);
  json held_out = json::array();
  for (const Case& c : split.held_out) held_out.push_back(c.id);
  // The seed is a string: JSON readers commonly lose integers above 2^53.
  json j{{"seed", std::to_string(split.seed)},
         {"held_out_fraction", split.held_out_fraction},
         {"training_ids", training},
         {"held_out_ids", held_out}};
  return WriteFileAtomically(*fs_, JoinPath(path_, "split.json"), DumpJson(j, 2) + "\n");
}

Status AuditFolder::WriteEditorRequest(int round, int n, std::string_view request) {
  if (round < 1 || n < 1) return InvalidArgumentError("editor round and n must be >= 1");
  return WriteFileAtomically(
      *fs_, JoinPath(JoinPath(path_, "editor"), EditorName(round, n, "request")), request);
}

Status AuditFolder::WriteEditorReply(int round, int n, std::string_view reply) {
  if (round < 1 || n < 1) return InvalidArgumentError("editor round and n must be >= 1");
  return WriteFileAtomically(
      *fs_, JoinPath(JoinPath(path_, "editor"), EditorName(round, n, "reply")), reply);
}

Status AuditFolder::AppendScores(const std::vector<ScoreRow>& rows) {
  for (const ScoreRow& r : rows) MEND_RETURN_IF_ERROR(CheckRow(r));
  std::vector<ScoreRow> all = scores_;
  all.insert(all.end(), rows.begin(), rows.end());
  std::string text;
  for (const ScoreRow& r : all) {
    text += DumpJson(json{{"case_id", r.case_id},
                          {"held_out", r.held_out},
                          {"arm", r.arm},
                          {"repeat", r.repeat},
                          {"pass", r.pass},
                          {"score", r.score},
                          {"cost_usd", r.cost_usd}});
    text += "\n";
  }
  MEND_RETURN_IF_ERROR(WriteFileAtomically(*fs_, JoinPath(path_, "scores.jsonl"), text));
  scores_ = std::move(all);
  return Status();
}

Status AuditFolder::WriteDecision(int candidate, const GateDecision& decision) {
  if (candidate < 1) return InvalidArgumentError("candidate must be >= 1");
  json cases = json::array();
  for (const CaseResult& c : decision.cases) {
    cases.push_back(json{{"case_id", c.case_id},
                         {"held_out", c.held_out},
                         {"runs", c.runs},
                         {"baseline_passes", c.baseline_passes},
                         {"candidate_passes", c.candidate_passes},
                         {"gain", c.candidate_passes - c.baseline_passes},
                         {"verdict", CaseVerdictName(c.verdict)}});
  }
  json j{{"candidate", candidate},
         {"outcome", GateOutcomeName(decision.outcome)},
         {"gate", decision.refused_by ? json(GateName(*decision.refused_by)) : json(nullptr)},
         {"reason", decision.reason},
         {"cases", cases},
         {"baseline_cost", ArmCostToJson(decision.baseline_cost)},
         {"candidate_cost", ArmCostToJson(decision.candidate_cost)},
         {"max_cost_increase", decision.max_cost_increase},
         {"cost_limit_usd", decision.cost_limit_usd ? json(*decision.cost_limit_usd) : json()}};
  return WriteFileAtomically(*fs_, JoinPath(path_, "decision.json"), DumpJson(j, 2) + "\n");
}

Status AuditFolder::WriteCard(std::string_view card) {
  return WriteFileAtomically(*fs_, JoinPath(path_, "card.txt"), card);
}

Status AuditFolder::WriteError(const Status& error) {
  const json j{{"code", StatusCodeName(error.code())}, {"message", error.message()}};
  return WriteFileAtomically(*fs_, JoinPath(path_, "error.json"), DumpJson(j, 2) + "\n");
}

Result<AuditRecord> ReadAudit(FileSystem& fs, std::string_view home, std::string_view attempt_id) {
  if (!IsValidAttemptId(attempt_id)) {
    return InvalidArgumentError("invalid attempt id \"" + std::string(attempt_id) + "\"");
  }
  const std::string dir = AttemptPath(home, attempt_id);
  if (!fs.Exists(dir)) return NotFoundError("no improve attempt " + std::string(attempt_id));
  AuditRecord rec;
  rec.attempt_id = std::string(attempt_id);

  MEND_ASSIGN_OR_RETURN(std::optional<std::string> inputs, ReadOptional(fs, dir, "inputs.json"));
  if (!inputs) return DataLoss("inputs.json", "missing");
  MEND_ASSIGN_OR_RETURN(rec.inputs, ParseFile<AuditInputs>("inputs.json", *inputs, InputsFromJson));

  MEND_ASSIGN_OR_RETURN(std::optional<std::string> split, ReadOptional(fs, dir, "split.json"));
  if (split) {
    MEND_ASSIGN_OR_RETURN(rec.split, ParseFile<AuditSplit>("split.json", *split, SplitFromJson));
  }

  const std::string editor_dir = JoinPath(dir, "editor");
  if (fs.Exists(editor_dir)) {
    MEND_ASSIGN_OR_RETURN(std::vector<std::string> names, fs.List(editor_dir));
    std::map<std::pair<int, int>, EditorExchange> by_key;
    std::map<std::pair<int, int>, std::string> replies;
    for (const std::string& name : names) {
      const std::string file = "editor/" + name;
      const std::size_t dash = name.find('-');
      const std::size_t dot = name.find('.');
      if (dash == std::string::npos || dot == std::string::npos || dot < dash) {
        return DataLoss(file, "unexpected file in the editor folder");
      }
      auto round = ParsePositive(std::string_view(name).substr(0, dash));
      auto n = ParsePositive(std::string_view(name).substr(dash + 1, dot - dash - 1));
      const std::string_view kind = std::string_view(name).substr(dot);
      if (!round || !n || (kind != ".request.txt" && kind != ".reply.txt")) {
        return DataLoss(file, "unexpected file in the editor folder");
      }
      MEND_ASSIGN_OR_RETURN(std::string text, ReadFileToString(fs, JoinPath(editor_dir, name)));
      if (kind == ".request.txt") {
        by_key[{*round, *n}] = EditorExchange{*round, *n, std::move(text), std::nullopt};
      } else {
        replies[{*round, *n}] = std::move(text);
      }
    }
    for (auto& [key, reply] : replies) {
      auto it = by_key.find(key);
      if (it == by_key.end()) {
        return DataLoss("editor/" + EditorName(key.first, key.second, "reply"),
                        "reply without a request");
      }
      it->second.reply = std::move(reply);
    }
    for (auto& [key, ex] : by_key) rec.editor.push_back(std::move(ex));
  }

  MEND_ASSIGN_OR_RETURN(std::optional<std::string> scores, ReadOptional(fs, dir, "scores.jsonl"));
  if (scores) {
    std::size_t start = 0;
    int line_no = 0;
    while (start < scores->size()) {
      std::size_t end = scores->find('\n', start);
      if (end == std::string::npos) end = scores->size();
      ++line_no;
      const std::string line = scores->substr(start, end - start);
      start = end + 1;
      if (line.empty()) continue;
      Result<ScoreRow> row = ParseFile<ScoreRow>("scores.jsonl", line, RowFromJson);
      if (!row.ok()) {
        return DataLoss("scores.jsonl", "line " + std::to_string(line_no) + ": " +
                                            std::string(row.status().message()));
      }
      rec.scores.push_back(std::move(*row));
    }
  }

  MEND_ASSIGN_OR_RETURN(std::optional<std::string> decision,
                        ReadOptional(fs, dir, "decision.json"));
  if (decision) {
    MEND_ASSIGN_OR_RETURN(
        rec.decision, ParseFile<RecordedDecision>("decision.json", *decision, DecisionFromJson));
  }
  MEND_ASSIGN_OR_RETURN(rec.card, ReadOptional(fs, dir, "card.txt"));
  MEND_ASSIGN_OR_RETURN(std::optional<std::string> error, ReadOptional(fs, dir, "error.json"));
  if (error) {
    MEND_ASSIGN_OR_RETURN(rec.error, ParseFile<RecordedError>("error.json", *error, ErrorFromJson));
  }
  return rec;
}

Result<std::vector<CaseScores>> CaseScoresFromRows(const std::vector<ScoreRow>& rows,
                                                   int candidate) {
  const std::string cand_arm = CandidateArm(candidate);
  std::vector<CaseScores> out;
  std::map<std::string, std::size_t> index;
  // (case, is candidate) → repeat → run
  std::map<std::pair<std::string, bool>, std::map<int, RunScore>> runs;
  for (const ScoreRow& r : rows) {
    const bool is_cand = r.arm == cand_arm;
    if (!is_cand && r.arm != "baseline") continue;
    auto [it, inserted] = index.emplace(r.case_id, out.size());
    if (inserted) {
      out.push_back(CaseScores{r.case_id, r.held_out, {}, {}});
    } else if (out[it->second].held_out != r.held_out) {
      return InvalidArgumentError("case \"" + r.case_id + "\": rows disagree on held_out");
    }
    auto& arm_runs = runs[{r.case_id, is_cand}];
    if (!arm_runs.emplace(r.repeat, RunScore{r.pass, r.score, r.cost_usd}).second) {
      return InvalidArgumentError("case \"" + r.case_id + "\", arm " + r.arm + ": repeat " +
                                  std::to_string(r.repeat) + " recorded twice");
    }
  }
  for (CaseScores& c : out) {
    for (auto& [repeat, run] : runs[{c.case_id, false}]) c.baseline.push_back(run);
    for (auto& [repeat, run] : runs[{c.case_id, true}]) c.candidate.push_back(run);
  }
  return out;
}

Result<GateDecision> RecomputeDecision(const AuditRecord& record, const GateOptions& options) {
  if (!record.decision) {
    return FailedPreconditionError("attempt " + record.attempt_id + " has no decision");
  }
  MEND_ASSIGN_OR_RETURN(std::vector<CaseScores> cases,
                        CaseScoresFromRows(record.scores, record.decision->candidate));
  return Decide(cases, options);
}

}  // namespace mend::improve
