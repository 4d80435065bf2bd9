#include "proxy/api_shape.h"

namespace mend::proxy {

std::string_view ApiShapeName(ApiShape shape) {
  switch (shape) {
    case ApiShape::kChatCompletions:
      return "chat";
    case ApiShape::kMessages:
      return "messages";
    case ApiShape::kResponses:
      return "responses";
  }
  return "chat";
}

}  // namespace mend::proxy
