// The start gate: the runs of one workload start their commands together, however long
// each takes to set itself up (store, NVML, listeners, tracking server).
//
// The scheduler opens a gate (two pipes) and starts each `trainbench run` with
// TRAINBENCH_START_GATE=READY_FD,GATE_FD in its environment. A run sets itself up, writes
// one byte on READY and waits until GATE reads end-of-file; the scheduler closes its end
// of GATE once every run said it is ready, ended, or a minute passed.
#pragma once

#include <cstddef>
#include <string>

#include "base/status.h"

namespace tb {

// The scheduler's side.
class StartGate {
 public:
  StartGate() = default;
  ~StartGate();
  StartGate(const StartGate&) = delete;
  StartGate& operator=(const StartGate&) = delete;

  // Makes the pipes; the children inherit only their ends.
  Status Create();
  // "TRAINBENCH_START_GATE=READY_FD,GATE_FD", for each run's environment.
  std::string Environment() const;
  // Closes the children's ends here, waits until `runs` of them said they are ready (or all
  // ended, or `timeout_ms` passed), then opens the gate.
  void OpenWhenReady(size_t runs, int64_t timeout_ms = 60'000);

 private:
  void CloseAll();
  int ready_[2] = {-1, -1};
  int gate_[2] = {-1, -1};
};

// A run's side: the descriptors handed over by the scheduler, or none.
struct GatePass {
  int ready_fd = -1;
  int gate_fd = -1;
};

// Takes the gate from TRAINBENCH_START_GATE and removes the variable, so that nothing this
// process starts sees it; the descriptors are made close-on-exec. {-1, -1} without one.
GatePass TakeStartGate();

// Says this run is set up, then waits until the gate opens (at most `timeout_ms`: a
// scheduler gone astray must not hold the run forever); closes both descriptors.
void WaitAtStartGate(GatePass pass, int64_t timeout_ms = 120'000);

}  // namespace tb
