// What a store holds that trainbench did not finish writing, served as it is: a chunk row
// whose point count was rewritten outside trainbench (an UPDATE on a shared PostgreSQL
// store, a SQLite file someone hands you) sizes nothing, is left out, and the rest of its
// series is served; a run whose trainbench was killed is not shown RUNNING for ever; a
// burst of full-resolution reads cannot take the server's memory.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include "platform/process.h"
#include "serve/serve_api_fixture.h"
#include "tests/helpers/sqlite_script.h"

namespace tb {
namespace {

// Pulls a streamed answer whole, as the server does.
std::string Whole(ApiResponse r) {
  std::string body = r.body;
  while (r.stream && r.stream(body)) {
  }
  return body;
}

TEST_F(ServeApiTest, AChunkWhoseCountWasRewrittenIsLeftOutAndTheRestIsServed) {
  constexpr int kPoints = 3 * 4096;  // three sealed chunks
  {
    SeriesWriter writer(*store_, run_.id);
    for (int i = 0; i < kPoints; ++i)
      writer.Append("gpu.power.draw_watts", "gpu=0", {kStart + i * 100, 100.0 + i % 7, kNoStep});
    ASSERT_TRUE(writer.Close().ok());
  }
  ASSERT_TRUE(store_->FinishRun(run_.id, kStart + kPoints * 100, kFinished, 0, std::nullopt, "").ok());
  int64_t series = store_->ListSeries(run_.id).value()[0].id;
  std::vector<ChunkRecord> chunks =
      store_->ReadChunks({.series = {series}, .part = ChunkPart::kInfo}).value();
  ASSERT_EQ(chunks.size(), 3u);
  std::string db = (scratch_.path() / "s.db").string();
  for (const char* count : {"-1", "4611686018427387904", "-4611686018427387904", "1000000000000"}) {
    SCOPED_TRACE(count);
    RunSqlite(db, {"UPDATE chunks SET count = " + std::string(count) +
                   " WHERE id = " + std::to_string(chunks[1].id)});
    api_ = std::make_unique<ServeApi>(*store_);  // nothing cached from before
    ApiResponse exact =
        Call("series", {{"runs", run_.id}, {"metric", "gpu.power.draw_watts"}, {"x", "wall"}});
    ASSERT_EQ(exact.status, 200) << exact.body;
    json s = json::parse(Whole(std::move(exact)))["series"][0];
    EXPECT_EQ(s["y"].size(), 2u * 4096) << "the two sound chunks";
    for (const char* budget : {"400", "4000"}) {
      ApiResponse chart =
          Call("series", {{"runs", run_.id}, {"metric", "gpu.power.draw_watts"}, {"budget", budget}});
      EXPECT_EQ(chart.status, 200) << chart.body;
    }
    ApiResponse csv = Call("export", {{"runs", run_.id}, {"format", "csv"}});
    ASSERT_EQ(csv.status, 200) << csv.body;
    std::string text = Whole(std::move(csv));
    EXPECT_EQ(std::count(text.begin(), text.end(), '\n'), 2 * 4096 + 1) << "a header and the sound points";
    EXPECT_EQ(Call("runs", {{"experiment", run_.experiment}}).status, 200);
  }
}

// `trainbench run` killed with SIGKILL writes no end: its run stays RUNNING in the store.
// The runs list and the run's page say UNFINISHED once its supervisor on this host is gone,
// as `ls` does; a run whose supervisor lives is RUNNING.
TEST_F(ServeApiTest, ARunWhoseTrainbenchWasKilledIsShownUnfinished) {
  pid_t gone = fork();
  if (gone == 0) _exit(0);
  ASSERT_GT(gone, 0);
  waitpid(gone, nullptr, 0);
  run_.host = HostName();
  run_.supervisor_pid = gone;
  run_.id = NewRunId();
  ASSERT_TRUE(store_->CreateRun(run_).ok());
  RunRecord alive = run_;
  alive.id = NewRunId();
  alive.supervisor_pid = getpid();
  ASSERT_TRUE(store_->CreateRun(alive).ok());
  ApiResponse listed = Call("runs", {{"experiment", run_.experiment}});
  ASSERT_EQ(listed.status, 200) << listed.body;
  std::map<std::string, std::string> status;
  json runs = json::parse(listed.body)["runs"];
  for (const json& r : runs) status[r["id"].get<std::string>()] = r["status"].get<std::string>();
  EXPECT_EQ(status[run_.id], "UNFINISHED");
  EXPECT_EQ(status[alive.id], "RUNNING");
  EXPECT_EQ(json::parse(Call("runs/" + run_.id, {}).body)["status"], "UNFINISHED");
}

// Full-resolution reads (a series without a budget, an export) stream one series at a time
// and hold a place while they do: beyond four at once, 429 with what to do; a place is free
// again once its answer is sent (or its client gone).
TEST_F(ServeApiTest, FullResolutionReadsBeyondFourAtOnceAreAskedToWait) {
  {
    SeriesWriter writer(*store_, run_.id);
    for (int i = 0; i < 100; ++i)
      writer.Append("gpu.power.draw_watts", "gpu=0", {kStart + i * 100, 100.0, kNoStep});
    ASSERT_TRUE(writer.Close().ok());
  }
  std::multimap<std::string, std::string> exact = {{"runs", run_.id}, {"metric", "gpu.power.draw_watts"}};
  std::vector<ApiResponse> streaming;
  for (int i = 0; i < ServeApi::kMaxFullReads; ++i) {
    streaming.push_back(i % 2 == 0 ? Call("series", exact) : Call("export", {{"runs", run_.id}}));
    ASSERT_EQ(streaming.back().status, 200) << streaming.back().body;
  }
  ApiResponse refused = Call("series", exact);
  EXPECT_EQ(refused.status, 429);
  EXPECT_NE(refused.body.find("ask again"), std::string::npos) << refused.body;
  EXPECT_EQ(Call("export", {{"runs", run_.id}}).status, 429);
  // A chart with a budget is not a full read.
  std::multimap<std::string, std::string> chart = exact;
  chart.emplace("budget", "400");
  EXPECT_EQ(Call("series", chart).status, 200);
  Whole(std::move(streaming.back()));
  streaming.pop_back();  // sent: its place is free
  EXPECT_EQ(Call("series", exact).status, 200);
}

}  // namespace
}  // namespace tb
