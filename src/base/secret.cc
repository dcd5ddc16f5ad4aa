#include "base/secret.h"

#include <sys/random.h>

#include <algorithm>
#include <cctype>
#include <vector>

#include "base/strings.h"

namespace tb {

std::string RandomHex(size_t bytes) {
  std::vector<unsigned char> raw(bytes);
  size_t got = 0;
  while (got < bytes) {
    ssize_t n = getrandom(raw.data() + got, bytes - got, 0);
    if (n > 0) got += static_cast<size_t>(n);
  }
  static const char* kHex = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes);
  for (unsigned char b : raw) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

bool SecretsEqual(std::string_view a, std::string_view b) {
  // Every byte of the longer is looked at; the lengths are part of the answer.
  size_t n = std::max(a.size(), b.size());
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < n; ++i) {
    unsigned char x = i < a.size() ? static_cast<unsigned char>(a[i]) : 0;
    unsigned char y = i < b.size() ? static_cast<unsigned char>(b[i]) : 0;
    diff = static_cast<unsigned char>(diff | (x ^ y));
  }
  return diff == 0;
}

bool IsSecretName(std::string_view name) {
  static const char* const kWords[] = {"TOKEN",       "SECRET", "SECRETS", "PASSWORD", "PASSWD",
                                       "PASS",        "KEY",    "KEYS",    "APIKEY",   "CREDENTIAL",
                                       "CREDENTIALS", "AUTH",   "COOKIE",  "PWD_HASH", "PRIVATE"};
  std::string upper;
  for (char c : name) upper += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  for (std::string_view word : Split(upper, '_')) {
    for (const char* w : kWords) {
      if (word == w) return true;
    }
  }
  // PGPASSWORD, MYSQL_PWD and the like: the words run together.
  return upper.find("PASSWORD") != std::string::npos || upper.find("TOKEN") != std::string::npos ||
         upper.find("SECRET") != std::string::npos || upper == "MYSQL_PWD";
}

std::string RedactedUri(const std::string& uri) {
  size_t scheme = uri.find("://");
  size_t at = uri.find('@');
  if (scheme == std::string::npos || at == std::string::npos) return uri;
  size_t colon = uri.find(':', scheme + 3);
  if (colon == std::string::npos || colon > at) return uri;
  return uri.substr(0, colon) + ":***" + uri.substr(at);
}

}  // namespace tb
