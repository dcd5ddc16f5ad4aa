#include "metrics/sample.h"

namespace tb {

std::string LabelValue(std::string_view raw) {
  std::string out(raw);
  for (char& c : out) {
    if (c == ',' || c == '=' || c == '\n' || c == '\r') c = '_';
  }
  return out;
}

Labels::Labels(std::initializer_list<std::pair<std::string_view, std::string_view>> pairs) {
  for (const auto& [key, value] : pairs) Add(key, value);
}

Labels Labels::Parse(std::string_view text) {
  Labels labels;
  labels.text_ = text;
  return labels;
}

Labels& Labels::Add(std::string_view key, std::string_view value) {
  if (!text_.empty()) text_ += ',';
  text_ += key;
  text_ += '=';
  text_ += LabelValue(value);
  return *this;
}

Labels& Labels::Add(std::string_view key, int64_t value) { return Add(key, std::to_string(value)); }

Labels Labels::With(const Labels& more) const {
  Labels out = *this;
  if (!more.text_.empty()) out.text_ += (out.text_.empty() ? "" : ",") + more.text_;
  return out;
}

std::optional<std::string_view> Labels::Find(std::string_view key) const {
  std::string_view rest = text_;
  while (!rest.empty()) {
    size_t end = rest.find(',');
    std::string_view pair = rest.substr(0, end);
    size_t eq = pair.find('=');
    if (pair.substr(0, eq) == key) return eq == std::string_view::npos ? "" : pair.substr(eq + 1);
    if (end == std::string_view::npos) break;
    rest.remove_prefix(end + 1);
  }
  return std::nullopt;
}

std::string_view Labels::Get(std::string_view key) const { return Find(key).value_or(""); }

bool Labels::Has(std::string_view key) const { return Find(key).has_value(); }

}  // namespace tb
