#pragma once

// Helpers shared by the libFuzzer targets in fuzz/. A target returns normally on every input it
// rejects; it crashes (FUZZ_CHECK, a sanitizer report or an escaping exception) only when mend
// broke one of its own promises, so every crash is a bug to fix.

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

// Aborts with the failed condition and a note when `cond` is false; libFuzzer then keeps the
// input as a crash.
#define FUZZ_CHECK(cond, note)                                                              \
  do {                                                                                      \
    if (!(cond)) {                                                                          \
      std::fprintf(stderr, "%s:%d: FUZZ_CHECK(%s) failed: %s\n", __FILE__, __LINE__, #cond, \
                   std::string(note).c_str());                                              \
      std::abort();                                                                         \
    }                                                                                       \
  } while (false)

namespace mend::fuzz {

inline std::string_view AsText(const uint8_t* data, size_t size) {
  return std::string_view(reinterpret_cast<const char*>(data), size);
}

// Cuts `input` at NUL bytes into at most `max_parts` parts (the last part keeps any further NUL
// bytes). Targets that read several texts (a schema and a value, agent.toml and a skill) take
// them this way, so seeds are the texts joined by NUL.
inline std::vector<std::string_view> SplitParts(std::string_view input, size_t max_parts) {
  std::vector<std::string_view> parts;
  while (parts.size() + 1 < max_parts) {
    size_t nul = input.find('\0');
    if (nul == std::string_view::npos) break;
    parts.push_back(input.substr(0, nul));
    input.remove_prefix(nul + 1);
  }
  parts.push_back(input);
  while (parts.size() < max_parts) parts.emplace_back();
  return parts;
}

}  // namespace mend::fuzz
