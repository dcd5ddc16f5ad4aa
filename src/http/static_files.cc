#include "http/static_files.h"

#include <fstream>
#include <sstream>
#include <utility>

#include "base/strings.h"

namespace tb {
namespace {

std::string ContentType(std::string_view path) {
  static const std::pair<const char*, const char*> kTypes[] = {{".html", "text/html; charset=utf-8"},
                                                               {".js", "text/javascript"},
                                                               {".css", "text/css"},
                                                               {".svg", "image/svg+xml"},
                                                               {".png", "image/png"},
                                                               {".json", "application/json"},
                                                               {".woff2", "font/woff2"},
                                                               {".ico", "image/x-icon"},
                                                               {".map", "application/json"}};
  for (auto [ext, type] : kTypes) {
    if (path.ends_with(ext)) return type;
  }
  return "application/octet-stream";
}

// The file under `root` a URL path names, or nullopt when it would leave `root` or holds
// a control character (a NUL would cut the path short).
std::optional<std::string> StaticFile(const std::string& root, std::string_view path) {
  for (unsigned char c : path) {
    if (c < 0x20 || c == 0x7f) return std::nullopt;
  }
  if (path.empty() || path == "/") path = "/index.html";
  for (std::string_view part : Split(path.substr(1), '/')) {
    if (part.empty() || part == "." || part == ".." || part.find('\\') != std::string_view::npos)
      return std::nullopt;
  }
  return root + std::string(path);
}

}  // namespace

std::optional<ApiResponse> StaticFileAnswer(const std::string& root, std::string_view path) {
  std::optional<std::string> file = StaticFile(root, path);
  if (!file) return JsonError(400, "INVALID_PATH", "the path leaves the web directory");
  std::ifstream in(*file, std::ios::binary);
  if (!in) return std::nullopt;
  std::ostringstream content;
  content << in.rdbuf();
  return ApiResponse{200, ContentType(*file), content.str(), nullptr, {}};
}

}  // namespace tb
