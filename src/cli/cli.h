#pragma once

#include <iosfwd>
#include <map>
#include <string>

#include "mend/base/file_system.h"

namespace mend::cli {

// Where commands read their input: the task of `mend run` given no TASK, the lines of `mend chat`.
struct CliInput {
  std::istream* in = nullptr;  // not owned; null: no input at all
  // Input typed at a terminal: `mend run` then does not wait for a task on it.
  bool is_terminal = false;
};

// Runs the `mend` command line (docs/cli.md) in-process: parses `argv`, runs the command and
// returns the process exit code: 0 on success, 1 on a runtime failure, 2 on a usage error
// (unknown command, bad flag, invalid configuration). Normal output goes to `out`; errors go to
// `err` as one line "mend: <message>", and with --json also as {"error":{...}} on `out`.
// `env` is the process environment (the only place mend reads it from); `fs` is where the
// configuration and state are read. Never throws.
int RunCli(int argc, char** argv, const std::map<std::string, std::string>& env, std::ostream& out,
           std::ostream& err, FileSystem& fs);

// The same, reading input from `input`.
int RunCli(int argc, char** argv, const std::map<std::string, std::string>& env, CliInput input,
           std::ostream& out, std::ostream& err, FileSystem& fs);

// The same on the real filesystem.
int RunCli(int argc, char** argv, const std::map<std::string, std::string>& env, std::ostream& out,
           std::ostream& err);
int RunCli(int argc, char** argv, const std::map<std::string, std::string>& env, CliInput input,
           std::ostream& out, std::ostream& err);

}  // namespace mend::cli
