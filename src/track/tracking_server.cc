#include "track/tracking_server.h"

#include <httplib.h>

namespace tb {
namespace {

// Artifacts (checkpoints, models) can be large; JSON calls are held to 1 MB by the API.
constexpr size_t kMaxPayloadBytes = size_t{1} << 30;

void Serve(TrackingApi& api, const httplib::Request& req, httplib::Response& res) {
  ApiRequest request;
  request.method = req.method;
  request.path = req.path;
  for (const auto& [k, v] : req.params) request.query.emplace(k, v);
  request.body = req.body;
  ApiResponse response = api.Handle(request);
  res.status = response.status;
  res.set_content(response.body, response.content_type);
}

}  // namespace

TrackingServer::TrackingServer(TrackingApi& api) : api_(api) {}

TrackingServer::~TrackingServer() { Stop(); }

Status TrackingServer::Start(const std::string& host, int port) {
  server_ = std::make_unique<httplib::Server>();
  server_->set_payload_max_length(kMaxPayloadBytes);
  // The Python client keeps one connection open for the whole run.
  server_->set_keep_alive_max_count(1000000);
  server_->set_keep_alive_timeout(60);
  // Headers and body are written separately: without TCP_NODELAY the body waits for the
  // client's delayed ACK, 40 ms per request.
  server_->set_tcp_nodelay(true);
  auto handler = [this](const httplib::Request& req, httplib::Response& res) { Serve(api_, req, res); };
  const char* pattern = R"(/api/2\.0/.*)";
  server_->Get(pattern, handler);
  server_->Post(pattern, handler);
  server_->Put(pattern, handler);
  host_ = host;
  port_ = port == 0 ? server_->bind_to_any_port(host) : (server_->bind_to_port(host, port) ? port : -1);
  if (port_ <= 0) {
    return Status::Unavailable("cannot listen on " + host + ":" + std::to_string(port) +
                               " for the tracking API; is the port in use?");
  }
  thread_ = std::thread([this] { server_->listen_after_bind(); });
  // bind_to_*_port already listens: connections made from now on wait in the backlog.
  return Status::Ok();
}

void TrackingServer::Stop() {
  if (!server_) return;
  server_->stop();
  if (thread_.joinable()) thread_.join();
  server_.reset();
}

std::string TrackingServer::Url() const { return "http://" + host_ + ":" + std::to_string(port_); }

}  // namespace tb
