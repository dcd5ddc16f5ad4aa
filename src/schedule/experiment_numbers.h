// radT's Experiment cells: numbers that are MLflow experiment ids, made into the names of
// the store's experiments before a schedule runs.
#pragma once

#include <vector>

#include "base/status.h"
#include "schedule/plan.h"

namespace tb {

class Store;

// radT's Experiment column holds an MLflow experiment id, and means it every time: 0 is the
// Default experiment; another number the experiment whose MLflow id it is (one `import
// --mlflow` brought, kMlflowExperimentIdTag, else the id trainbench's tracking API gives
// it); when none has it, an experiment of that name is made with that id, said once. Any
// other cell is the experiment's name.
Status ResolveExperimentIds(Store& store, std::vector<Workload>& plan);

}  // namespace tb
