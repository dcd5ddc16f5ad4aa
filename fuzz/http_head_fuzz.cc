// What a hostile client sends before its body: request lines and headers, percent-encoded
// paths and queries, chunk size lines. An answer or a refusal, never a crash, and never
// more memory than the input's few times; a head that parses keeps its promises (a path
// that begins with '/', at most kMaxHeaders headers, lower-case names).
#include <cctype>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>
#include <string_view>

#include "http/http_parse.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view bytes(reinterpret_cast<const char*>(data), size);
  if (std::optional<tb::HeadBounds> b = tb::FindHead(bytes)) {
    if (b->begin > b->end || b->end > b->body || b->body > bytes.size()) std::abort();
    tb::HttpHead head;
    std::string why;
    int refused = tb::ParseHead(bytes.substr(b->begin, b->end - b->begin), head, why);
    if (refused == 0) {
      if (head.path.empty() || head.path[0] != '/') std::abort();
      if (head.headers.size() > tb::kMaxHeaders) std::abort();
      for (const auto& [name, value] : head.headers) {
        for (char c : name) {
          if (std::isupper(static_cast<unsigned char>(c))) std::abort();
        }
      }
    } else if (why.empty()) {
      std::abort();  // a refusal says why
    }
  }
  std::string decoded = tb::PercentDecode(bytes, true);
  if (decoded.size() > bytes.size()) std::abort();
  if (tb::PercentDecode(tb::PercentEncode(bytes), false) != bytes) std::abort();
  if (std::optional<uint64_t> n = tb::ParseChunkSize(bytes); n && *n >= (uint64_t{1} << 60)) std::abort();
  return 0;
}
