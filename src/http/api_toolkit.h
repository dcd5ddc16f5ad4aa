// What the two HTTP APIs share (track/: MLflow's REST API; serve/: /api/v1): one error
// that handlers throw and that becomes one JSON answer ({"error_code", "message"}, the
// HTTP status following MLflow's codes), a Status turned into it, JSON answers, query
// parameters, and the call that catches it all. The access token and body limits are
// checked by HttpServer before a handler runs (http/http_server.h).
#pragma once

#include <functional>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>

#include "base/status.h"
#include "http/http_server.h"

namespace tb {

struct ApiError {
  // `code` is MLflow's: RESOURCE_DOES_NOT_EXIST and ENDPOINT_NOT_FOUND are 404,
  // INTERNAL_ERROR 500, every other code 400.
  ApiError(std::string code, std::string message);
  ApiError(int status, std::string code, std::string message);
  int status;
  std::string code;
  std::string message;
};

// 400 INVALID_PARAMETER_VALUE.
ApiError InvalidParameter(std::string message);
// 404 RESOURCE_DOES_NOT_EXIST.
ApiError ResourceNotFound(std::string message);
// InvalidArgument is 400, NotFound 404, anything else 500 (the store failed).
ApiError FromStatus(const Status& status);
// Throws FromStatus(status) unless it is OK.
void ThrowIfError(const Status& status);

// `body` as JSON (invalid UTF-8 replaced, never a failure).
ApiResponse JsonAnswer(const nlohmann::json& body, int status = 200);
ApiResponse ErrorAnswer(const ApiError& error);
// Runs `call`; an ApiError it throws, and JSON it cannot read, become error answers.
ApiResponse AnswerCall(const std::function<ApiResponse()>& call);

// The first value of query parameter `name`.
std::optional<std::string> QueryParam(const ApiRequest& request, std::string_view name);

}  // namespace tb
