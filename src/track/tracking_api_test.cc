// The tracking API over real HTTP, with requests shaped as MLflow's REST API documentation
// shows them, and MLflow's error answers for bad ones: experiments, runs, search, params
// and tags, the requests refused, a confined API.
#include <gtest/gtest.h>

#include <regex>
#include <set>

#include "base/read_file.h"
#include "base/strings.h"
#include "track/tracking_api_fixture.h"

namespace tb {
namespace {

TEST_F(TrackingApiTest, ExperimentsCreateGetAndGetByName) {
  Answer created = Post("experiments/create", json{{"name", "resnet sweep"}});
  ASSERT_EQ(created.status, 200);
  std::string id = created.body["experiment_id"];
  Answer got = Get("experiments/get?experiment_id=" + id);
  ASSERT_EQ(got.status, 200);
  EXPECT_EQ(got.body["experiment"]["name"], "resnet sweep");
  EXPECT_EQ(got.body["experiment"]["lifecycle_stage"], "active");
  Answer by_name = Get("experiments/get-by-name?experiment_name=resnet%20sweep");
  EXPECT_EQ(by_name.body["experiment"]["experiment_id"], id);

  ExpectError(Post("experiments/create", json{{"name", "resnet sweep"}}), 400, "RESOURCE_ALREADY_EXISTS");
  ExpectError(Get("experiments/get?experiment_id=999"), 404, "RESOURCE_DOES_NOT_EXIST");
  ExpectError(Get("experiments/get-by-name?experiment_name=nope"), 404, "RESOURCE_DOES_NOT_EXIST");
  ExpectError(Post("experiments/create", json::object()), 400, "INVALID_PARAMETER_VALUE");
}

TEST_F(TrackingApiTest, TheDefaultExperimentIsZeroAsInEveryMlflowStore) {
  // `with mlflow.start_run():` with no experiment set creates its run in experiment "0".
  Answer run = Post("runs/create", json{{"start_time", 1763777000000}});
  ASSERT_EQ(run.status, 200) << run.body.dump();
  EXPECT_EQ(run.body["run"]["info"]["experiment_id"], "0");
  Answer zero = Get("experiments/get?experiment_id=0");
  ASSERT_EQ(zero.status, 200);
  EXPECT_EQ(zero.body["experiment"]["name"], "Default");
  EXPECT_EQ(Get("experiments/get-by-name?experiment_name=Default").body["experiment"]["experiment_id"], "0");
  EXPECT_EQ(store_->FindRun(run.body["run"]["info"]["run_id"].get<std::string>())->experiment, "Default");
}

TEST_F(TrackingApiTest, SearchRunsAsMlflowsClientsAskIt) {
  std::string exp = Post("experiments/create", json{{"name", "sweep"}}).body["experiment_id"];
  std::vector<std::string> ids;
  for (int i = 0; i < 3; ++i) {
    Answer r = Post("runs/create", json{{"experiment_id", exp},
                                        {"start_time", 1763777000000 + i * 1000},
                                        {"run_name", "lr" + std::to_string(i)}});
    std::string id = r.body["run"]["info"]["run_id"];
    ids.push_back(id);
    ASSERT_EQ(
        Post("runs/log-batch",
             json{{"run_id", id},
                  {"metrics",
                   {{{"key", "loss"}, {"value", 1.0 / (i + 1)}, {"timestamp", 1763777000000}, {"step", 0}}}},
                  {"params", {{{"key", "lr"}, {"value", std::to_string(i)}}}}})
            .status,
        200);
  }
  Post("runs/update", json{{"run_id", ids[2]}, {"status", "FINISHED"}});
  auto search = [&](json body) {
    body["experiment_ids"] = json::array({exp});
    return Post("runs/search", body);
  };
  auto names = [](const Answer& a) {
    std::vector<std::string> out;
    for (const json& r : a.body.value("runs", json::array())) out.push_back(r["info"]["run_name"]);
    return out;
  };
  // Newest first by default, as MLflow.
  EXPECT_EQ(names(search(json::object())), (std::vector<std::string>{"lr2", "lr1", "lr0"}));
  EXPECT_EQ(names(search({{"filter", "metrics.loss < 0.6"}, {"order_by", {"metrics.loss ASC"}}})),
            (std::vector<std::string>{"lr2", "lr1"}));
  EXPECT_EQ(names(search({{"filter", "params.lr = '0' and attributes.status = 'RUNNING'"}})),
            (std::vector<std::string>{"lr0"}));
  EXPECT_EQ(names(search({{"filter", "attributes.status = 'FINISHED'"}})), (std::vector<std::string>{"lr2"}));
  // Pages: max_results and the next_page_token of the answer.
  Answer first = search({{"max_results", 2}});
  ASSERT_EQ(first.status, 200);
  EXPECT_EQ(names(first).size(), 2u);
  ASSERT_TRUE(first.body.contains("next_page_token"));
  Answer second = search({{"max_results", 2}, {"page_token", first.body["next_page_token"]}});
  EXPECT_EQ(names(second), (std::vector<std::string>{"lr0"}));
  EXPECT_FALSE(second.body.contains("next_page_token"));
  // Each run as runs/get gives it, metrics, params and all.
  json run = search({{"filter", "params.lr = '1'"}}).body["runs"][0];
  EXPECT_EQ(run["data"]["metrics"][0]["value"], 0.5);
  // Mistakes are MLflow's errors.
  ExpectError(search({{"filter", "attributes.colour = 'red'"}}), 400, "INVALID_PARAMETER_VALUE");
  ExpectError(search({{"order_by", {"metrics.loss sideways"}}}), 400, "INVALID_PARAMETER_VALUE");
  ExpectError(Post("runs/search", json{{"experiment_ids", {"424242"}}}), 404, "RESOURCE_DOES_NOT_EXIST");

  // experiments/search lists Default too; a filter on the name.
  Answer experiments = Post("experiments/search", json{{"max_results", 100}});
  ASSERT_EQ(experiments.status, 200);
  std::set<std::string> listed;
  for (const json& e : experiments.body["experiments"]) listed.insert(e["name"]);
  EXPECT_EQ(listed, (std::set<std::string>{"Default", "sweep"}));
  Answer sweep = Post("experiments/search", json{{"filter", "name LIKE 'sw%'"}});
  ASSERT_EQ(sweep.body["experiments"].size(), 1u);
  EXPECT_EQ(sweep.body["experiments"][0]["experiment_id"], exp);
  // A deleted run leaves the default view and comes back when restored.
  ASSERT_EQ(Post("runs/delete", json{{"run_id", ids[0]}}).status, 200);
  EXPECT_EQ(names(search(json::object())), (std::vector<std::string>{"lr2", "lr1"}));
  EXPECT_EQ(names(search({{"run_view_type", "DELETED_ONLY"}})), (std::vector<std::string>{"lr0"}));
  Answer deleted = Get("runs/get?run_id=" + ids[0]);
  EXPECT_EQ(deleted.body["run"]["info"]["lifecycle_stage"], "deleted");
  EXPECT_EQ(deleted.body["run"]["data"]["tags"],
            json::parse(R"([{"key": "mlflow.runName", "value": "lr0"}])"))
      << "trainbench's deletion mark is not shown";
  ASSERT_EQ(Post("runs/restore", json{{"run_id", ids[0]}}).status, 200);
  EXPECT_EQ(names(search({{"run_view_type", "ALL"}})).size(), 3u);
  EXPECT_EQ(Get("runs/get?run_id=" + ids[0]).body["run"]["info"]["lifecycle_stage"], "active");
  ExpectError(Post("runs/delete", json{{"run_id", "0123456789abcdef0123456789abcdef"}}), 404,
              "RESOURCE_DOES_NOT_EXIST");
  // MLflow 3's client asks for logged models; there are none.
  EXPECT_EQ(Post("logged-models/search", json{{"experiment_ids", {exp}}}).body["models"], json::array());
}

TEST_F(TrackingApiTest, RunsCreateGetUpdate) {
  std::string run_id = CreateRun();
  ASSERT_EQ(run_id.size(), 32u);
  Answer got = Get("runs/get?run_id=" + run_id);
  ASSERT_EQ(got.status, 200);
  const json& info = got.body["run"]["info"];
  EXPECT_EQ(info["run_id"], run_id);
  EXPECT_EQ(info["run_uuid"], run_id);
  EXPECT_EQ(info["run_name"], "r1");
  EXPECT_EQ(info["status"], "RUNNING");
  EXPECT_EQ(info["start_time"], 1763777000000);
  // As an MLflow server that serves artifacts: a client elsewhere uploads through the server.
  EXPECT_EQ(info["artifact_uri"],
            "mlflow-artifacts:/" + info["experiment_id"].get<std::string>() + "/" + run_id + "/artifacts");

  Answer updated = Post(
      "runs/update",
      json{{"run_id", run_id}, {"status", "FINISHED"}, {"end_time", 1763777060000}, {"run_name", "final"}});
  ASSERT_EQ(updated.status, 200) << updated.body.dump();
  EXPECT_EQ(updated.body["run_info"]["status"], "FINISHED");
  EXPECT_EQ(updated.body["run_info"]["end_time"], 1763777060000);
  EXPECT_EQ(updated.body["run_info"]["run_name"], "final");
  EXPECT_EQ(store_->FindRun(run_id)->status, kFinished);

  ExpectError(Get("runs/get?run_id=0123456789abcdef0123456789abcdef"), 404, "RESOURCE_DOES_NOT_EXIST");
  ExpectError(Post("runs/update", json{{"run_id", run_id}, {"status", "DONE"}}), 400,
              "INVALID_PARAMETER_VALUE");
}

TEST_F(TrackingApiTest, ParamsTagsAndTheirErrors) {
  std::string run_id = CreateRun();
  EXPECT_EQ(Post("runs/log-parameter", json{{"run_id", run_id}, {"key", "lr"}, {"value", "0.1"}}).status,
            200);
  EXPECT_EQ(Post("runs/log-parameter", json{{"run_id", run_id}, {"key", "lr"}, {"value", "0.1"}}).status,
            200);
  ExpectError(Post("runs/log-parameter", json{{"run_id", run_id}, {"key", "lr"}, {"value", "0.2"}}), 400,
              "INVALID_PARAMETER_VALUE");
  EXPECT_EQ(Post("runs/set-tag", json{{"run_id", run_id}, {"key", "model"}, {"value", "cnn"}}).status, 200);
  EXPECT_EQ(Post("runs/set-tag", json{{"run_id", run_id}, {"key", "model"}, {"value", "vit"}}).status, 200);
  EXPECT_EQ(Post("runs/set-tag", json{{"run_id", run_id}, {"key", "gone"}, {"value", "x"}}).status, 200);
  EXPECT_EQ(Post("runs/delete-tag", json{{"run_id", run_id}, {"key", "gone"}}).status, 200);
  ExpectError(Post("runs/delete-tag", json{{"run_id", run_id}, {"key", "gone"}}), 404,
              "RESOURCE_DOES_NOT_EXIST");

  const json data = Get("runs/get?run_id=" + run_id).body["run"]["data"];
  EXPECT_EQ(data["params"], json::parse(R"([{"key": "lr", "value": "0.1"}])"));
  EXPECT_EQ(data["tags"],
            json::parse(R"([{"key": "model", "value": "vit"}, {"key": "mlflow.runName", "value": "r1"}])"));

  // A batch whose param changes a value stores nothing: not its metrics, not its tags.
  Answer refused =
      Post("runs/log-batch", json{{"run_id", run_id},
                                  {"params", {{{"key", "lr"}, {"value", "0.5"}}}},
                                  {"tags", {{{"key", "new"}, {"value", "1"}}}},
                                  {"metrics", {{{"key", "m"}, {"value", 1}, {"timestamp", 1}}}}});
  ExpectError(refused, 400, "INVALID_PARAMETER_VALUE");
  EXPECT_TRUE(History(run_id, "m")["metrics"].empty());
  EXPECT_EQ(store_->FindRun(run_id)->tags.size(), 1u);
}

TEST_F(TrackingApiTest, BadRequestsAreRefusedWholeWithMlflowErrors) {
  std::string run_id = CreateRun();
  ExpectError(Post("runs/log-batch", std::string("{not json")), 400, "MALFORMED_REQUEST");
  ExpectError(
      Post("runs/log-metric", json{{"run_id", run_id}, {"key", "loss"}, {"value", "abc"}, {"timestamp", 1}}),
      400, "INVALID_PARAMETER_VALUE");
  ExpectError(Post("runs/log-metric", json{{"run_id", run_id}, {"key", "loss"}, {"value", 1}}), 400,
              "INVALID_PARAMETER_VALUE");  // no timestamp
  ExpectError(
      Post("runs/log-metric", json{{"run_id", run_id}, {"key", "loss"}, {"value", 1}, {"timestamp", "soon"}}),
      400, "INVALID_PARAMETER_VALUE");
  for (const char* bad : {"", "/a", "a//b", "a/../b", "a/", "bad|name", "x\\y"}) {
    ExpectError(
        Post("runs/log-metric", json{{"run_id", run_id}, {"key", bad}, {"value", 1}, {"timestamp", 1}}), 400,
        "INVALID_PARAMETER_VALUE");
  }
  EXPECT_EQ(Post("runs/log-metric",
                 json{{"run_id", run_id}, {"key", "a..a/._./o_O/.e. x"}, {"value", 1}, {"timestamp", 1}})
                .status,
            200);
  ExpectError(
      Post(
          "runs/log-metric",
          json{{"run_id", "ffffffffffffffffffffffffffffffff"}, {"key", "l"}, {"value", 1}, {"timestamp", 1}}),
      404, "RESOURCE_DOES_NOT_EXIST");

  // 1001 metrics: refused, and the valid first thousand are not stored either.
  json metrics = json::array();
  for (int i = 0; i < 1001; ++i) metrics.push_back({{"key", "big"}, {"value", i}, {"timestamp", i}});
  ExpectError(Post("runs/log-batch", json{{"run_id", run_id}, {"metrics", metrics}}), 400,
              "INVALID_PARAMETER_VALUE");
  // One bad metric at the end of a batch: nothing of it stored.
  metrics.erase(metrics.begin() + 10, metrics.end());
  metrics.push_back({{"key", "big"}, {"value", "x"}, {"timestamp", 1}});
  ExpectError(Post("runs/log-batch", json{{"run_id", run_id}, {"metrics", metrics}}), 400,
              "INVALID_PARAMETER_VALUE");
  EXPECT_TRUE(History(run_id, "big")["metrics"].empty());

  json params = json::array();
  for (int i = 0; i < 101; ++i) params.push_back({{"key", "p" + std::to_string(i)}, {"value", "1"}});
  ExpectError(Post("runs/log-batch", json{{"run_id", run_id}, {"params", params}}), 400,
              "INVALID_PARAMETER_VALUE");
  ExpectError(Post("runs/log-parameter",
                   json{{"run_id", run_id}, {"key", "long"}, {"value", std::string(6001, 'x')}}),
              400, "INVALID_PARAMETER_VALUE");
  std::string huge =
      json{{"run_id", run_id}, {"tags", {{{"key", "t"}, {"value", std::string(1100000, 'x')}}}}}.dump();
  ExpectError(Post("runs/log-batch", huge), 400, "INVALID_PARAMETER_VALUE");
  ExpectError(Post("runs/no-such-call", json::object()), 404, "ENDPOINT_NOT_FOUND");
  ExpectError(Post("runs/log-metric", json{{"key", "l"}, {"value", 1}, {"timestamp", 1}}), 400,
              "INVALID_PARAMETER_VALUE");  // no run id
  EXPECT_TRUE(store_->FindRun(run_id)->params.empty());
}

// Requests as an attacker or an unlucky client sends them: refused with a clear error,
// never wrapped, never a crash; and -0.0 comes back as -0.0.
TEST_F(TrackingApiTest, HostileNumbersAndDocumentsAreRefused) {
  std::string run_id = CreateRun();
  std::string deep = std::string(60000, '[') + std::string(60000, ']');
  ExpectError(Post("runs/log-batch", deep), 400, "MALFORMED_REQUEST");
  ExpectError(Post("runs/log-metric", "{\"run_id\": \"" + run_id + "\", \"key\": " + std::string(40, '[') +
                                          "1" + std::string(40, ']') + "}"),
              400, "MALFORMED_REQUEST");
  // Brackets inside strings are text, not nesting.
  EXPECT_EQ(
      Post("runs/set-tag", json{{"run_id", run_id}, {"key", "t"}, {"value", std::string(100, '[')}}).status,
      200);
  // Integers beyond int64: 2^63 as a step, 2^64 - 1 as a timestamp, as numbers and as strings.
  for (const char* metric : {R"("value": 1, "timestamp": 18446744073709551615)",
                             R"("value": 1, "timestamp": 1, "step": 9223372036854775808)",
                             R"("value": 1, "timestamp": "18446744073709551615")",
                             R"("value": 1, "timestamp": 1, "step": "9223372036854775808")",
                             R"("value": 1, "timestamp": 1e300)"}) {
    ExpectError(Post("runs/log-metric", "{\"run_id\": \"" + run_id + "\", \"key\": \"big\", " + metric + "}"),
                400, "INVALID_PARAMETER_VALUE");
  }
  EXPECT_TRUE(History(run_id, "big")["metrics"].empty());
  // The largest int64 step is kept as it is.
  ASSERT_EQ(Post("runs/log-metric",
                 "{\"run_id\": \"" + run_id +
                     "\", \"key\": \"z\", \"value\": -0.0, \"timestamp\": 5, \"step\": 9223372036854775807}")
                .status,
            200);
  json z = History(run_id, "z")["metrics"][0];
  EXPECT_EQ(z["step"].get<int64_t>(), INT64_MAX);
  EXPECT_TRUE(std::signbit(z["value"].get<double>())) << z.dump();
  // Experiment names: no NUL or other control characters, at most 256 bytes.
  ExpectError(Post("experiments/create", std::string(R"({"name": "a\u0000b"})")), 400,
              "INVALID_PARAMETER_VALUE");
  ExpectError(Post("experiments/create", json{{"name", std::string(300, 'e')}}), 400,
              "INVALID_PARAMETER_VALUE");
  // A page token at the end of int64 does not wrap into a page.
  json far = History(run_id, "z", "&page_token=9223372036854775807&max_results=9223372036854775807");
  EXPECT_TRUE(far["metrics"].empty());
}

// What MlflowClient's delete_experiment, restore_experiment, rename_experiment,
// set_experiment_tag and delete_experiment_tag send, and what the user then sees.
TEST_F(TrackingApiTest, ExperimentsAreTaggedRenamedDeletedWithTheirRunsAndRestored) {
  std::string run_id = CreateRun("sweep");
  std::string id = Get("experiments/get-by-name?experiment_name=sweep").body["experiment"]["experiment_id"];
  ASSERT_EQ(Post("experiments/set-experiment-tag",
                 json{{"experiment_id", id}, {"key", "team"}, {"value", "systems"}})
                .status,
            200);
  json e = Get("experiments/get?experiment_id=" + id).body["experiment"];
  EXPECT_EQ(e["tags"], (json::array({{{"key", "team"}, {"value", "systems"}}})));
  auto searched = [&](const json& body) {
    std::vector<std::string> names;
    for (const json& x : Post("experiments/search", body).body.value("experiments", json::array()))
      names.push_back(x["name"]);
    return names;
  };
  EXPECT_EQ(searched(json{{"filter", "tags.team = 'systems'"}}), std::vector<std::string>{"sweep"});

  ASSERT_EQ(Post("experiments/delete", json{{"experiment_id", id}}).status, 200);
  EXPECT_EQ(Get("experiments/get?experiment_id=" + id).body["experiment"]["lifecycle_stage"], "deleted");
  EXPECT_EQ(searched(json::object()), std::vector<std::string>{"Default"});
  EXPECT_EQ(searched(json{{"view_type", "DELETED_ONLY"}}), std::vector<std::string>{"sweep"});
  // Its runs are deleted with it: gone from the default view, there in ALL, marked.
  EXPECT_TRUE(Post("runs/search", json{{"experiment_ids", {id}}}).body.value("runs", json::array()).empty());
  json all = Post("runs/search", json{{"experiment_ids", {id}}, {"run_view_type", "ALL"}}).body["runs"];
  ASSERT_EQ(all.size(), 1u);
  EXPECT_EQ(all[0]["info"]["lifecycle_stage"], "deleted");
  EXPECT_EQ(Get("runs/get?run_id=" + run_id).body["run"]["info"]["lifecycle_stage"], "deleted");
  ExpectError(Post("runs/create", json{{"experiment_id", id}}), 400, "INVALID_PARAMETER_VALUE");
  ExpectError(Post("experiments/update", json{{"experiment_id", id}, {"new_name", "x"}}), 400,
              "INVALID_PARAMETER_VALUE");

  ASSERT_EQ(Post("experiments/restore", json{{"experiment_id", id}}).status, 200);
  EXPECT_EQ(Get("runs/get?run_id=" + run_id).body["run"]["info"]["lifecycle_stage"], "active");
  ASSERT_EQ(Post("experiments/update", json{{"experiment_id", id}, {"new_name", "sweep-2"}}).status, 200);
  json renamed = Get("experiments/get-by-name?experiment_name=sweep-2").body["experiment"];
  EXPECT_EQ(renamed["experiment_id"], id);
  EXPECT_EQ(store_->FindRun(run_id)->experiment, "sweep-2");  // its runs go along
  ExpectError(Post("experiments/update", json{{"experiment_id", id}, {"new_name", "Default"}}), 400,
              "RESOURCE_ALREADY_EXISTS");
  ASSERT_EQ(Post("experiments/delete-experiment-tag", json{{"experiment_id", id}, {"key", "team"}}).status,
            200);
  EXPECT_TRUE(Get("experiments/get?experiment_id=" + id).body["experiment"]["tags"].empty());
  ExpectError(Post("experiments/delete-experiment-tag", json{{"experiment_id", id}, {"key", "team"}}), 404,
              "RESOURCE_DOES_NOT_EXIST");
  ExpectError(Post("experiments/delete", json{{"experiment_id", "0"}}), 400, "INVALID_PARAMETER_VALUE");
  ExpectError(Post("experiments/delete", json{{"experiment_id", "987654"}}), 404, "RESOURCE_DOES_NOT_EXIST");
  // MLflow 1.x's list, which older clients call: by id, Default (0) first, as in MLflow.
  json listed = Get("experiments/list").body["experiments"];
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(listed[0]["name"].get<std::string>() + " " + listed[1]["name"].get<std::string>(),
            "Default sweep-2");
}

TEST_F(TrackingApiTest, ASupervisedRunKeepsTheStatusItsProcessEarns) {
  std::string run_id = CreateRun();
  SeriesWriter writer(*store_, run_id);
  api_->AttachRun(run_id, &writer);
  EXPECT_EQ(Post("runs/update", json{{"run_id", run_id}, {"status", "FINISHED"}}).status, 200);
  EXPECT_EQ(store_->FindRun(run_id)->status, kRunning);
  // Its metrics go to the supervisor's writer and are readable at once.
  EXPECT_EQ(
      Post("runs/log-metric", json{{"run_id", run_id}, {"key", "loss"}, {"value", 2.5}, {"timestamp", 7}})
          .status,
      200);
  EXPECT_EQ(History(run_id, "loss")["metrics"][0]["value"], 2.5);
  server_->Stop();
  EXPECT_TRUE(writer.Close().ok());
}

// The API of `trainbench run`'s port, confined to its run: others are neither found by a
// search nor reachable by id, and experiments other than its own cannot be changed.
TEST_F(TrackingApiTest, AConfinedApiReachesItsRunAndTheRunsItCreates) {
  std::string other = CreateRun("theirs");
  std::string mine = CreateRun("mine");
  api_->Confine(mine);
  ExpectError(Get("runs/get?run_id=" + other), 403, "PERMISSION_DENIED");
  ExpectError(Post("runs/update", json{{"run_id", other}, {"run_name", "x"}}), 403, "PERMISSION_DENIED");
  ExpectError(Post("runs/set-tag", json{{"run_id", other}, {"key", "k"}, {"value", "v"}}), 403,
              "PERMISSION_DENIED");
  EXPECT_EQ(Get("runs/get?run_id=" + mine).status, 200);
  std::string theirs_id =
      Get("experiments/get-by-name?experiment_name=theirs").body["experiment"]["experiment_id"];
  std::string mine_id =
      Get("experiments/get-by-name?experiment_name=mine").body["experiment"]["experiment_id"];
  ExpectError(Post("experiments/update", json{{"experiment_id", theirs_id}, {"new_name", "x"}}), 403,
              "PERMISSION_DENIED");
  ExpectError(Post("experiments/delete", json{{"experiment_id", theirs_id}}), 403, "PERMISSION_DENIED");
  Answer found = Post("runs/search", json{{"experiment_ids", json::array({theirs_id, mine_id})}});
  ASSERT_EQ(found.status, 200);
  ASSERT_EQ(found.body["runs"].size(), 1u) << found.body.dump();
  EXPECT_EQ(found.body["runs"][0]["info"]["run_id"], mine);
  // What the script makes is its own.
  Answer made = Post("runs/create", json{{"experiment_id", theirs_id}});
  ASSERT_EQ(made.status, 200);
  std::string made_id = made.body["run"]["info"]["run_id"];
  EXPECT_EQ(Post("runs/set-tag", json{{"run_id", made_id}, {"key", "k"}, {"value", "v"}}).status, 200);
  Answer created = Post("experiments/create", json{{"name", "new"}});
  ASSERT_EQ(created.status, 200);
  EXPECT_EQ(Post("experiments/update",
                 json{{"experiment_id", created.body["experiment_id"]}, {"new_name", "newer"}})
                .status,
            200);
}

// What MLflow's server answers and scripts rely on: the mlflow.runName tag of a run named
// at creation and after a rename, tags given to create_experiment, ':' in metric names,
// a deleted run refused for logging until restored, and the REST API under /ajax-api/.
TEST_F(TrackingApiTest, NamesTagsDeletedRunsAndTheAjaxPrefixAsMlflowAnswers) {
  auto tag = [](const json& run, const std::string& key) -> std::string {
    for (const json& t : run["data"]["tags"])
      if (t["key"] == key) return t["value"];
    return "(none)";
  };
  std::string run_id = CreateRun();  // run_name "r1"
  EXPECT_EQ(tag(Get("runs/get?run_id=" + run_id).body["run"], "mlflow.runName"), "r1");
  ASSERT_EQ(Post("runs/update", json{{"run_id", run_id}, {"run_name", "r2"}}).status, 200);
  json got = Get("runs/get?run_id=" + run_id).body["run"];
  EXPECT_EQ(tag(got, "mlflow.runName"), "r2");
  EXPECT_EQ(got["info"]["run_name"], "r2");
  int names = 0;
  for (const json& t : got["data"]["tags"]) names += t["key"] == "mlflow.runName";
  EXPECT_EQ(names, 1);

  Answer made =
      Post("experiments/create",
           json{{"name", "tagged"}, {"tags", json::array({{{"key", "team"}, {"value", "vision"}}})}});
  ASSERT_EQ(made.status, 200) << made.body.dump();
  json experiment = Get("experiments/get?experiment_id=" + made.body["experiment_id"].get<std::string>())
                        .body["experiment"];
  ASSERT_EQ(experiment["tags"].size(), 1u) << experiment.dump();
  EXPECT_EQ(experiment["tags"][0]["value"], "vision");
  ExpectError(Post("experiments/create", json{{"name", "badly"}, {"tags", json::array({{{"key", "a|b"}}})}}),
              400, "INVALID_PARAMETER_VALUE");
  ExpectError(Get("experiments/get-by-name?experiment_name=badly"), 404, "RESOURCE_DOES_NOT_EXIST");

  json point{{"run_id", run_id}, {"key", "val:loss"}, {"value", 0.5}, {"timestamp", 1}, {"step", 0}};
  ASSERT_EQ(Post("runs/log-metric", point).status, 200);
  EXPECT_EQ(History(run_id, "val:loss")["metrics"].size(), 1u);

  ASSERT_EQ(Post("runs/delete", json{{"run_id", run_id}}).status, 200);
  point["step"] = 1;
  ExpectError(Post("runs/log-metric", point), 400, "INVALID_PARAMETER_VALUE");
  ExpectError(Post("runs/set-tag", json{{"run_id", run_id}, {"key", "k"}, {"value", "v"}}), 400,
              "INVALID_PARAMETER_VALUE");
  ExpectError(Post("runs/log-parameter", json{{"run_id", run_id}, {"key", "p"}, {"value", "1"}}), 400,
              "INVALID_PARAMETER_VALUE");
  EXPECT_EQ(History(run_id, "val:loss")["metrics"].size(), 1u) << "nothing logged while deleted";
  ASSERT_EQ(Post("runs/restore", json{{"run_id", run_id}}).status, 200);
  EXPECT_EQ(Post("runs/log-metric", point).status, 200);
  EXPECT_EQ(History(run_id, "val:loss")["metrics"].size(), 2u);

  Answer ajax = Parse(client_->Get("/ajax-api/2.0/mlflow/experiments/get-by-name?experiment_name=tagged"));
  ASSERT_EQ(ajax.status, 200) << ajax.body.dump();
  EXPECT_EQ(ajax.body["experiment"]["name"], "tagged");
}

}  // namespace

// docs/API.md's tracking table is the route table: every row routed and documented, with its
// method and scope, and nothing routed that the docs leave out.
TEST(TrackingRoutesTest, TheDocsListEveryRouteAndNoOther) {
  std::string doc;
  ASSERT_TRUE(ReadWholeFile(std::string(TRAINBENCH_TESTDATA) + "/../docs/API.md", &doc, nullptr));
  std::set<std::string> documented, routed;
  std::regex row(R"(\n\| (GET|POST|PUT|PATCH|DELETE) \| `([^`]+)` \| (read|write) \|)");
  for (auto it = std::sregex_iterator(doc.begin(), doc.end(), row); it != std::sregex_iterator(); ++it)
    documented.insert(Concat({(*it)[1].str(), " ", (*it)[2].str(), " ", (*it)[3].str()}));
  for (const Route& r : TrackingRoutes()) {
    EXPECT_TRUE(routed.insert(Concat({r.method, " ", r.pattern, " ", r.scope})).second) << r.pattern;
    EXPECT_EQ(r.scope, r.method == "GET" ? "read" : r.scope) << r.pattern;  // a GET changes nothing
  }
  EXPECT_EQ(documented, routed);
  EXPECT_GE(routed.size(), 60u);
}

// Routes by the table: a logged model's tag key keeps its '/', the registry's alias answers
// by method on one path, and a method the table lacks for a path is named.
TEST_F(TrackingApiTest, ThePathAndMethodPickTheRowAndAnUnroutedCallIsNamed) {
  std::string run_id = CreateRun();
  Answer model = Post("logged-models", json{{"experiment_id", ExperimentOf(run_id)},
                                            {"name", "model"},
                                            {"source_run_id", run_id},
                                            {"tags", {{{"key", "team/owner"}, {"value", "ml"}}}}});
  ASSERT_EQ(model.status, 200) << model.body.dump();
  std::string model_id = model.body["model"]["info"]["model_id"];
  EXPECT_EQ(Send("DELETE", "logged-models/" + model_id + "/tags/team/owner").status, 200);
  EXPECT_TRUE(Get("logged-models/" + model_id).body["model"]["info"]["tags"].empty());

  ASSERT_EQ(Post("registered-models/create", json{{"name", "m"}}).status, 200);
  ASSERT_EQ(
      Post("model-versions/create", json{{"name", "m"}, {"source", "runs:/" + run_id + "/model"}}).status,
      200);
  EXPECT_EQ(Post("registered-models/alias", json{{"name", "m"}, {"alias", "best"}, {"version", "1"}}).status,
            200);
  EXPECT_EQ(Get("registered-models/alias?name=m&alias=best").body["model_version"]["version"], "1");
  EXPECT_EQ(Send("DELETE", "registered-models/alias", {{"name", "m"}, {"alias", "best"}}).status, 200);
  ExpectError(Get("registered-models/alias?name=m&alias=best"), 400, "INVALID_PARAMETER_VALUE");

  Answer wrong = Send("PUT", "registered-models/create", {{"name", "m2"}});
  ExpectError(wrong, 404, "ENDPOINT_NOT_FOUND");
  EXPECT_EQ(wrong.body["message"], "No API endpoint PUT /api/2.0/mlflow/registered-models/create");
  ExpectError(Get("runs/nothing"), 404, "ENDPOINT_NOT_FOUND");
}

}  // namespace tb
