// A figure's lines' legend names and styles: from a template, or by default what tells the
// lines apart. Internal to figure/. Pure.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "store/store.h"

namespace tb {

// What a figure line shows: a run's series, or a workload's mean.
struct Source {
  const RunRecord* run = nullptr;  // nullptr for a workload mean
  std::string labels;
  std::string workload;  // "EXP:W" for a workload mean
  size_t run_count = 0;
  std::vector<const RunRecord*> sharing;  // other runs on the same device at the same time
};

// Each line's colour and dash, as the web page gives them: by the place of its workload
// (means first) or its run in what the figure was asked for, so that a run keeps its colour
// in every figure of the same runs whichever runs before it have the metric; where a run
// has several lines (a line per GPU), by the line's place, every line its own.
std::vector<size_t> StylesBySpec(const std::vector<Source>& sources,
                                 const std::vector<std::string>& workloads,
                                 const std::vector<RunRecord>& runs);

// The legend's name for a line from a template: {param}, {name}, {letter}, {workload},
// {experiment}, {labels}, {id}, {runs} (a workload's run count).
std::string FillLegend(std::string_view pattern, const Source& s);

// Legend names when none is asked for, short and distinct, as the web page names its lines:
// the run's name (else its workload and letter, else that or its name with its place among
// the runs so named in start order: "pair 0A- #2"), with the
// labels where the lines' differ ("[gpu=1]"); a workload's "pair, mean of 3 runs"; a
// device's series that runs shared, "GPU 0, shared by A and B".
std::vector<std::string> DefaultLegend(const std::vector<Source>& sources);

}  // namespace tb
