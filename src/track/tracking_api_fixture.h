// The fixture of the tracking API's tests: a store, the API served over real HTTP on a
// loopback port, and a client that posts requests shaped as MLflow's REST documentation
// shows them.
#pragma once

#include <gtest/gtest.h>
#include <httplib.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <set>
#include <thread>

#include "base/secret.h"
#include "store/series_writer.h"
#include "tests/helpers/scratch_directory.h"
#include "track/tracking_api.h"

namespace tb {

using json = nlohmann::json;

struct Answer {
  int status = 0;
  json body;
};

class TrackingApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    store_ = Store::Open((scratch_.path() / "t.db").string()).value();
    api_ = std::make_unique<TrackingApi>(*store_);
    server_ = std::make_unique<HttpServer>(std::vector<ApiHandler>{api_->Handler()});
    ASSERT_TRUE(server_->Start(TrackingApi::ServerOptions()).ok());
    client_ = std::make_unique<httplib::Client>("127.0.0.1", server_->port());
  }
  void TearDown() override {
    server_->Stop();
    api_.reset();
  }

  static Answer Parse(const httplib::Result& r) {
    if (!r) return {-1, {}};
    return {r->status, json::parse(r->body, nullptr, false)};
  }
  Answer Post(const std::string& endpoint, const std::string& body) {
    return Parse(client_->Post("/api/2.0/mlflow/" + endpoint, body, "application/json"));
  }
  Answer Post(const std::string& endpoint, const json& body) { return Post(endpoint, body.dump()); }
  // Another method with a JSON body, as MLflow's clients send PATCH and DELETE.
  Answer Send(const std::string& method, const std::string& endpoint, const json& body = json::object()) {
    httplib::Request req;
    req.method = method;
    req.path = "/api/2.0/mlflow/" + endpoint;
    req.body = body.dump();
    req.set_header("Content-Type", "application/json");
    return Parse(client_->send(req));
  }
  Answer Get(const std::string& endpoint_and_query) {
    return Parse(client_->Get("/api/2.0/mlflow/" + endpoint_and_query));
  }

  std::string CreateRun(const std::string& experiment = "exp") {
    Answer e = Post("experiments/create", json{{"name", experiment}});
    std::string experiment_id = e.status == 200 ? e.body["experiment_id"].get<std::string>()
                                                : Get("experiments/get-by-name?experiment_name=" + experiment)
                                                      .body["experiment"]["experiment_id"]
                                                      .get<std::string>();
    Answer r =
        Post("runs/create",
             json{{"experiment_id", experiment_id}, {"start_time", 1763777000000}, {"run_name", "r1"}});
    EXPECT_EQ(r.status, 200) << r.body.dump();
    return r.body["run"]["info"]["run_id"];
  }

  // The MLflow id of the experiment a run is in, as runs/get gives it.
  std::string ExperimentOf(const std::string& run_id) {
    return Get("runs/get?run_id=" + run_id).body["run"]["info"]["experiment_id"];
  }

  json History(const std::string& run_id, const std::string& key, const std::string& extra = "") {
    Answer h = Get("metrics/get-history?run_id=" + run_id + "&metric_key=" + key + extra);
    EXPECT_EQ(h.status, 200) << h.body.dump();
    return h.body;
  }

  static void ExpectError(const Answer& a, int status, const std::string& code) {
    EXPECT_EQ(a.status, status) << a.body.dump();
    EXPECT_EQ(a.body.value("error_code", ""), code) << a.body.dump();
    EXPECT_FALSE(a.body.value("message", "").empty());
  }

  ScratchDirectory scratch_{"tb-track"};
  std::unique_ptr<Store> store_;
  std::unique_ptr<TrackingApi> api_;
  std::unique_ptr<HttpServer> server_;
  std::unique_ptr<httplib::Client> client_;
};

}  // namespace tb
