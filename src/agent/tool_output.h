#pragma once

#include <cstddef>
#include <string>
#include <string_view>

namespace mend::agent {

// Output shaping shared by the registry and the tools that capture process output.

// `content` made valid UTF-8 and, when longer than `max_bytes`, cut at a character boundary with
// the line "[output truncated: N of M bytes shown]" appended. `total_bytes` is the size of the
// full output when `content` is already a prefix of it (a capped capture); 0 means content.size().
std::string CapOutput(std::string_view content, std::size_t max_bytes, std::size_t total_bytes = 0);

// A bounded, valid UTF-8, JSON-quoted excerpt of untrusted text for use inside a message.
std::string QuoteExcerpt(std::string_view text, std::size_t max_bytes);

// "30s", "0.3s", "1.25s": a duration in seconds as a person writes it.
std::string FormatSeconds(long long milliseconds);

}  // namespace mend::agent
