// A SQLite store in a scratch directory holding one run (experiment "e"): what tests that
// write a run's series and read them back begin with.
#pragma once

#include <cstdint>
#include <cstdlib>
#include <memory>
#include <string>

#include "store/store.h"
#include "tests/helpers/scratch_directory.h"

namespace tb {

struct ScratchRun {
  ScratchRun(const std::string& name, int64_t start_ms) : dir(name) {
    store = Store::Open((dir.path() / "s.db").string()).value();
    run.id = NewRunId();
    run.experiment = "e";
    run.start_ms = start_ms;
    if (!store->EnsureExperiment("e").ok() || !store->CreateRun(run).ok()) std::abort();
  }

  ScratchDirectory dir;
  std::unique_ptr<Store> store;
  RunRecord run;
};

}  // namespace tb
