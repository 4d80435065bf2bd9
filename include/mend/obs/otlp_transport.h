#pragma once

// OtlpTransport, the seam between the OTLP exporter and the network (one HTTP POST), and
// NewCurlOtlpTransport, its libcurl implementation; tests use a scripted fake.

#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "mend/base/clock.h"
#include "mend/base/result.h"

namespace mend::obs {

/// A request header as a name and a value.
using HttpHeader = std::pair<std::string, std::string>;

/// An HTTP answer of any status: a non-2xx status is not an error at this layer.
struct HttpReply {
  int status = 0;           ///< the HTTP status
  std::string retry_after;  ///< the raw Retry-After header value, "" when absent
  std::string body;         ///< at most the first 4 KiB
};

/// Sends one OTLP/HTTP request. The seam between the exporter's batching and retry policy and the
/// network: the exporter's tests use a scripted fake, production uses NewCurlOtlpTransport().
class OtlpTransport {
 public:
  virtual ~OtlpTransport() = default;

  /// POSTs `body` to `url` with `headers` and `content_type`, giving up after `timeout` (connect
  /// included). Errors: kUnavailable for a connection that failed (refused, reset, DNS, empty
  /// reply), kDeadlineExceeded for a timeout, kInvalidArgument for a malformed URL. Messages never
  /// contain header values. Called from one thread at a time.
  virtual Result<HttpReply> Post(const std::string& url, const std::vector<HttpHeader>& headers,
                                 const std::string& body, std::string_view content_type,
                                 Duration timeout) = 0;

  /// Aborts the request in flight, if any, and makes every later Post fail with kCancelled at once.
  /// Called from another thread than Post (shutdown cutting a hanging request short).
  virtual void Cancel() = 0;
};

/// The libcurl transport. It keeps one connection open between requests (keep-alive).
std::unique_ptr<OtlpTransport> NewCurlOtlpTransport();

}  // namespace mend::obs
