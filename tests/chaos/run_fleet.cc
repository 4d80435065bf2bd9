#include "tests/chaos/run_fleet.h"

#include <sys/stat.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <system_error>

#include "tests/chaos/chaos_util.h"
#include "tests/support/made_up_words.h"
#include "tests/support/mend_command.h"

namespace mend::chaos {
namespace {

std::string Marker(const RunPlan& plan, int turn) {
  return "mark-" + plan.id + "-" + std::to_string(turn);
}
std::string FinalText(const RunPlan& plan) { return "finished " + plan.id; }
std::string Remedy(int i) { return "Apply " + testing::MadeUpWords(i, 6) + " before retrying"; }

nlohmann::json ToolCall(const RunPlan& plan, int turn) {
  return {{"tool_calls",
           {{{"id", "call-" + std::to_string(turn)},
             {"name", "effect"},
             {"arguments", {{"marker", Marker(plan, turn)}}}}}}};
}

std::string Seconds(int ms) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%d.%03d", ms / 1000, ms % 1000);
  return buf;
}

Status MakeDir(const std::string& path) {
  std::error_code error;
  std::filesystem::create_directories(path, error);
  if (error) return InternalError(path + ": " + error.message());
  ::chmod(path.c_str(), 0700);
  return OkStatus();
}

}  // namespace

int RunPlan::FaultCount() const {
  int n = 0;
  for (const auto& turn : faults) n += static_cast<int>(turn.size());
  return n;
}

nlohmann::json RandomFault(std::mt19937& rng, bool allow_permanent, bool* permanent) {
  *permanent = false;
  const int kinds = allow_permanent ? 11 : 9;
  switch (std::uniform_int_distribution<int>(0, kinds - 1)(rng)) {
    case 0:
      return {{"status", 429}, {"retry_after_seconds", 1}, {"error_message", "slow down"}};
    case 1:
      return {{"status", 503}, {"error_message", "overloaded"}};
    case 2:
      return {{"status", 500}, {"error_message", "internal"}};
    case 3:
      return {{"status", 502}, {"fault", "html_error_page"}};
    case 4:
      return {{"text", "cut short by the network"}, {"fault", "truncated_body"}};
    case 5:
      return {{"fault", "drop_connection"}};
    case 6:
      return {{"fault", "malformed_json"}};
    case 7:
      return {{"fault", "empty_body"}};
    case 8:
      // provider.timeout is 1 s in ChaosEnv: this answer comes too late.
      return {{"text", "too late"}, {"latency_ms", 2500}};
    case 9:
      *permanent = true;
      return {{"status", 400}, {"error_message", "the request was malformed"}};
    default:
      *permanent = true;
      return {{"status", 401}, {"error_message", "invalid api key"}};
  }
}

std::vector<RunPlan> PlansWithOccasionalFault(std::mt19937& rng, const std::string& prefix,
                                              int count, double fault_share, int64_t* faults) {
  std::vector<RunPlan> plans;
  for (int i = 0; i < count; ++i) {
    RunPlan plan;
    plan.id = Tag(prefix, i);
    if (std::bernoulli_distribution(fault_share)(rng)) {
      plan.faults[1].push_back(RandomFault(rng, /*allow_permanent=*/true, &plan.permanent));
    }
    *faults += plan.FaultCount();
    plans.push_back(std::move(plan));
  }
  return plans;
}

Result<RunFleet> RunFleet::Create(const std::string& dir, std::vector<RunPlan> plans,
                                  int latency_ms, int tool_ms) {
  RunFleet fleet;
  fleet.dir_ = dir;
  fleet.agent_dir_ = dir + "/agent";
  fleet.routes_path_ = dir + "/routes.json";
  fleet.plans_ = std::move(plans);
  MEND_RETURN_IF_ERROR(MakeDir(fleet.agent_dir_ + "/workspace"));
  MEND_RETURN_IF_ERROR(MakeDir(fleet.agent_dir_ + "/tools"));
  MEND_RETURN_IF_ERROR(WriteText(fleet.agent_dir_ + "/agent.toml",
                                 "name = \"chaos\"\n"
                                 "tools = [\"effect\"]\n"
                                 "workspace = \"workspace\"\n"));
  MEND_RETURN_IF_ERROR(WriteText(fleet.agent_dir_ + "/instructions.md",
                                 "Carry out the job with the effect tool.\n"));
  // The marker is appended between two pauses, so a kill can land before, during or after it.
  const std::string half = Seconds(tool_ms / 2);
  const std::string script = "m=$(sed -n 's/.*\"marker\" *: *\"\\([^\"]*\\)\".*/\\1/p'); sleep " +
                             half + "; echo \"$m\" >> effects.log; sleep " + half +
                             "; echo \"recorded $m\"";
  const nlohmann::json command = {"/bin/sh", "-c", script};
  MEND_RETURN_IF_ERROR(WriteText(
      fleet.agent_dir_ + "/tools/effect.toml",
      "name = \"effect\"\n"
      "description = \"Records a marker in the job log.\"\n"
      "command = " +
          command.dump() +
          "\n"
          "requires_approval = false\n"
          "parameters = '{\"type\":\"object\",\"properties\":{\"marker\":{\"type\":\"string\"}},"
          "\"required\":[\"marker\"]}'\n"));

  // Routes, most specific first: the lesson request, then each turn from the last back, each
  // matched by the previous tool call's result.
  nlohmann::json routes = nlohmann::json::array();
  for (size_t i = 0; i < fleet.plans_.size(); ++i) {
    const RunPlan& plan = fleet.plans_[i];
    const int n = static_cast<int>(i);
    const std::string lesson = "<situation>Carrying out job " + plan.id + " " +
                               testing::MadeUpWords(n + 100, 5) + "</situation>\n<mistake>" +
                               testing::MadeUpWords(n + 200, 6) + "</mistake>\n<correction>" +
                               Remedy(n) + "</correction>\n<tags>" + plan.id + "</tags>";
    routes.push_back({{"name", "lesson-" + plan.id},
                      {"contains", {"<situation>when this lesson applies", plan.id}},
                      {"responses", {{{"text", lesson}}}},
                      {"cycle", false}});
    for (int turn = kTurns; turn >= 1; --turn) {
      nlohmann::json good =
          turn == kTurns ? nlohmann::json{{"text", FinalText(plan)}} : ToolCall(plan, turn);
      good["latency_ms"] = latency_ms;
      nlohmann::json responses = nlohmann::json::array();
      for (const nlohmann::json& fault : plan.faults[turn - 1]) responses.push_back(fault);
      responses.push_back(good);
      nlohmann::json contains = {"Carry out job " + plan.id};
      if (turn > 1) contains.push_back("recorded " + Marker(plan, turn - 1));
      routes.push_back({{"name", plan.id + "-turn-" + std::to_string(turn)},
                        {"contains", contains},
                        {"responses", responses},
                        {"cycle", false}});
    }
  }
  MEND_RETURN_IF_ERROR(WriteText(fleet.routes_path_, routes.dump(1)));
  return fleet;
}

std::vector<std::string> RunFleet::Env(const std::string& home_root, const std::string& base_url,
                                       const std::vector<std::string>& extra) const {
  std::vector<std::string> env = testing::CleanEnv(
      home_root, {"MEND_PROVIDER=openai", "MEND_MODEL=chaos-model", "MEND_BASE_URL=" + base_url,
                  "MEND_API_KEY=sk-chaos-KEY-4141", "MEND_TIMEOUT=1s", "MEND_CONNECT_TIMEOUT=1s",
                  "MEND_RECOVER_INTERVAL=100ms"});
  env.insert(env.end(), extra.begin(), extra.end());
  return env;
}

Status RunFleet::Verify(const ChaosOptions& options, const std::string& home,
                        const std::vector<std::string>& env, int64_t kills,
                        const std::vector<std::string>& event_logs,
                        const std::set<std::string>& seen_failed, ChaosRow* row) const {
  // Runs whose failure of their task was recorded (each line is one write(2), so a kill -9 keeps
  // it): those are owed a lesson. Provider faults fail runs too, but teach nothing.
  std::set<std::string> failed_runs = seen_failed;
  for (const std::string& path : event_logs) {
    auto log = ReadText(path);
    std::istringstream in(log.ok() ? *log : "");
    for (std::string line; std::getline(in, line);) {
      const nlohmann::json event = nlohmann::json::parse(line, nullptr, false);
      if (event.is_object() && event.value("type", "") == "run.failed" &&
          event.value("class", "") == "permanent") {
        failed_runs.insert(event.value("run", ""));
      }
    }
  }
  // Tool calls that ran, by marker.
  std::map<std::string, int> effects;
  {
    auto log = ReadText(agent_dir_ + "/workspace/effects.log");
    std::istringstream in(log.ok() ? *log : "");
    for (std::string line; std::getline(in, line);) ++effects[line];
  }
  int64_t reruns = 0;
  for (const RunPlan& plan : plans_) {
    auto shown = RunMend(options, home, env, {"show", plan.id});
    if (!shown.ok()) return shown.status();
    const nlohmann::json& run = shown->json;
    if (!run.is_object() || !run.contains("status")) {
      ++row->lost;
      row->problems.push_back(plan.id + ": not found (" + shown->output.err + ")");
      continue;
    }
    const std::string status = run.value("status", "");
    if (status != "completed") {
      ++row->lost;
      row->problems.push_back(plan.id + ": ended " + status + " " + run["error"].dump());
    } else if (run.value("output", "") != FinalText(plan)) {
      ++row->lost;
      row->problems.push_back(plan.id + ": completed with output " + run["output"].dump());
    } else {
      ++row->runs_completed;
    }
    if (status == "completed" && run.value("steps", -1) != kTurns) {
      ++row->duplicated;
      row->problems.push_back(plan.id + ": " + std::to_string(run.value("steps", -1)) +
                              " model turns counted instead of " + std::to_string(kTurns));
    }
    // Each tool call once in the transcript, and its effect at least once.
    std::map<std::string, int> results;
    if (run.contains("transcript") && run["transcript"].is_array()) {
      for (const nlohmann::json& m : run["transcript"]) {
        if (m.value("role", "") == "tool") ++results[m.value("tool_call_id", "")];
      }
    }
    int64_t run_reruns = 0;
    for (int turn = 1; turn < kTurns; ++turn) {
      const std::string call = "call-" + std::to_string(turn);
      if (status == "completed" && results[call] != 1) {
        ++row->duplicated;
        row->problems.push_back(plan.id + ": tool call " + call + " has " +
                                std::to_string(results[call]) + " results in the transcript");
      }
      const int ran = effects[Marker(plan, turn)];
      if (status == "completed" && ran == 0) {
        ++row->lost;
        row->problems.push_back(plan.id + ": tool call " + call + " never ran");
      }
      if (ran > 1) run_reruns += ran - 1;
    }
    // A run makes one tool call at a time, so each kill catches at most one of its calls in flight
    // (a `mend serve` killed with several runs under way catches one of each).
    if (run_reruns > kills) {
      row->duplicated += run_reruns - kills;
      row->problems.push_back(plan.id + ": " + std::to_string(run_reruns) +
                              " tool calls ran again, but only " + std::to_string(kills) +
                              " kills could have caught one in flight");
    }
    reruns += run_reruns;
  }

  // Lessons: exactly one fact for each run whose task failed at least once, at most one for a run
  // that met a fault, none for the others.
  std::vector<std::string> needles;
  for (size_t i = 0; i < plans_.size(); ++i) needles.push_back(Remedy(static_cast<int>(i)));
  int64_t total = 0;
  auto counts = CountFacts(options, home, env, needles, &total);
  if (!counts.ok()) return counts.status();
  int64_t matched = 0;
  for (size_t i = 0; i < plans_.size(); ++i) {
    const int n = (*counts)[i];
    matched += n;
    const bool failed = failed_runs.count(plans_[i].id) != 0;
    const bool may_have_failed = failed || plans_[i].FaultCount() > 0;
    if (n > 0) ++row->lessons_stored;
    if (failed && n == 0) {
      ++row->lost;
      row->problems.push_back(plans_[i].id + ": failed but left no lesson");
    } else if (n > 1 || (!may_have_failed && n > 0)) {
      row->duplicated += may_have_failed ? n - 1 : n;
      row->problems.push_back(plans_[i].id + ": " + std::to_string(n) + " lesson facts" +
                              (may_have_failed ? "" : " for a run that never failed"));
    }
  }
  if (total != matched) {
    row->duplicated += total - matched;
    row->problems.push_back(std::to_string(total - matched) + " facts that are no run's lesson");
  }
  auto reflect = RunMend(options, home, env, {"reflect"});
  if (!reflect.ok()) return reflect.status();
  const int64_t dead = reflect->json.is_object() ? reflect->json.value("dlq_size", -1) : -1;
  const int64_t waiting = reflect->json.is_object() ? reflect->json.value("wal_records", -1) : -1;
  if (dead != 0 || waiting > 0) {
    row->problems.push_back("lesson queue not empty at the end: " + reflect->output.out);
    if (dead > 0) row->lost += dead;
  }
  if (reruns > 0) {
    row->detail += " (" + std::to_string(reruns) + " tool calls in flight at a kill ran again)";
  }
  return OkStatus();
}

Result<ServedFleet> StartFleet(const ChaosOptions& options, std::vector<RunPlan> plans,
                               int latency_ms, int tool_ms,
                               const std::vector<std::string>& extra_env) {
  MEND_ASSIGN_OR_RETURN(RunFleet fleet,
                        RunFleet::Create(options.work_dir, std::move(plans), latency_ms, tool_ms));
  MEND_ASSIGN_OR_RETURN(testing::FakeServerProcess fake,
                        StartFake(options, {"--routes", fleet.routes_path()}));
  std::vector<std::string> env =
      fleet.Env(options.work_dir, testing::LoopbackUrl(fake.port), extra_env);
  return ServedFleet{std::move(fleet), std::move(fake), std::move(env)};
}

}  // namespace mend::chaos
