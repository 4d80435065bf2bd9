#include "bench/lessonrecall_cli.h"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/json.h"
#include "mend/memory/chatcli_format.h"

extern char** environ;

namespace mend::lessonrecall {
namespace {

struct Output {
  int exit_code = -1;  // -1: killed by a signal
  std::string out;
  std::string err;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs `argv` with `env` as its whole environment, stdout and stderr going to files in `dir`
// (so no pipe can fill up), and waits for it.
Result<Output> Run(const std::vector<std::string>& argv, const std::vector<std::string>& env,
                   const std::string& dir) {
  const std::string out_path = dir + "/stdout";
  const std::string err_path = dir + "/stderr";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, STDIN_FILENO, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, STDOUT_FILENO, out_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, STDERR_FILENO, err_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::vector<char*> args;
  for (const std::string& a : argv) args.push_back(const_cast<char*>(a.c_str()));
  args.push_back(nullptr);
  std::vector<char*> vars;
  for (const std::string& v : env) vars.push_back(const_cast<char*>(v.c_str()));
  vars.push_back(nullptr);
  pid_t pid = -1;
  const int spawned =
      posix_spawn(&pid, argv[0].c_str(), &actions, nullptr, args.data(), vars.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return ErrnoToStatus(spawned, "spawn " + argv[0]);
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR) return ErrnoToStatus(errno, "waitpid");
  }
  Output output;
  output.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  output.out = ReadFile(out_path);
  output.err = ReadFile(err_path);
  return output;
}

class Mend {
 public:
  Mend(std::string binary, std::string home) : binary_(std::move(binary)), home_(std::move(home)) {
    // Only PATH of the caller's environment: MEND_* variables or a config file would change the
    // options the CLI runs with, and the in-process column uses the defaults.
    const char* path = std::getenv("PATH");
    env_ = {"PATH=" + std::string(path != nullptr ? path : "/usr/bin:/bin"), "HOME=" + home_,
            "LANG=C.UTF-8"};
  }

  // `mend --home HOME --json args...`, parsed; kInternal naming the command when it fails.
  Result<nlohmann::json> Json(const std::vector<std::string>& args) {
    std::vector<std::string> argv = {binary_, "--home", home_ + "/home", "--json"};
    argv.insert(argv.end(), args.begin(), args.end());
    MEND_ASSIGN_OR_RETURN(Output output, Run(argv, env_, home_));
    if (output.exit_code != 0) {
      return InternalError("mend " + args[0] + " " + args[1] + " exited with " +
                           std::to_string(output.exit_code) + ": " + output.err);
    }
    Result<nlohmann::json> doc = ParseJson(output.out);
    if (!doc.ok()) return doc.status().Annotate("mend " + args[0] + " " + args[1] + " output");
    return doc;
  }

 private:
  std::string binary_;
  std::string home_;
  std::vector<std::string> env_;
};

Result<std::vector<std::string>> ResultIds(const nlohmann::json& doc, const char* list) {
  if (!doc.is_object() || !doc.contains(list) || !(*doc.find(list)).is_array()) {
    return InternalError(std::string("no \"") + list + "\" array in " + doc.dump());
  }
  std::vector<std::string> ids;
  for (const nlohmann::json& item : doc[list]) {
    MEND_ASSIGN_OR_RETURN(std::string id, GetString(item, "id"));
    ids.push_back(std::move(id));
  }
  return ids;
}

}  // namespace

Result<CliResult> RunCli(const Split& split, const std::string& mend_binary,
                         const std::string& scratch_dir) {
  SystemClock clock;
  const std::string file = scratch_dir + "/memory_index.json";
  {
    std::ofstream out(file, std::ios::binary);
    out << memory::ExportChatcliJson(ToFacts(split, LoadMode::kWithProvenance, clock.Now()));
    if (!out) return InternalError("cannot write " + file);
  }
  Mend mend(mend_binary, scratch_dir);
  MEND_ASSIGN_OR_RETURN(nlohmann::json imported, mend.Json({"memory", "import", file}));
  const size_t expected = split.lessons.size() + split.distractors.size();
  if (imported.value("imported", size_t{0}) != expected) {
    return InternalError("mend memory import: " + imported.dump() + ", expected " +
                         std::to_string(expected) + " facts");
  }
  CliResult result;
  const auto start = std::chrono::steady_clock::now();
  for (const Query& q : split.queries) {
    // "--" ends the options, so a query that starts with a dash is still the query.
    MEND_ASSIGN_OR_RETURN(nlohmann::json search,
                          mend.Json({"memory", "search", "-k", "10", "--", q.text}));
    MEND_ASSIGN_OR_RETURN(nlohmann::json recall, mend.Json({"memory", "recall", "--", q.text}));
    Prediction& p = result.predictions[q.id];
    MEND_ASSIGN_OR_RETURN(p.ranked, ResultIds(search, "results"));
    MEND_ASSIGN_OR_RETURN(std::vector<std::string> injected, ResultIds(recall, "facts"));
    p.injected = !injected.empty();
  }
  const std::chrono::duration<double, std::milli> elapsed =
      std::chrono::steady_clock::now() - start;
  result.ms_per_query =
      split.queries.empty() ? 0 : elapsed.count() / static_cast<double>(split.queries.size());
  return result;
}

}  // namespace mend::lessonrecall
