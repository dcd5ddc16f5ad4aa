#include "collect/progress.h"

#include <cctype>
#include <cmath>
#include <cstdlib>

#include "metrics/names.h"

namespace tb {
namespace {

constexpr size_t kLongestLine = 64 * 1024;
constexpr std::string_view kExample = "\"| epoch {epoch} | {step}/{} batches | ms/batch {ms}\"";

bool IsSpace(char c) { return c == ' ' || c == '\t'; }
bool IsDigit(char c) { return std::isdigit(static_cast<unsigned char>(c)) != 0; }

bool IsName(std::string_view name) {
  if (name.empty() || IsDigit(name[0])) return false;
  for (char c : name)
    if (std::isalnum(static_cast<unsigned char>(c)) == 0 && c != '_' && c != '.') return false;
  return true;
}

// The length of the number at the start of `s` ([-+]digits[.digits][e[-+]digits]), 0 for none.
size_t NumberLength(std::string_view s) {
  size_t i = 0;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) ++i;
  size_t digits = 0;
  while (i < s.size() && IsDigit(s[i])) ++i, ++digits;
  if (i < s.size() && s[i] == '.') {
    ++i;
    while (i < s.size() && IsDigit(s[i])) ++i, ++digits;
  }
  if (digits == 0) return 0;
  if (i < s.size() && (s[i] == 'e' || s[i] == 'E')) {
    size_t j = i + 1;
    if (j < s.size() && (s[j] == '-' || s[j] == '+')) ++j;
    if (j < s.size() && IsDigit(s[j])) {
      while (j < s.size() && IsDigit(s[j])) ++j;
      i = j;
    }
  }
  return i;
}

// Matches literal `text` at the start of `s` (a run of spaces in it matches any run of
// spaces or tabs, or none); the length of `s` it took, or nullopt.
std::optional<size_t> MatchLiteral(std::string_view text, std::string_view s) {
  size_t i = 0, j = 0;
  while (i < text.size()) {
    if (IsSpace(text[i])) {
      while (i < text.size() && IsSpace(text[i])) ++i;
      while (j < s.size() && IsSpace(s[j])) ++j;
      continue;
    }
    if (j >= s.size() || s[j] != text[i]) return std::nullopt;
    ++i, ++j;
  }
  return j;
}

Status Refuse(const std::string& why) {
  return Status::InvalidArgument("progress pattern: " + why +
                                 "; write the line as the script prints it, its " + "numbers named, e.g. " +
                                 std::string(kExample));
}

}  // namespace

Result<ProgressPattern> ProgressPattern::Parse(std::string_view pattern) {
  ProgressPattern p;
  p.text_ = std::string(pattern);
  bool counted = false;
  size_t i = 0;
  while (i < pattern.size()) {
    if (pattern[i] == '}') return Refuse("a '}' without its '{' at character " + std::to_string(i + 1));
    if (pattern[i] != '{') {
      size_t end = pattern.find_first_of("{}", i);
      if (end == std::string_view::npos) end = pattern.size();
      p.pieces_.push_back({.text = std::string(pattern.substr(i, end - i))});
      i = end;
      continue;
    }
    size_t close = pattern.find('}', i);
    if (close == std::string_view::npos)
      return Refuse("a '{' without its '}' at character " + std::to_string(i + 1));
    std::string_view name = pattern.substr(i + 1, close - i - 1);
    if (name.empty()) {
      if (!p.pieces_.empty() && p.pieces_.back().any)
        return Refuse("two {} in a row match nothing more than one");
      p.pieces_.push_back({.any = true, .text = ""});
    } else {
      if (!IsName(name))
        return Refuse("{" + std::string(name) + "} is not a name (letters, digits, _ and .)");
      if (!p.pieces_.empty() && p.pieces_.back().number)
        return Refuse("{" + std::string(name) + "} follows another number with nothing between them");
      p.pieces_.push_back({.number = true, .text = std::string(name)});
      if (name != "step") counted = true;
    }
    i = close + 1;
  }
  if (!counted) return Refuse("\"" + p.text_ + "\" names no number to record besides {step}");
  for (const Piece& piece : p.pieces_) {
    if (piece.number || piece.any) continue;
    for (size_t a = 0; a < piece.text.size();) {
      while (a < piece.text.size() && IsSpace(piece.text[a])) ++a;
      size_t b = a;
      while (b < piece.text.size() && !IsSpace(piece.text[b])) ++b;
      if (b - a > p.anchor_.size()) p.anchor_ = piece.text.substr(a, b - a);
      a = b;
    }
  }
  return p;
}

bool ProgressPattern::MatchFrom(size_t piece, std::string_view rest,
                                std::vector<std::pair<std::string, double>>& out) const {
  if (piece == pieces_.size()) return true;
  const Piece& p = pieces_[piece];
  if (p.any) {
    for (size_t skip = 0; skip <= rest.size(); ++skip) {
      size_t kept = out.size();
      if (MatchFrom(piece + 1, rest.substr(skip), out)) return true;
      out.resize(kept);
    }
    return false;
  }
  if (p.number) {
    size_t spaces = 0;
    while (spaces < rest.size() && IsSpace(rest[spaces])) ++spaces;
    size_t length = NumberLength(rest.substr(spaces));
    if (length == 0) return false;
    std::string digits(rest.substr(spaces, length));
    out.emplace_back(p.text, std::strtod(digits.c_str(), nullptr));
    if (MatchFrom(piece + 1, rest.substr(spaces + length), out)) return true;
    out.pop_back();
    return false;
  }
  std::optional<size_t> taken = MatchLiteral(p.text, rest);
  return taken && MatchFrom(piece + 1, rest.substr(*taken), out);
}

std::optional<std::vector<std::pair<std::string, double>>> ProgressPattern::Match(
    std::string_view line) const {
  if (!anchor_.empty() && line.find(anchor_) == std::string_view::npos) return std::nullopt;
  std::vector<std::pair<std::string, double>> out;
  for (size_t start = 0; start <= line.size(); ++start) {
    if (MatchFrom(0, line.substr(start), out)) return out;
    out.clear();
  }
  return std::nullopt;
}

void ProgressReader::Feed(std::string_view bytes, int64_t time_ms) {
  while (!bytes.empty()) {
    size_t end = bytes.find_first_of("\r\n");
    std::string_view part = bytes.substr(0, end);
    if (!overlong_ && partial_.size() + part.size() <= kLongestLine) {
      partial_.append(part);
    } else {
      overlong_ = true;
      partial_.clear();
    }
    if (end == std::string_view::npos) return;
    if (!overlong_ && !partial_.empty()) Line(partial_, time_ms);
    partial_.clear();
    overlong_ = false;
    bytes.remove_prefix(end + 1);
  }
}

void ProgressReader::Line(std::string_view line, int64_t time_ms) {
  std::optional<std::vector<std::pair<std::string, double>>> values = pattern_.Match(line);
  if (!values) return;
  ++matched_;
  int64_t step = matched_;
  for (const auto& [name, value] : *values)
    if (name == "step" && std::isfinite(value)) step = static_cast<int64_t>(value);
  auto emit = [&](std::string_view metric, double value) { emit_(metric, time_ms, value, step); };
  bool throughput_given = false;
  for (const auto& [name, value] : *values) throughput_given = throughput_given || name == "throughput";
  for (const auto& [name, value] : *values) {
    if (name == "step") continue;
    if (name == "throughput") {
      emit(metric::kTrainThroughputSamplesPerSecond, value);
    } else if (name == "ms" || name == "s") {
      emit("train.step_seconds", name == "ms" ? value / 1000 : value);
    } else if (name == "samples") {
      emit("train.samples", value);
      if (!throughput_given && last_samples_ && time_ms > last_samples_->first &&
          value > last_samples_->second)
        emit(metric::kTrainThroughputSamplesPerSecond,
             (value - last_samples_->second) * 1000.0 / static_cast<double>(time_ms - last_samples_->first));
      last_samples_ = {time_ms, value};
    } else {
      emit("train." + name, value);
    }
  }
}

}  // namespace tb
