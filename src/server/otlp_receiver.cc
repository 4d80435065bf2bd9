// Content negotiation of the OTLP receiver (otlp_receiver.h).
#include "server/otlp_receiver.h"

#include <algorithm>
#include <cctype>

namespace mend::server {

Result<obs::OtlpProtocol> OtlpProtocolOf(std::string_view content_type) {
  std::string type(content_type.substr(0, content_type.find(';')));
  while (!type.empty() && std::isspace(static_cast<unsigned char>(type.back()))) type.pop_back();
  std::transform(type.begin(), type.end(), type.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  if (type == "application/x-protobuf" || type == "application/protobuf") {
    return obs::OtlpProtocol::kHttpProtobuf;
  }
  if (type == "application/json") return obs::OtlpProtocol::kHttpJson;
  return InvalidArgumentError(
      "OTLP requests are application/x-protobuf or application/json, not \"" +
      std::string(content_type) + "\"");
}

}  // namespace mend::server
