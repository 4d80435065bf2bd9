// Content negotiation and gzip of the OTLP receiver (otlp_receiver.h).
#include "server/otlp_receiver.h"

#include <zlib.h>

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

Result<std::string> Gunzip(std::string_view body, size_t max_bytes) {
  z_stream stream{};
  // 16 + MAX_WBITS: a gzip header and trailer around the deflate data.
  if (inflateInit2(&stream, 16 + MAX_WBITS) != Z_OK) return InternalError("inflateInit2 failed");
  stream.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(body.data()));
  stream.avail_in = static_cast<uInt>(body.size());
  std::string out;
  char chunk[64 * 1024];
  int rc = Z_OK;
  while (rc != Z_STREAM_END) {
    stream.next_out = reinterpret_cast<Bytef*>(chunk);
    stream.avail_out = sizeof(chunk);
    rc = inflate(&stream, Z_NO_FLUSH);
    if (rc != Z_OK && rc != Z_STREAM_END) {
      inflateEnd(&stream);
      return InvalidArgumentError("the gzip body does not inflate (" +
                                  std::string(stream.msg != nullptr ? stream.msg : "truncated") +
                                  ")");
    }
    out.append(chunk, sizeof(chunk) - stream.avail_out);
    if (out.size() > max_bytes) {
      inflateEnd(&stream);
      return ResourceExhaustedError("the gzip body inflates past " + std::to_string(max_bytes) +
                                    " bytes");
    }
    if (rc == Z_OK && stream.avail_in == 0 && stream.avail_out != 0) {
      inflateEnd(&stream);
      return InvalidArgumentError("the gzip body is truncated");
    }
  }
  inflateEnd(&stream);
  return out;
}

}  // namespace mend::server
