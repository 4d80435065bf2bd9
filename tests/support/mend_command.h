#pragma once

// How the end-to-end tests and the chaos scenarios start the real `mend` executable: its argv, the
// clean environment every child gets, the loopback URL of a fake LLM server, mend's error-line
// contract, and the look for a secret in the files of a home. No GoogleTest here, so the chaos
// driver (not a gtest binary) shares it.

#include <string>
#include <vector>

namespace mend::testing {

// "PATH=/usr/bin:/bin", "HOME=`user_home`", then `extra` ("NAME=value" entries). Nothing of the
// test runner's own environment is passed on, so a developer's real keys or MEND_* settings never
// reach a test's child.
std::vector<std::string> CleanEnv(const std::string& user_home,
                                  const std::vector<std::string>& extra = {});

// `mend_binary --home home args...`.
std::vector<std::string> MendArgv(const std::string& mend_binary, const std::string& home,
                                  const std::vector<std::string>& args);

// `argv` run by /bin/sh with its stdout and stderr appended to the file `log`, so a long-lived
// child never blocks on a full pipe.
std::vector<std::string> OutputToFile(const std::string& log, const std::vector<std::string>& argv);

// "http://127.0.0.1:<port>".
std::string LoopbackUrl(int port);

// True when `err` holds mend's error contract for a failing command: exactly one line, starting
// with "mend: " and ending with '\n'.
bool IsOneErrorLine(const std::string& err);

// The regular files below `root` (recursively; nothing when it does not exist) whose bytes contain
// `needle`, as paths. Unreadable files are listed too: a file the test cannot read cannot be shown
// to be free of it.
std::vector<std::string> FilesContaining(const std::string& root, const std::string& needle);

}  // namespace mend::testing
