// The `mend` executable: collects the process's arguments and environment and hands them to
// RunCli, the only code that interprets them.
#include <unistd.h>

#include <iostream>
#include <map>
#include <string>

#include "cli/cli.h"
#include "mend/base/subprocess.h"

extern char** environ;

int main(int argc, char** argv) {
  // The provider keys may be in this process's environment; the children it starts for agents
  // get a scrubbed copy, and this keeps them from reading the original in /proc/<ppid>/environ.
  // Best effort: without it mend still runs.
  (void)mend::MakeProcessUndumpable();
  std::map<std::string, std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string text = *entry;
    const size_t eq = text.find('=');
    if (eq != std::string::npos) env.emplace(text.substr(0, eq), text.substr(eq + 1));
  }
  const mend::cli::CliInput input{&std::cin, isatty(STDIN_FILENO) == 1};
  return mend::cli::RunCli(argc, argv, env, input, std::cout, std::cerr);
}
