// The query parameters of `trainbench serve`'s JSON API, as any page or script may send them.
#include <cstddef>
#include <cstdint>

#include "fuzz/api_store.h"
#include "serve/serve_api.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  static tb::ServeApi api(tb::FuzzStore());
  tb::ApiRequest request = tb::FuzzRequest(std::string_view(reinterpret_cast<const char*>(data), size));
  if (request.path.rfind("/api/v1/", 0) != 0) request.path = "/api/v1/" + request.path;
  tb::ApiResponse response = api.Handle(request);
  // A streamed answer is drained, as the server would send it.
  if (response.stream) {
    std::string piece;
    for (int i = 0; i < 100000 && response.stream(piece); ++i) piece.clear();
  }
  return 0;
}
