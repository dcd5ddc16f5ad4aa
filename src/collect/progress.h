// Reading a script's progress from what it prints, for scripts that log nothing through a
// tracking client (`run --progress PATTERN`, an experiment file's Progress column).
//
// A pattern is the progress line as the script prints it, with its numbers named:
//   "| epoch {epoch} | {step}/{} batches | ms/batch {ms} | loss {loss}"
// Text outside braces must appear as written (a run of spaces matches any run of spaces,
// or none); `{}` is any text; `{NAME}` a number. A line matches when the pattern is found
// anywhere in it. The names trainbench understands:
//   {throughput}  samples per second   -> train.throughput_samples_per_second
//   {samples}     samples trained so far; the throughput is then taken between lines
//   {step}        the step (batch) number: the step of every point the line gives
//   {epoch}       the epoch                -> train.epoch
//   {ms} / {s}    the time of one step     -> train.step_seconds (in seconds)
//   {loss}        the loss                 -> train.loss
// Any other name is recorded as train.NAME. Every point is timed by when its line arrived
// (trainbench runs Python unbuffered), so the lines' first and last mark the training
// window as logged steps do. Not thread-safe: one reader per output stream.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "base/status.h"

namespace tb {

class ProgressPattern {
 public:
  // Errors say what is wrong and show a pattern that works.
  static Result<ProgressPattern> Parse(std::string_view pattern);

  // The named numbers of `line`, in the pattern's order; nullopt when it does not match.
  std::optional<std::vector<std::pair<std::string, double>>> Match(std::string_view line) const;

  const std::string& text() const { return text_; }

 private:
  struct Piece {
    bool number = false;  // a {NAME}
    bool any = false;     // a {}
    std::string text;     // the literal, or the name
  };
  bool MatchFrom(size_t piece, std::string_view rest, std::vector<std::pair<std::string, double>>& out) const;

  std::string text_;
  std::vector<Piece> pieces_;
  std::string anchor_;  // the longest literal: a line without it is skipped at once
};

// Turns matched lines into metric points, handed to `emit`.
class ProgressReader {
 public:
  // A point of `metric`: its line's arrival time, its value and its step.
  using Emit = std::function<void(std::string_view metric, int64_t time_ms, double value, int64_t step)>;
  ProgressReader(ProgressPattern pattern, Emit emit) : pattern_(std::move(pattern)), emit_(std::move(emit)) {}

  // Bytes of output as they arrive at `time_ms`; lines end at '\n' or '\r' (progress bars
  // redraw with '\r'). A line longer than 64 KiB is dropped.
  void Feed(std::string_view bytes, int64_t time_ms);
  int64_t lines_matched() const { return matched_; }
  const std::string& pattern() const { return pattern_.text(); }

 private:
  void Line(std::string_view line, int64_t time_ms);

  ProgressPattern pattern_;
  Emit emit_;
  std::string partial_;
  bool overlong_ = false;
  int64_t matched_ = 0;
  std::optional<std::pair<int64_t, double>> last_samples_;  // time, samples of the last line
};

}  // namespace tb
