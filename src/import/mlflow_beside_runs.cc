#include "import/mlflow_beside_runs.h"

#include "base/strings.h"
#include "store/run_tags.h"

namespace tb::mlflow_db {

std::map<std::string, std::string> MetricDigests(Database& db) {
  std::map<std::string, std::string> out;
  auto keep = [&](const Cells& c) {
    out[c.Text(0)] =
        Concat({std::to_string(c.Int(1)), "/", std::to_string(c.Int(2)), "/", std::to_string(c.Int(3))});
  };
  Status latest = db.Each(
      "SELECT run_uuid, CAST(COUNT(*) AS BIGINT), CAST(COALESCE(SUM(timestamp), 0) AS BIGINT), "
      "CAST(COALESCE(SUM(step), 0) AS BIGINT) FROM latest_metrics GROUP BY run_uuid",
      "", keep);
  if (!latest.ok()) {
    out.clear();
    (void)db.Each(
        "SELECT run_uuid, CAST(COUNT(*) AS BIGINT), CAST(COALESCE(MAX(timestamp), 0) AS BIGINT), CAST(0 AS "
        "BIGINT) FROM metrics GROUP BY run_uuid",
        "", keep);
  }
  return out;
}

Status ImportExperiments(Database& db, Store& to, const std::set<std::string>& names) {
  std::map<std::string, KeyValues> tags;  // by name
  (void)db.Each(
      "SELECT e.name, t.key, COALESCE(t.value, '') FROM experiment_tags t JOIN experiments e ON "
      "e.experiment_id = t.experiment_id ORDER BY t.key",
      "", [&](const Cells& c) { tags[c.Text(0)].emplace_back(c.Text(1), c.Text(2)); });
  std::map<std::string, int64_t> ids;
  TB_RETURN_IF_ERROR(db.Each("SELECT name, CAST(experiment_id AS BIGINT) FROM experiments", "",
                             [&](const Cells& c) { ids[c.Text(0)] = c.Int(1); }));
  // An experiment renamed in MLflow since it was imported: renamed here too, when the new
  // name is free (else its runs move to the experiment of that name as they are updated).
  Result<std::vector<ExperimentInfo>> held = to.ListExperiments();
  if (!held.ok()) return held.status();
  for (const auto& [name, mlflow_id] : ids) {
    bool taken = false;
    const ExperimentInfo* renamed = nullptr;
    for (const ExperimentInfo& e : *held) {
      taken |= e.name == name;
      for (const auto& [k, v] : e.tags) {
        if (k == kMlflowExperimentIdTag && v == std::to_string(mlflow_id) && e.name != name &&
            !ids.contains(e.name))
          renamed = &e;
      }
    }
    if (renamed != nullptr && !taken && CheckExperimentName(name).ok())
      TB_RETURN_IF_ERROR(to.ChangeExperiment(renamed->id, {.name = name, .set_tags = {}, .delete_tags = {}}));
  }
  for (const std::string& name : names) {
    if (!CheckExperimentName(name).ok()) continue;
    Result<int64_t> id = to.EnsureExperiment(name);
    if (!id.ok()) return id.status();
    KeyValues set = tags[name];
    if (auto mlflow_id = ids.find(name); mlflow_id != ids.end())
      set.emplace_back(kMlflowExperimentIdTag, std::to_string(mlflow_id->second));
    if (!set.empty())
      TB_RETURN_IF_ERROR(
          to.ChangeExperiment(*id, {.name = std::nullopt, .set_tags = set, .delete_tags = {}}));
  }
  return Status::Ok();
}

}  // namespace tb::mlflow_db
