#include "run/command.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdlib>

namespace tb {
namespace {

TEST(CommandTest, AScriptAloneRunsWithThePythonGiven) {
  CommandLine c = ResolveCommand({"train.py", "--batch-size", "128"}, "/usr/bin/python3");
  EXPECT_EQ(c.argv, (std::vector<std::string>{"/usr/bin/python3", "train.py", "--batch-size", "128"}));
  EXPECT_EQ(c.python, "/usr/bin/python3");
  EXPECT_EQ(c.script, "train.py");
  EXPECT_EQ(ScriptArguments(c.argv, c.script), (std::vector<std::string>{"--batch-size", "128"}));
}

TEST(CommandTest, TheScriptIsFoundInsideAProfilerCommand) {
  CommandLine c = ResolveCommand(
      {"nsys", "profile", "-o", "r", "/opt/py/bin/python3.11", "train.py", "--lr=0.1"}, "python3");
  EXPECT_EQ(c.argv.front(), "nsys");
  EXPECT_EQ(c.script, "train.py");
  EXPECT_EQ(c.python, "/opt/py/bin/python3.11");
  EXPECT_EQ(ParamsFromArguments(ScriptArguments(c.argv, c.script)), (KeyValues{{"lr", "0.1"}}));
}

TEST(CommandTest, AProgramWithoutAScriptKeepsItsWords) {
  CommandLine c = ResolveCommand({"./bench", "-n", "4", "--fast"}, "python3");
  EXPECT_EQ(c.argv, (std::vector<std::string>{"./bench", "-n", "4", "--fast"}));
  EXPECT_TRUE(c.script.empty());
  EXPECT_TRUE(c.python.empty());
  EXPECT_EQ(ParamsFromArguments(ScriptArguments(c.argv, c.script)),
            (KeyValues{{"n", "4"}, {"fast", "true"}}));
}

TEST(CommandTest, ExplicitParamsWinOverTheArguments) {
  KeyValues merged = MergeParams({{"lr", "0.1"}, {"epochs", "3"}}, {{"lr", "0.5"}, {"note", "x"}});
  EXPECT_EQ(merged, (KeyValues{{"lr", "0.5"}, {"epochs", "3"}, {"note", "x"}}));
}

bool Has(const std::vector<std::string>& env, const std::string& kv) {
  return std::find(env.begin(), env.end(), kv) != env.end();
}

// What radT sets for its scripts (radt/schedule/schedule.py), set as radT sets it: a script
// testing RADT_PRESENT or a listener's RADT_LISTENER_<NAME> sees what it would under radT,
// whatever the environment held before.
TEST(CommandTest, RadtsVariablesAreSetAsRadtSetsThem) {
  setenv("RADT_LISTENER_SMI", "True", 1);
  std::vector<std::string> env = ChildEnvironment({.run_id = "abc",
                                                   .store = "s.db",
                                                   .tracking_uri = "",
                                                   .experiment = "e",
                                                   .max_epochs = 0,
                                                   .python_dir = "",
                                                   .cuda_visible_devices = "",
                                                   .node_rank = -1,
                                                   .node = "",
                                                   .listeners = {"top", "free", "nvml"},
                                                   .devices = "0+1"});
  unsetenv("RADT_LISTENER_SMI");
  for (const char* kv : {"RADT_PRESENT=True", "RADT_RUN_ID=abc", "RADT_MANUAL_MODE=False", "SMI_GPU_ID=0+1",
                         "RADT_LISTENER_TOP=True", "RADT_LISTENER_FREE=True", "RADT_LISTENER_SMI=False",
                         "RADT_LISTENER_DCGMI=False", "RADT_LISTENER_MACMON=False"})
    EXPECT_TRUE(Has(env, kv)) << kv;
  EXPECT_FALSE(Has(env, "RADT_LISTENER_SMI=True")) << "the user's own value is replaced";
}

TEST(CommandTest, TheEnvironmentTellsTheScriptWhereToLogAndWhichGpus) {
  setenv("CUDA_VISIBLE_DEVICES", "0,1,2", 1);
  setenv("MLFLOW_RUN_ID", "someone-elses", 1);
  setenv("MLFLOW_EXPERIMENT_ID", "17", 1);
  setenv("MLFLOW_TRACKING_PASSWORD", "for-the-users-server", 1);
  unsetenv("CUDA_DEVICE_ORDER");
  std::vector<std::string> env = ChildEnvironment({.run_id = "abc",
                                                   .store = "sqlite:///tmp/s.db",
                                                   .tracking_uri = "http://127.0.0.1:5000",
                                                   .experiment = "sweep",
                                                   .max_epochs = 0,
                                                   .python_dir = "/opt/tb/python",
                                                   .cuda_visible_devices = "GPU-1234",
                                                   .node_rank = 1,
                                                   .node = "gpu-node-7"});
  // No run id (a script with a server of its own would look it up there), no experiment id:
  // start_run() creates the run in the experiment it names, which the port makes the run
  // trainbench started. No secret: the user's own, for their own server, stays.
  EXPECT_TRUE(Has(env, "TRAINBENCH_RUN_ID=abc"));
  EXPECT_FALSE(std::any_of(env.begin(), env.end(), [](const std::string& kv) {
    return kv.starts_with("MLFLOW_RUN_ID=") || kv.starts_with("MLFLOW_EXPERIMENT_ID=") ||
           kv.starts_with("TRAINBENCH_TOKEN=") || kv.starts_with("MLFLOW_TRACKING_TOKEN=");
  }));
  EXPECT_TRUE(Has(env, "MLFLOW_TRACKING_URI=http://127.0.0.1:5000"));
  EXPECT_TRUE(Has(env, "MLFLOW_EXPERIMENT_NAME=sweep"));
  EXPECT_TRUE(Has(env, "MLFLOW_TRACKING_PASSWORD=for-the-users-server"));
  // A user's MLFLOW_EXPERIMENT_NAME is theirs: the run follows it.
  setenv("MLFLOW_EXPERIMENT_NAME", "users-own", 1);
  std::vector<std::string> own = ChildEnvironment({.run_id = "abc",
                                                   .store = "s",
                                                   .tracking_uri = "http://127.0.0.1:5000",
                                                   .experiment = "sweep",
                                                   .max_epochs = 0,
                                                   .python_dir = "",
                                                   .cuda_visible_devices = "",
                                                   .node_rank = -1,
                                                   .node = ""});
  EXPECT_TRUE(Has(own, "MLFLOW_EXPERIMENT_NAME=users-own"));
  EXPECT_FALSE(Has(own, "MLFLOW_EXPERIMENT_NAME=sweep"));
  unsetenv("MLFLOW_EXPERIMENT_NAME");
  unsetenv("MLFLOW_TRACKING_PASSWORD");
  EXPECT_TRUE(Has(env, "CUDA_VISIBLE_DEVICES=GPU-1234"));
  EXPECT_FALSE(Has(env, "CUDA_VISIBLE_DEVICES=0,1,2"));
  EXPECT_TRUE(Has(env, "CUDA_DEVICE_ORDER=PCI_BUS_ID"));
  EXPECT_TRUE(Has(env, "PYTHONUNBUFFERED=1"));
  // A distributed run's part tells the script its node and rank (the client logs from rank 0).
  EXPECT_TRUE(Has(env, "TRAINBENCH_NODE_RANK=1"));
  EXPECT_TRUE(Has(env, "TRAINBENCH_NODE=gpu-node-7"));

  // A user's own choices stay: their GPUs when trainbench picks none, their device order.
  setenv("CUDA_DEVICE_ORDER", "FASTEST_FIRST", 1);
  env = ChildEnvironment({.run_id = "abc",
                          .store = "s",
                          .tracking_uri = "",
                          .experiment = "e",
                          .max_epochs = 0,
                          .python_dir = "",
                          .cuda_visible_devices = "",
                          .node_rank = -1,
                          .node = ""});
  EXPECT_TRUE(Has(env, "CUDA_VISIBLE_DEVICES=0,1,2"));
  EXPECT_TRUE(Has(env, "CUDA_DEVICE_ORDER=FASTEST_FIRST"));
  EXPECT_FALSE(Has(env, "CUDA_DEVICE_ORDER=PCI_BUS_ID"));
  EXPECT_FALSE(
      std::any_of(env.begin(), env.end(), [](const std::string& kv) { return kv.starts_with("MLFLOW_"); }));
  EXPECT_FALSE(std::any_of(env.begin(), env.end(),
                           [](const std::string& kv) { return kv.starts_with("TRAINBENCH_NODE"); }));
  unsetenv("CUDA_VISIBLE_DEVICES");
  unsetenv("CUDA_DEVICE_ORDER");
  unsetenv("MLFLOW_RUN_ID");
  unsetenv("MLFLOW_EXPERIMENT_ID");
}

}  // namespace
}  // namespace tb
