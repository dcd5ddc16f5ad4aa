#include "http/api_toolkit.h"

namespace tb {
namespace {

int StatusOfCode(std::string_view code) {
  if (code == "RESOURCE_DOES_NOT_EXIST" || code == "ENDPOINT_NOT_FOUND") return 404;
  if (code == "INTERNAL_ERROR") return 500;
  if (code == "PERMISSION_DENIED") return 403;
  return 400;
}

}  // namespace

ApiError::ApiError(std::string c, std::string m)
    : status(StatusOfCode(c)), code(std::move(c)), message(std::move(m)) {}

ApiError::ApiError(int s, std::string c, std::string m)
    : status(s), code(std::move(c)), message(std::move(m)) {}

ApiError InvalidParameter(std::string message) { return {"INVALID_PARAMETER_VALUE", std::move(message)}; }

ApiError ResourceNotFound(std::string message) { return {"RESOURCE_DOES_NOT_EXIST", std::move(message)}; }

ApiError FromStatus(const Status& s) {
  switch (s.code()) {
    case Status::Code::kInvalidArgument:
      return InvalidParameter(s.message());
    case Status::Code::kNotFound:
      return ResourceNotFound(s.message());
    default:
      return {"INTERNAL_ERROR", s.message()};
  }
}

void ThrowIfError(const Status& s) {
  if (!s.ok()) throw FromStatus(s);
}

ApiResponse JsonAnswer(const nlohmann::json& body, int status) {
  return {status,
          "application/json",
          body.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace),
          nullptr,
          {}};
}

ApiResponse ErrorAnswer(const ApiError& e) {
  return JsonAnswer({{"error_code", e.code}, {"message", e.message}}, e.status);
}

ApiResponse AnswerCall(const std::function<ApiResponse()>& call) {
  try {
    return call();
  } catch (const ApiError& e) {
    return ErrorAnswer(e);
  } catch (const nlohmann::json::exception& e) {
    return ErrorAnswer(InvalidParameter(std::string("Invalid request: ") + e.what()));
  }
}

std::optional<std::string> QueryParam(const ApiRequest& request, std::string_view name) {
  auto it = request.query.find(std::string(name));
  if (it == request.query.end()) return std::nullopt;
  return it->second;
}

}  // namespace tb
