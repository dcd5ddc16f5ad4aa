// The tracking API served over HTTP (cpp-httplib) on its own threads. `trainbench run`
// starts one on 127.0.0.1 with a free port for the script it supervises.
#pragma once

#include <memory>
#include <string>
#include <thread>

#include "base/status.h"
#include "track/tracking_api.h"

namespace httplib {
class Server;
}

namespace tb {

class TrackingServer {
 public:
  explicit TrackingServer(TrackingApi& api);
  ~TrackingServer();  // stops
  TrackingServer(const TrackingServer&) = delete;
  TrackingServer& operator=(const TrackingServer&) = delete;

  // Listens on host:port (port 0: a free one) and serves on background threads.
  Status Start(const std::string& host = "127.0.0.1", int port = 0);
  // Stops accepting and waits for requests in flight.
  void Stop();
  int port() const { return port_; }
  // "http://127.0.0.1:PORT", for MLFLOW_TRACKING_URI.
  std::string Url() const;

 private:
  TrackingApi& api_;
  std::unique_ptr<httplib::Server> server_;
  std::thread thread_;
  std::string host_;
  int port_ = 0;
};

}  // namespace tb
