// mend_chaos: runs the chaos scenarios and prints the table of faults injected, runs completed,
// lessons stored, and work lost or duplicated (docs/reliability.md, "Chaos"). Exit status 0 when
// every scenario ran and nothing was lost or duplicated, 1 otherwise, 2 for a usage error.
#include <stdlib.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <functional>
#include <iostream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <system_error>
#include <vector>

#include "tests/chaos/chaos.h"

namespace mend::chaos {
namespace {

struct Scenario {
  const char* name;
  const char* what;
  std::function<Result<ChaosRow>(const ChaosOptions&)> run;
};

const std::vector<Scenario>& Scenarios() {
  static const std::vector<Scenario> kScenarios = {
      {"provider", "429, 503, 500, timeouts, truncated bodies, dropped connections, 400 and 401",
       RunProviderChaos},
      {"kill-run", "kill -9 of `mend run` and `mend recover` at random moments", RunKillChaos},
      {"kill-serve", "kill -9 of `mend serve` at random moments while it runs agents",
       RunServeKillChaos},
      {"power-cut", "power cut of the lesson WAL and the SQLite checkpoint store",
       RunPowerCutChaos},
      {"proxy", "`mend proxy` over an upstream that fails, drops, stalls and cuts streams",
       RunProxyChaos},
      {"mcp", "an MCP server that crashes mid-call or never answers", RunMcpChaos},
      {"postgres", "PostgreSQL restarted under three replicas that are killed at random",
       RunPostgresChaos},
  };
  return kScenarios;
}

std::set<std::string> SplitNames(const std::string& list) {
  std::set<std::string> names;
  std::stringstream in(list);
  for (std::string name; std::getline(in, name, ',');) {
    if (!name.empty()) names.insert(name);
  }
  return names;
}

std::string Env(const char* name) {
  const char* value = std::getenv(name);
  return value == nullptr ? "" : value;
}

void PrintTable(const std::vector<ChaosRow>& rows) {
  std::printf("%-11s %8s %15s %15s %6s %11s\n", "scenario", "faults", "runs completed",
              "lessons stored", "lost", "duplicated");
  ChaosRow total;
  total.scenario = "total";
  for (const ChaosRow& row : rows) {
    std::printf("%-11s %8lld %15lld %15lld %6lld %11lld\n", row.scenario.c_str(),
                static_cast<long long>(row.faults), static_cast<long long>(row.runs_completed),
                static_cast<long long>(row.lessons_stored), static_cast<long long>(row.lost),
                static_cast<long long>(row.duplicated));
    total.faults += row.faults;
    total.runs_completed += row.runs_completed;
    total.lessons_stored += row.lessons_stored;
    total.lost += row.lost;
    total.duplicated += row.duplicated;
  }
  std::printf("%-11s %8lld %15lld %15lld %6lld %11lld\n", total.scenario.c_str(),
              static_cast<long long>(total.faults), static_cast<long long>(total.runs_completed),
              static_cast<long long>(total.lessons_stored), static_cast<long long>(total.lost),
              static_cast<long long>(total.duplicated));
  std::printf("\n");
  for (const ChaosRow& row : rows) {
    std::printf("%s: %s\n", row.scenario.c_str(), row.detail.c_str());
    for (const std::string& problem : row.problems) {
      std::printf("  PROBLEM: %s\n", problem.c_str());
    }
  }
}

nlohmann::json RowJson(const ChaosRow& row) {
  return {{"scenario", row.scenario},
          {"faults", row.faults},
          {"runs_completed", row.runs_completed},
          {"lessons_stored", row.lessons_stored},
          {"lost", row.lost},
          {"duplicated", row.duplicated},
          {"detail", row.detail},
          {"problems", row.problems}};
}

int Main(int argc, char** argv) {
  CLI::App app{"Injects faults into real mend processes and a disk image; prints what survived."};
  ChaosOptions options;
  options.mend_binary = MEND_BINARY;
  options.fake_server_binary = FAKE_LLM_SERVER_BINARY;
  options.postgres_url = Env("MEND_TEST_POSTGRES_URL");
  options.postgres_restart = Env("MEND_TEST_POSTGRES_RESTART");
  std::string only;
  std::string skip;
  std::string json_path;
  bool keep = false;
  app.add_option("--seed", options.seed, "seed of every random choice (default 1)");
  app.add_option("--scale", options.scale,
                 "size of each scenario: 1 is the short configuration CI runs (default 1)")
      ->check(CLI::Range(1, 100));
  app.add_option("--only", only, "comma-separated scenarios to run (default: all)");
  app.add_option("--skip", skip, "comma-separated scenarios to leave out");
  app.add_option("--json", json_path, "also write the rows as JSON to this file");
  app.add_option("--mend", options.mend_binary, "the mend executable");
  app.add_option("--fake-server", options.fake_server_binary, "the fake_llm_server executable");
  app.add_flag("--keep", keep, "keep the work directory (its path is printed)");
  app.add_flag("-v,--verbose", options.verbose, "progress on stderr");
  std::string names;
  for (const Scenario& s : Scenarios()) {
    names += std::string("\n  ") + s.name + ": " + s.what;
  }
  app.footer("Scenarios:" + names +
             "\nThe postgres scenario needs MEND_TEST_POSTGRES_URL (scripts/with_postgres sets it, "
             "and MEND_TEST_POSTGRES_RESTART to restart the server); without it, it is skipped.");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    return app.exit(e);
  }
  const std::set<std::string> wanted = SplitNames(only);
  const std::set<std::string> unwanted = SplitNames(skip);
  for (const std::set<std::string>* set : {&wanted, &unwanted}) {
    for (const std::string& name : *set) {
      bool known = false;
      for (const Scenario& s : Scenarios()) known = known || name == s.name;
      if (!known) {
        std::cerr << "mend_chaos: unknown scenario '" << name << "' (see --help)\n";
        return 2;
      }
    }
  }

  const char* tmp = std::getenv("TMPDIR");
  std::string pattern =
      std::string(tmp != nullptr && *tmp != '\0' ? tmp : "/tmp") + "/mend-chaos.XXXXXX";
  if (::mkdtemp(pattern.data()) == nullptr) {
    std::perror("mend_chaos: mkdtemp");
    return 1;
  }
  const std::string root = pattern;

  std::vector<ChaosRow> rows;
  bool failed = false;
  for (const Scenario& s : Scenarios()) {
    if (!wanted.empty() && wanted.count(s.name) == 0) continue;
    if (unwanted.count(s.name) != 0) continue;
    if (std::string(s.name) == "postgres" && options.postgres_url.empty()) {
      std::printf(
          "SKIPPED: MEND_TEST_POSTGRES_URL is not set; the postgres scenario needs a "
          "server (run it under scripts/with_postgres)\n");
      continue;
    }
    ChaosOptions scenario_options = options;
    scenario_options.work_dir = root + "/" + s.name;
    std::error_code error;
    std::filesystem::create_directories(scenario_options.work_dir, error);
    if (error) {
      std::cerr << "mend_chaos: " << scenario_options.work_dir << ": " << error.message() << "\n";
      return 1;
    }
    std::filesystem::permissions(scenario_options.work_dir, std::filesystem::perms::owner_all,
                                 error);
    if (options.verbose) std::cerr << "chaos: scenario " << s.name << "\n";
    auto row = s.run(scenario_options);
    if (!row.ok()) {
      std::cerr << "mend_chaos: scenario " << s.name << " could not run: " << row.status() << "\n";
      failed = true;
      continue;
    }
    row->scenario = s.name;
    if (row->lost != 0 || row->duplicated != 0 || !row->problems.empty()) failed = true;
    rows.push_back(std::move(*row));
  }
  if (!rows.empty()) PrintTable(rows);
  if (!json_path.empty()) {
    nlohmann::json out = nlohmann::json::array();
    for (const ChaosRow& row : rows) out.push_back(RowJson(row));
    std::FILE* file = std::fopen(json_path.c_str(), "w");
    if (file == nullptr) {
      std::perror(("mend_chaos: " + json_path).c_str());
      failed = true;
    } else {
      const std::string text = out.dump(2) + "\n";
      std::fwrite(text.data(), 1, text.size(), file);
      std::fclose(file);
    }
  }
  if (keep) {
    std::printf("work directory kept: %s\n", root.c_str());
  } else {
    std::error_code error;
    std::filesystem::remove_all(root, error);
  }
  std::printf("%s\n", failed ? "FAILED" : "OK: nothing lost, nothing duplicated");
  return failed ? 1 : 0;
}

}  // namespace
}  // namespace mend::chaos

int main(int argc, char** argv) { return mend::chaos::Main(argc, argv); }
