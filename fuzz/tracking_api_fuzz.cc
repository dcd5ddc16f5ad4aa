// MLflow tracking requests as any local process or remote client may send them.
#include <cstddef>
#include <cstdint>

#include "fuzz/api_store.h"
#include "track/tracking_api.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  // Never destroyed: its destructor writes out the runs, which at exit would run after the
  // codec's per-thread state is gone.
  static tb::TrackingApi* api = new tb::TrackingApi(tb::FuzzStore());
  tb::ApiRequest request = tb::FuzzRequest(std::string_view(reinterpret_cast<const char*>(data), size));
  if (!tb::TrackingApi::Handles(request.path)) request.path = "/api/2.0/mlflow/" + request.path;
  (void)api->Handle(request);
  return 0;
}
