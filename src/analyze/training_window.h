// When a run trained, as opposed to when its process lived: on a fast GPU a small model
// trains for a second after ten seconds of starting Python, PyTorch and CUDA, so the
// process's span says nothing about whether two runs trained together, and figures taken
// over it describe the start-up. The training window is, best first:
//   1. the span of the steps the script logged (its per-step metrics: throughput, step
//      timing, else any metric it logged and its epoch events);
//   2. the span of GPU activity above the run's idle level;
//   3. the span of its processes' CPU activity above their idle level (a script on the CPU,
//      or a GPU without utilization counters): Python's start-up is left in, its idle
//      tail (waiting on I/O, a sleep) out;
//   4. the process's span.
// The samples a run trained are counted from its steps where it logged both the samples
// per second of a step and the step's time (the trainbench client's run.steps(): samples
// = throughput x (data wait + compute), per step, exactly); else its throughput integrated
// over the training window. Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "store/format/chunk_codec.h"

namespace tb {

struct TrainingWindow {
  int64_t start_ms = 0, end_ms = 0;
  std::string source;  // "steps", "gpu", "cpu" or "process": what it was found from
  int64_t length_ms() const { return end_ms - start_ms; }
};

// How `source` reads in a sentence: "the steps the script logged", ...
std::string TrainingWindowSource(const std::string& source);

// The first and last time of the script's per-step series, the metrics that say a step
// happened (throughput, step timing) before any other it logged.
class ScriptSpan {
 public:
  // `metric` a script metric (train.*), `first`/`last` its first and last points.
  void Add(std::string_view metric, const Point& first, const Point& last);
  // An epoch or a script phase event.
  void AddEvent(int64_t time_ms);
  std::optional<TrainingWindow> Window() const;

 private:
  std::optional<std::pair<int64_t, int64_t>> steps_, other_;
};

// The span of buckets of `activity` (one-second buckets from `start_ms`, NaN for none)
// above the run's idle level: idle + 10% of the way to its peak, when the peak stands at
// least 0.05 above idle; `source` names the signal ("gpu": idle is its lowest level;
// "cpu": idle is no CPU at all, so a process busy throughout trains throughout).
std::optional<TrainingWindow> ActivityWindow(const std::vector<double>& activity, int64_t start_ms,
                                             int64_t end_ms, const std::string& source);

// The samples a script trained, from its steps: feed every step's timing first
// (train.step.compute_seconds and train.step.data_wait_seconds), then its throughput.
// Holds 16 bytes per step.
class StepSamples {
 public:
  void AddStepSeconds(std::span<const Point> points);
  void AddThroughput(std::span<const Point> points);
  // nullopt when no throughput point had its step's time.
  std::optional<double> Samples() const {
    return matched_ > 0 ? std::optional<double>(samples_) : std::nullopt;
  }

 private:
  void Seal();
  std::vector<std::pair<int64_t, double>> seconds_;  // step -> its time, sorted once sealed
  bool sealed_ = false;
  double samples_ = 0;
  int64_t matched_ = 0;
};

// The part of `own` that overlaps any of `others` (their union), as a fraction of `own`'s
// length (1 for an empty `own` inside one of them, 0 outside).
double OverlapFraction(const TrainingWindow& own, const std::vector<TrainingWindow>& others);

}  // namespace tb
