#pragma once

// Reading samples back from Prometheus text, for the metrics tests of the runtime.

#include <charconv>
#include <optional>
#include <string>
#include <string_view>

namespace mend::app {

// The value of the sample whose series (name and label set, exactly as rendered) is `series`, or
// nullopt when the text has no such line.
inline std::optional<double> SampleValue(std::string_view text, std::string_view series) {
  size_t pos = 0;
  while (pos < text.size()) {
    size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) end = text.size();
    std::string_view line = text.substr(pos, end - pos);
    if (line.size() > series.size() && line.starts_with(series) && line[series.size()] == ' ') {
      std::string value(line.substr(series.size() + 1));
      if (value == "+Inf" || value == "-Inf" || value == "NaN") return std::stod(value);
      double out = 0;
      auto [ptr, ec] = std::from_chars(value.data(), value.data() + value.size(), out);
      if (ec != std::errc() || ptr != value.data() + value.size()) return std::nullopt;
      return out;
    }
    pos = end + 1;
  }
  return std::nullopt;
}

}  // namespace mend::app
