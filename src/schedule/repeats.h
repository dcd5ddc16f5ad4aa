// `schedule --repeat N`: the attempts of a workload, and which of them a store already holds.
// Repeat k of a workload is a copy of its runs with fresh run ids (the first keeps the
// plan's), all tagged with their attempt (the first run's id) and "k/N"; a row's Status
// reads "REPEAT k/N NAME" until its last repeat, so an interrupted schedule resumes, and
// the repeats whose runs all finished are found in the store and not run again.
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

// (experiment, workload, k) of each repeat of `of` whose runs, one per letter of the plan's
// workload, all finished in `store`.
using RepeatKey = std::tuple<std::string, std::string, int>;
Result<std::set<RepeatKey>> RepeatsDone(Store& store, const std::vector<Workload>& plan, int of);

// The Status a run's row gets after repeat `k` of `of`: `status` ("FINISHED", "FAILED") and
// the run's name; a finished repeat before the last reads "REPEAT k/N NAME".
std::string RepeatStatus(const std::string& status, const std::string& name, int k, int of);

}  // namespace tb
