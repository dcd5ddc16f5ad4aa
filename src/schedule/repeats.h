// `schedule --repeat N`: the attempts of a workload, and which of them a store already holds.
// Repeat k of a workload is a copy of its runs with fresh run ids (the first keeps the
// plan's), all tagged with their attempt (the first run's id) and "k/N". With N > 1 the
// store decides what runs, not the Status cells: repeat k of a workload runs unless the
// store holds a repeat k (of any N) whose runs all finished. So an interrupted schedule
// resumes, a failed repeat runs again, and `--repeat 5` after `--repeat 3` adds two. A
// row's Status reads "REPEAT k/N NAME" until its last repeat.
#pragma once

#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "base/status.h"
#include "schedule/plan.h"

namespace tb {

class Store;

// Repeat `k` of `of` of `w` (k from 1): its runs with their attempt and repeat set, fresh ids
// past the first repeat. With of == 1 only the attempt is set.
Workload AttemptOf(const Workload& w, int k, int of);

// (experiment, workload, k) of each repeat k <= `of` whose runs, one per letter of the
// plan's workload, all finished in `store` (none when `of` is 1).
using RepeatKey = std::tuple<std::string, std::string, int>;
Result<std::set<RepeatKey>> RepeatsDone(Store& store, const std::vector<Workload>& plan, int of);

// The Status a run's row gets after repeat `k` of `of`: `status` ("FINISHED", "FAILED") and
// the run's name; a finished repeat before the last reads "REPEAT k/N NAME".
std::string RepeatStatus(const std::string& status, const std::string& name, int k, int of);

}  // namespace tb
