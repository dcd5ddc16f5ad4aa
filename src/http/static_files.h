// The web UI's files as `trainbench serve` answers them: a URL path confined to the web
// directory, its content type by extension. Pure but for reading the file; thread-safe.
#pragma once

#include <optional>
#include <string>
#include <string_view>

#include "http/http_server.h"

namespace tb {

// The answer to GET `path` from the files under `root` ("/" is index.html): the file with
// its content type; 400 when the path would leave `root` or holds a control character (a
// NUL would cut it short); nullopt when there is no such file.
std::optional<ApiResponse> StaticFileAnswer(const std::string& root, std::string_view path);

}  // namespace tb
