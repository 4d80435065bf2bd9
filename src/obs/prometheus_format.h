#pragma once

#include <string>
#include <string_view>

namespace mend::obs {

// Pieces of the Prometheus text exposition format 0.0.4, shared by the renderer and its tests.

// A sample value that Prometheus parses back to the same double: integral values below 2^53 in
// plain digits ("3", "-12"), others in the shortest round-trip form ("0.25", "1e+300"), and the
// specials as "NaN", "+Inf" and "-Inf".
std::string FormatPrometheusValue(double value);

// HELP text: backslash → "\\", newline → "\n".
std::string EscapePrometheusHelp(std::string_view help);

// A label value: backslash → "\\", double quote → "\"", newline → "\n".
std::string EscapePrometheusLabelValue(std::string_view value);

// [a-zA-Z_:][a-zA-Z0-9_:]*
bool IsValidMetricName(std::string_view name);

// [a-zA-Z_][a-zA-Z0-9_]* without the reserved "__" prefix.
bool IsValidLabelName(std::string_view name);

}  // namespace mend::obs
