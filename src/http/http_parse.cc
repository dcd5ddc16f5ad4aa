#include "http/http_parse.h"

#include <algorithm>
#include <cctype>
#include <cstring>

#include "base/strings.h"

namespace tb {
namespace {

int HexDigit(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string HttpHead::Header(std::string_view name) const {
  for (const auto& [k, v] : headers) {
    if (k == name) return v;
  }
  return "";
}

bool HttpHead::HasHeader(std::string_view name) const {
  return std::any_of(headers.begin(), headers.end(), [&](const auto& h) { return h.first == name; });
}

std::optional<HeadBounds> FindHead(std::string_view in) {
  size_t begin = in.find_first_not_of("\r\n");
  if (begin == std::string_view::npos) return std::nullopt;
  size_t crlf = in.find("\r\n\r\n", begin), lf = in.find("\n\n", begin);
  if (crlf < lf) return HeadBounds{begin, crlf, crlf + 4};
  if (lf != std::string_view::npos) return HeadBounds{begin, lf, lf + 2};
  return std::nullopt;
}

std::string PercentDecode(std::string_view s, bool plus_is_space) {
  std::string out;
  out.reserve(s.size());
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '%' && i + 2 < s.size() && HexDigit(s[i + 1]) >= 0 && HexDigit(s[i + 2]) >= 0) {
      out += static_cast<char>(HexDigit(s[i + 1]) * 16 + HexDigit(s[i + 2]));
      i += 2;
    } else {
      out += plus_is_space && s[i] == '+' ? ' ' : s[i];
    }
  }
  return out;
}

std::string PercentEncode(std::string_view s) {
  static const char* kHex = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : s) {
    if (std::isalnum(c) || std::strchr("-_.!~*'()", c) != nullptr) {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += kHex[c >> 4];
      out += kHex[c & 15];
    }
  }
  return out;
}

int ParseHead(std::string_view head, HttpHead& req, std::string& why) {
  auto bad = [&](const std::string& what) {
    why = what;
    return 400;
  };
  if (head.size() > kMaxHeadBytes) {
    why = "the request's line and headers exceed 64 KiB";
    return 431;
  }
  std::vector<std::string_view> lines;
  for (std::string_view line : Split(head, '\n')) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    lines.push_back(line);
  }
  if (lines.empty()) return bad("a request line is METHOD TARGET HTTP/1.1");
  std::vector<std::string_view> parts = Split(lines[0], ' ');
  if (parts.size() != 3 || parts[0].empty() ||
      !std::all_of(parts[0].begin(), parts[0].end(), [](char c) { return c >= 'A' && c <= 'Z'; }))
    return bad("a request line is METHOD TARGET HTTP/1.1");
  req.method = std::string(parts[0]);
  if (parts[2] == "HTTP/1.0") {
    req.http10 = true;
  } else if (parts[2] != "HTTP/1.1") {
    why = "only HTTP/1.0 and HTTP/1.1 are spoken here";
    return 505;
  }
  std::string_view target = parts[1];
  // The absolute form a proxy would send: the path is what follows the host.
  for (std::string_view scheme : {"http://", "https://"}) {
    if (StartsWith(target, scheme)) {
      size_t slash = target.find('/', scheme.size());
      target = slash == std::string_view::npos ? "/" : target.substr(slash);
    }
  }
  if (target.empty() || target[0] != '/') return bad("the request's target is not a path");
  size_t question = target.find('?');
  req.path = PercentDecode(target.substr(0, question), false);
  if (question != std::string_view::npos) {
    for (std::string_view pair : Split(target.substr(question + 1), '&')) {
      if (pair.empty()) continue;
      size_t eq = pair.find('=');
      std::string key = PercentDecode(pair.substr(0, eq), true);
      std::string value = eq == std::string_view::npos ? "" : PercentDecode(pair.substr(eq + 1), true);
      req.params.emplace(std::move(key), std::move(value));
    }
  }
  for (size_t i = 1; i < lines.size(); ++i) {
    std::string_view line = lines[i];
    size_t colon = line.find(':');
    if (colon == 0 || colon == std::string_view::npos || line[0] == ' ' || line[0] == '\t' ||
        line.substr(0, colon).find_first_of(" \t") != std::string_view::npos)
      return bad("a header line is NAME: VALUE");
    if (req.headers.size() == kMaxHeaders) {
      why = "more than " + std::to_string(kMaxHeaders) + " headers";
      return 431;
    }
    req.headers.emplace_back(ToLower(line.substr(0, colon)), std::string(Trim(line.substr(colon + 1))));
  }
  return 0;
}

std::optional<uint64_t> ParseChunkSize(std::string_view line) {
  std::string_view size_text = Trim(line.substr(0, line.find(';')));
  if (size_text.empty() || size_text.size() > 15) return std::nullopt;
  uint64_t size = 0;
  for (char ch : size_text) {
    if (HexDigit(ch) < 0) return std::nullopt;
    size = size * 16 + static_cast<uint64_t>(HexDigit(ch));
  }
  return size;
}

}  // namespace tb
