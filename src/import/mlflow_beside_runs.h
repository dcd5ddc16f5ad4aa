// What `import --mlflow` reads of MLflow's database beside each run's own record: the
// experiments (their tags, MLflow's ids, renames) and a word a run that changes when its
// metrics do, so that a pass reads no points of runs that did not change.
#pragma once

#include <map>
#include <set>
#include <string>

#include "import/mlflow_database.h"
#include "store/store.h"

namespace tb::mlflow_db {

// What MLflow holds of each run's metrics, by run id, in a word that changes when a point
// arrives: each metric's latest time and step summed (MLflow's latest_metrics table, which
// its stores update with every point logged after the latest), else, in a database without
// that table, the count and last time of the points themselves. One query per pass. A point
// logged behind a metric's latest (a lower step) leaves the word as it was.
std::map<std::string, std::string> MetricDigests(Database& db);

// The experiments `names` (those of MLflow's runs that are not deleted) in the store, with
// their tags (an MLflow database without the table has none) and MLflow's id beside them
// (kMlflowExperimentIdTag); an experiment renamed in MLflow since it was imported is
// renamed in the store too, when the new name is free (else its runs move to the
// experiment of that name as they are updated).
Status ImportExperiments(Database& db, Store& to, const std::set<std::string>& names);

}  // namespace tb::mlflow_db
