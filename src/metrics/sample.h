// What travels from a listener to the store: one sample, whole (metric, labels, time,
// value), given to a SampleSink. The store's SeriesWriter is the sink of a run; tests and
// benchmarks have their own. A series is a metric with one set of labels.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>
#include <utility>

namespace tb {

// The labels of a series, such as gpu=0,listener=smi: key=value pairs in the order they
// were added. Values are made safe on the way in (',', '=' and line breaks become '_'), so
// the text form, which the store keeps, reads back into the same pairs. Keys are
// trainbench's own words (gpu, pid, listener, ...), never user input.
class Labels {
 public:
  Labels() = default;
  Labels(std::initializer_list<std::pair<std::string_view, std::string_view>> pairs);
  // The labels a store holds ("" for none). Text that is not key=value pairs reads as is.
  static Labels Parse(std::string_view text);

  // Adds a pair (its value made safe); returns *this for chaining.
  Labels& Add(std::string_view key, std::string_view value);
  Labels& Add(std::string_view key, int64_t value);
  // These labels followed by `more`'s.
  Labels With(const Labels& more) const;

  // The value of `key`, "" when there is none.
  std::string_view Get(std::string_view key) const;
  bool Has(std::string_view key) const;
  bool empty() const { return text_.empty(); }
  // The one text form: "key=value,key=value", "" for none.
  const std::string& text() const { return text_; }

  bool operator==(const Labels& other) const = default;
  bool operator<(const Labels& other) const { return text_ < other.text_; }

 private:
  std::optional<std::string_view> Find(std::string_view key) const;

  std::string text_;
};

// Makes a string safe as a label value: ',', '=' and line breaks become '_'.
std::string LabelValue(std::string_view raw);

struct Sample {
  std::string_view metric;  // a name from metrics/names.h, or a script's own
  const Labels& labels;
  int64_t time_ms = 0;  // Unix ms: the tick's time, or when a tool printed the row
  double value = 0;
};

class SampleSink {
 public:
  virtual ~SampleSink() = default;
  virtual void Add(const Sample& sample) = 0;
};

// The empty label set, for samples of a whole host or a whole run.
inline const Labels kNoLabels;

}  // namespace tb
