// The points of an import that a store does not hold yet, by MLflow's identity of a point
// (its timestamp, step and value: the key of MLflow's metrics table), not by position in
// time: MLflow may receive a point older than the last one imported (a client's retried
// batch, another process logging to the run), and a position would then lose it and write
// another twice.
#pragma once

#include <cstdint>
#include <vector>

#include "base/status.h"
#include "store/store.h"

namespace tb {

// The points of `values` that series `series_id` of `to` does not hold (each stored point
// accounts for one equal point of `values`; every NaN is equal to every other, as MLflow
// keeps is_nan rather than its bits). Reads the series whole.
Result<std::vector<Point>> NotHeld(Store& to, int64_t series_id, const std::vector<Point>& values);

}  // namespace tb
