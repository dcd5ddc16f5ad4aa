// `trainbench schedule FILE.csv`, and radT's form without a subcommand
// (`trainbench [-r] exp.csv`, `trainbench [-e N -c mps ...] train.py ARGS`).
#include <unistd.h>

#include <cstdlib>

#include "cli/cli.h"
#include "cli/radt_form.h"
#include "schedule/gpu_sharing.h"
#include "schedule/scheduler.h"

namespace tb::cli {

int CommandSchedule(ScheduleOptions o) {
  if (o.python.empty()) {
    const char* python_env = std::getenv("TRAINBENCH_PYTHON");
    o.python = python_env != nullptr ? python_env : "";
  }
  if (o.store.empty()) o.store = StoreFromEnvironment();
  o.color = isatty(STDOUT_FILENO) != 0;
  Result<int> code = RunSchedule(o);
  if (!code.ok()) return Fail(code.status());
  return *code;
}

int CommandRadt(const RadtCommand& c) {
  // A script without -d runs on GPU 0 as in radT, where nvidia-smi lists one.
  bool has_gpu = false;
  if (c.is_script() && c.devices.empty()) {
    Result<std::vector<SmiGpu>> gpus = ListGpus();
    has_gpu = gpus.ok() && !gpus->empty();
  }
  ScheduleOptions o = ScheduleFor(c, has_gpu);
  o.store = c.store;
  return CommandSchedule(o);
}

}  // namespace tb::cli
