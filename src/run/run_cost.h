// What trainbench itself cost a run, beside what the run's command used. Recorded when the
// run ends as the tags trainbench.cpu_seconds.ROLE (seconds of CPU time, user + system) and
// shown by `trainbench show`, so that anyone can see how much of the machine the
// measuring took.
#pragma once

#include <optional>
#include <string>

#include "store/store.h"

namespace tb {

struct RunCost {
  double command = 0;          // the run's command and every process it waited for
  double trainbench = 0;       // trainbench's own process, all its threads; of which:
  double listeners = 0;        //   sampling, in the listeners (their thread CPU time)
  double tracking_server = 0;  //   the tracking API's connections (the script's metrics)
  double tools = 0;            // helper processes trainbench ran that have ended: the
                               // manifest's (python, git, nvidia-smi -q) and listeners' tools
  double total() const { return trainbench + tools; }
};

// The tags, under "trainbench.cpu_seconds." + `scope` (empty, or "node-NAME." for one
// part of a run across nodes).
KeyValues RunCostTags(const RunCost& cost, const std::string& scope = "");
// From a run's tags; nullopt when the run has none (it ran before trainbench kept them).
std::optional<RunCost> RunCostOfTags(const KeyValues& tags, const std::string& scope = "");
// Whether a tag is one of the cost's (any scope).
bool IsRunCostTag(const std::string& key);
// "0.21 s of CPU time, 1.4% of the command's 15.2 s: listeners 0.01 s, tracking server
// 0.05 s, helper tools 0.11 s, the rest 0.04 s".
std::string DescribeRunCost(const RunCost& cost);

}  // namespace tb
