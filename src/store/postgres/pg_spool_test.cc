#include "store/postgres/pg_spool.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>

#include "tests/helpers/scratch_directory.h"

namespace tb::pg {
namespace {

Batch Sample(int n) {
  return {{"INSERT INTO runs(id) VALUES($1) ON CONFLICT DO NOTHING", {Text("run" + std::to_string(n))}},
          {"INSERT INTO chunks(id, data, min) VALUES($1, $2, $3)",
           {Int(n), Bytes(std::string("\0\x01\xff", 3)), Real(std::nullopt)}}};
}

bool Same(const Batch& a, const Batch& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    if (a[i].sql != b[i].sql || a[i].params.size() != b[i].params.size()) return false;
    for (size_t j = 0; j < a[i].params.size(); ++j) {
      const Param &x = a[i].params[j], &y = b[i].params[j];
      if (x.null != y.null || x.binary != y.binary || x.bytes != y.bytes) return false;
    }
  }
  return true;
}

TEST(SpoolTest, BatchesReadBackExactlyAndACutShortOneIsIgnored) {
  std::string bytes = EncodeBatch(Sample(1)) + EncodeBatch(Sample(2));
  std::vector<Batch> read = DecodeSpool(bytes);
  ASSERT_EQ(read.size(), 2u);
  EXPECT_TRUE(Same(read[0], Sample(1)));
  EXPECT_TRUE(Same(read[1], Sample(2)));
  EXPECT_TRUE(read[1][1].params[2].null);
  // A crash in the middle of the third batch: the two before it are still there.
  std::string third = EncodeBatch(Sample(3));
  EXPECT_EQ(DecodeSpool(bytes + third.substr(0, third.size() - 2)).size(), 2u);
  EXPECT_TRUE(DecodeSpool("garbage").empty());
}

TEST(SpoolTest, ReplaysInOrderThenRemovesItsFile) {
  ScratchDirectory dir("tb-spool");
  Spool spool(dir.path().string());
  EXPECT_FALSE(spool.active());
  ASSERT_TRUE(spool.Append(Sample(1)).ok());
  ASSERT_TRUE(spool.Append(Sample(2)).ok());
  EXPECT_TRUE(spool.active());
  EXPECT_EQ(spool.batches(), 2);
  std::string path = spool.path();
  EXPECT_TRUE(std::filesystem::exists(path));
  // The database fails in the middle: nothing is lost, the next replay starts again.
  int calls = 0;
  EXPECT_FALSE(
      spool.Replay([&](const Batch&) { return ++calls == 2 ? Status::Unavailable("gone") : Status::Ok(); })
          .ok());
  EXPECT_TRUE(spool.active());
  std::vector<int> order;
  ASSERT_TRUE(spool
                  .Replay([&](const Batch& b) {
                    order.push_back(std::stoi(b[0].params[0].bytes.substr(3)));
                    return Status::Ok();
                  })
                  .ok());
  EXPECT_EQ(order, (std::vector<int>{1, 2}));
  EXPECT_FALSE(spool.active());
  EXPECT_FALSE(std::filesystem::exists(path));
}

TEST(SpoolTest, AnotherProcessReplaysTheSpoolOfOneThatEndedButNotOfOneThatRuns) {
  ScratchDirectory dir("tb-spool");
  // A process that spooled and ended while the database was away.
  pid_t child = fork();
  if (child == 0) {
    Spool gone(dir.path().string());
    _exit(gone.Append(Sample(7)).ok() ? 0 : 1);
  }
  int status = 0;
  ASSERT_EQ(waitpid(child, &status, 0), child);
  ASSERT_EQ(WEXITSTATUS(status), 0);
  // This process is spooling too: its own file is not an orphan.
  Spool mine(dir.path().string());
  ASSERT_TRUE(mine.Append(Sample(8)).ok());
  Spool other(dir.path().string());
  std::vector<std::string> seen;
  std::vector<std::string> replayed = other.ReplayOrphans([&](const Batch& b) {
    seen.push_back(b[0].params[0].bytes);
    return Status::Ok();
  });
  // Only the ended process's spool: this one's is locked while it may still grow.
  ASSERT_EQ(replayed.size(), 1u);
  EXPECT_EQ(seen, (std::vector<std::string>{"run7"}));
  EXPECT_FALSE(std::filesystem::exists(replayed[0]));
  EXPECT_TRUE(std::filesystem::exists(mine.path()));
}

}  // namespace
}  // namespace tb::pg
