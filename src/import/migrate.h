// Copies the runs of one store into another (`trainbench migrate`): experiments, runs with
// params and tags, every series' points, events and artifacts. A run is marked with the tag
// trainbench.migrated once it is complete in the destination: complete runs are skipped
// when migrating again; a run cut short is copied again, its chunks landing on the same ids
// (made from the run, the series and the chunk's position) so nothing doubles. The model
// registry's records come along (a registered model the destination has is left as it is).
#pragma once

#include <functional>
#include <span>
#include <string>

#include "store/store.h"

namespace tb {

struct MigrationResult {
  int copied = 0;
  int skipped = 0;  // complete in the destination already
  int64_t points = 0;
};

Result<MigrationResult> MigrateRuns(Store& from, Store& to,
                                    const std::function<void(const RunRecord&)>& progress = nullptr);

// Writes the points of one series of a run as sealed chunks of the usual size, on ids made
// from the run, the series and the chunk's position (after the series' first `after`
// points, when they are written to a series that held those already): writing again lands
// on the same ids, so a copy cut short and redone doubles nothing.
Status WriteSealedSeries(Store& to, const std::string& run_id, const std::string& metric,
                         const std::string& labels, std::span<const Point> points, int64_t after = 0);

}  // namespace tb
