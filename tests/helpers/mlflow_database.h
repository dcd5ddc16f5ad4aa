// An MLflow tracking database as MLflow's SQL store lays it out (experiments, runs, params,
// tags, metrics; the columns of MLflow 2.x), holding what a radT lab's database holds: two
// runs of one radT workload collocated with MPS on GPU 0, a notebook's run in Default and
// a deleted run. The statements run on SQLite and on PostgreSQL alike.
#pragma once

#include <string>
#include <vector>

namespace tb::mlflow_fixture {

inline constexpr const char* kRadtRunA = "a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0";
inline constexpr const char* kRadtRunB = "b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0";
inline constexpr const char* kNotebookRun = "c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0";
inline constexpr const char* kDeletedRun = "d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0";

inline std::vector<std::string> MlflowDatabaseSql() {
  return {
      "CREATE TABLE experiments (experiment_id INTEGER NOT NULL PRIMARY KEY, name VARCHAR(256) NOT NULL "
      "UNIQUE, artifact_location VARCHAR(256), lifecycle_stage VARCHAR(32), creation_time BIGINT, "
      "last_update_time BIGINT)",
      "CREATE TABLE runs (run_uuid VARCHAR(32) NOT NULL PRIMARY KEY, name VARCHAR(250), source_type "
      "VARCHAR(20), source_name VARCHAR(500), entry_point_name VARCHAR(50), user_id VARCHAR(256), status "
      "VARCHAR(9), start_time BIGINT, end_time BIGINT, deleted_time BIGINT, source_version VARCHAR(50), "
      "lifecycle_stage VARCHAR(20), artifact_uri VARCHAR(200), experiment_id INTEGER REFERENCES "
      "experiments(experiment_id))",
      "CREATE TABLE params (key VARCHAR(250) NOT NULL, value VARCHAR(8000) NOT NULL, run_uuid VARCHAR(32) "
      "NOT NULL REFERENCES runs(run_uuid), PRIMARY KEY (key, run_uuid))",
      "CREATE TABLE tags (key VARCHAR(250) NOT NULL, value VARCHAR(8000), run_uuid VARCHAR(32) NOT NULL "
      "REFERENCES runs(run_uuid), PRIMARY KEY (key, run_uuid))",
      "CREATE TABLE metrics (key VARCHAR(250) NOT NULL, value FLOAT NOT NULL, timestamp BIGINT NOT NULL, "
      "run_uuid VARCHAR(32) NOT NULL REFERENCES runs(run_uuid), step BIGINT DEFAULT 0 NOT NULL, is_nan "
      "BOOLEAN DEFAULT false NOT NULL, PRIMARY KEY (key, timestamp, step, run_uuid, value, is_nan))",
      "CREATE TABLE experiment_tags (key VARCHAR(250) NOT NULL, value VARCHAR(5000), experiment_id INTEGER "
      "NOT NULL REFERENCES experiments(experiment_id), PRIMARY KEY (key, experiment_id))",
      "INSERT INTO experiments VALUES (0, 'Default', 'mlflow-artifacts:/0', 'active', 1700000000000, "
      "1700000000000), (7, 'resnet-collocation', 'mlflow-artifacts:/7', 'active', 1700000000000, "
      "1700000000000)",
      "INSERT INTO experiment_tags VALUES ('team', 'vision', 7)",
      "INSERT INTO runs VALUES "
      "('a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0', '(1 0_A_mps) cifar10', 'PROJECT', '/lab/cifar', 'main', 'ana', "
      "'FINISHED', 1700000100000, 1700000160000, NULL, NULL, 'active', "
      "'mlflow-artifacts:/7/a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0/artifacts', 7), "
      "('b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0', '(1 0_B_mps) cifar10', 'PROJECT', '/lab/cifar', 'main', 'ana', "
      "'FAILED', 1700000100000, 1700000130000, NULL, NULL, 'active', '', 7), "
      "('c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0', 'notebook', 'NOTEBOOK', 'analysis.ipynb', '', 'ana', "
      "'FINISHED', 1700000200000, 1700000210000, NULL, NULL, 'active', '', 0), "
      "('d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0', 'mistake', 'LOCAL', 'x.py', '', 'ana', 'FINISHED', "
      "1700000300000, 1700000301000, 1700000302000, NULL, 'deleted', '', 0)",
      "INSERT INTO params VALUES "
      "('workload', '1', 'a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0'), ('letter', '0_A_mps', "
      "'a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0'), ('listeners', 'smi+dcgmi+top', "
      "'a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0'), ('file', 'cifar10.py', 'a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0'), "
      "('batch-size', '128', 'a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0'), "
      "('workload', '1', 'b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0'), ('letter', '0_B_mps', "
      "'b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0'), ('file', 'cifar10.py', 'b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0'), "
      "('lr', '0.1', 'c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0')",
      "INSERT INTO tags VALUES "
      "('mlflow.runName', '(1 0_A_mps) cifar10', 'a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0'), "
      "('mlflow.parentRunId', 'a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0', 'b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0'), "
      "('mlflow.source.name', 'analysis.ipynb', 'c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0')",
      "INSERT INTO metrics VALUES "
      "('SMI - Power Draw', 250.5, 1700000101000, 'a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0', 0, false), "
      "('SMI - Power Draw', 260.0, 1700000102000, 'a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0', 0, false), "
      "('SMI - Mem Used', 1024.0, 1700000101000, 'a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0', 0, false), "
      "('SMI - GPU Util', -1.0, 1700000101000, 'a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0', 0, false), "
      "('SMI - Timestamp', 1700000101.0, 1700000101000, 'a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0', 0, false), "
      "('DCGMI - SN Active', 0.75, 1700000101000, 'a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0', 0, false), "
      "('DCGMI - Total Energy Consumption', 5000.0, 1700000101000, 'a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0', 0, "
      "false), "
      "('TOP - CPU Utilization', 250.0, 1700000101000, 'a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0', 0, false), "
      "('TOP - Memory Utilization', 12.5, 1700000101000, 'a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0', 0, false), "
      "('DCGMI - GPU Utilization', 95.0, 1700000101000, 'a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0', 0, false), "
      "('DCGMI - PCIE TX Throughput', 0.0, 1700000101000, 'a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0', 0, false), "
      "('DCGMI - PCIE RX Throughput', 0.0, 1700000101000, 'a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0', 0, false), "
      "('accuracy', 0.61, 1700000150000, 'a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0a0', 1, false), "
      "('SMI - Power Draw', 120.0, 1700000101000, 'b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0b0', 0, false), "
      "('loss', 0.9, 1700000201000, 'c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0', 0, false), "
      "('loss', 0.0, 1700000202000, 'c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0', 1, true), "
      "('loss', 0.5, 1700000203000, 'c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0c0', 2, false), "
      "('loss', 9.0, 1700000300500, 'd0d0d0d0d0d0d0d0d0d0d0d0d0d0d0d0', 0, false)",
  };
}

}  // namespace tb::mlflow_fixture
