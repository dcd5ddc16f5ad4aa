// The trainbench binary end to end, with real child processes: what a user sees on the
// terminal, in exit codes and in the store afterwards.
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "base/strings.h"
#include "platform/process.h"
#include "query/summary.h"
#include "store/store.h"
#include "tests/helpers/cli_fixture.h"

namespace tb {
namespace {

double Mean(const std::vector<Point>& points) { return Summarize(points).mean; }

TEST_F(CliTest, BurnerAtHalfACoreIsMeasuredWithinAFewPoints) {
  Shell r = Trainbench("run -q -i 200ms -l top -- " + kBurner + " --duty 0.5 --seconds 4 --report truth.txt");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  EXPECT_EQ(run.status, kFinished);
  auto [cpu, wall] = BurnerTruth();
  double truth = cpu / wall;
  std::vector<Point> measured = Series(*store, run.id, "proc.cpu.utilization_ratio");
  ASSERT_GE(measured.size(), 15u);
  EXPECT_NEAR(Mean(measured), truth, 0.05) << "burner says it used " << truth << " cores";
  EXPECT_NEAR(truth, 0.5, 0.15);  // the burner itself kept to its duty cycle
}

// radT's free listener: what free(1) prints, checked against free -b itself read during
// the run (totals exactly, used and available within what a second of other processes moves).
TEST_F(CliTest, TheFreeListenerRecordsWhatFreeShows) {
  Shell r = Trainbench("run -i 200ms -l free -- sh -c 'sleep 0.5; free -b; sleep 0.5'");
  ASSERT_EQ(r.code, 0) << r.err;
  std::map<std::string, std::vector<double>> shown;  // "Mem:", "Swap:" -> free -b's columns
  for (std::string_view line : Split(r.out, '\n')) {
    std::vector<std::string_view> f = SplitWhitespace(line);
    if (f.size() < 4 || (f[0] != "Mem:" && f[0] != "Swap:")) continue;
    for (size_t i = 1; i < f.size(); ++i) shown[std::string(f[0])].push_back(ParseDouble(f[i]).value());
  }
  ASSERT_EQ(shown["Mem:"].size(), 6u) << r.out;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  auto last = [&](const char* metric) {
    std::vector<Point> p = Series(*store, run.id, metric, "listener=free");
    EXPECT_FALSE(p.empty()) << metric;
    return p.empty() ? -1.0 : p.back().value;
  };
  const std::vector<double>& mem = shown["Mem:"];  // total used free shared buff/cache available
  EXPECT_EQ(last("host.memory.total_bytes"), mem[0]);
  EXPECT_NEAR(last("host.memory.used_bytes"), mem[1], 0.02 * mem[0]);
  EXPECT_NEAR(last("host.memory.free_bytes"), mem[2], 0.02 * mem[0]);
  EXPECT_NEAR(last("host.memory.buff_cache_bytes"), mem[4], 0.02 * mem[0]);
  EXPECT_NEAR(last("host.memory.available_bytes"), mem[5], 0.02 * mem[0]);
  EXPECT_EQ(last("host.swap.total_bytes"), shown["Swap:"].at(0));
  EXPECT_EQ(last("host.memory_swap.total_bytes"), mem[0] + shown["Swap:"].at(0));
  size_t from_free = 0;
  for (const SeriesInfo& series : store->ListSeries(run.id).value())
    from_free += series.labels == "listener=free" && StartsWith(series.metric, "host.");
  EXPECT_EQ(from_free, 12u) << "radT's twelve Free series";
}

TEST_F(CliTest, ProcessTreeWithChildrenIsAttributedInFull) {
  Shell r = Trainbench("run -q -i 200ms -l top -- " + kBurner +
                       " --duty 0.4 --seconds 4 --children 2 --child-duty 0.3 --report truth.txt");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  auto [cpu, wall] = BurnerTruth();
  std::vector<Point> measured = Series(*store, run.id, "proc.cpu.utilization_ratio");
  EXPECT_NEAR(Mean(measured), cpu / wall, 0.08);
  EXPECT_GT(cpu / wall, 0.7);  // the children's share is in the truth, so in the measurement
  // No sample beyond what three processes at under half a core each can use (a tick right
  // after another once read as 50 cores).
  EXPECT_LT(Summarize(measured).max, 2.0);
  EXPECT_EQ(Summarize(Series(*store, run.id, "proc.processes.count")).max, 3);
}

TEST_F(CliTest, SigkillOfTrainbenchLeavesAReadableStore) {
  SpawnOptions o;
  o.argv = {kTrainbench, "run", "--store", db_,      "-q",   "-i",        "100ms", "-l",
            "top+net",   "--",  kBurner,   "--duty", "0.05", "--seconds", "5"};
  o.stdout_mode = Stdio::kDevNull;
  o.stderr_mode = Stdio::kDevNull;
  ChildProcess tb = ChildProcess::Spawn(o).value();
  std::this_thread::sleep_for(std::chrono::milliseconds(3000));
  ASSERT_EQ(kill(tb.pid(), SIGKILL), 0);
  auto killed_at = std::chrono::system_clock::now();
  ASSERT_TRUE(tb.Wait().ok());
  int64_t killed_ms =
      std::chrono::duration_cast<std::chrono::milliseconds>(killed_at.time_since_epoch()).count();

  Shell show = Trainbench("show tb_burner");
  ASSERT_EQ(show.code, 0) << show.err;
  EXPECT_NE(show.out.find("UNFINISHED"), std::string::npos) << show.out;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  EXPECT_EQ(run.status, kRunning);
  std::vector<Point> memory = Series(*store, run.id, "host.memory.used_bytes");
  // About 30 ticks were taken; at most the last second's may be lost.
  ASSERT_GE(memory.size(), 15u);
  EXPECT_GE(memory.back().time_ms, killed_ms - 1600);
  EXPECT_TRUE(fs::exists(store->GetArtifact(run.id, "stdout.log")->path));
  // Its duration is unknown, not a figure that keeps growing.
  Shell ls = Trainbench("ls");
  EXPECT_NE(ls.out.find("UNFINISHED"), std::string::npos) << ls.out;
  EXPECT_NE(ls.out.find("        -  "), std::string::npos) << ls.out;
  EXPECT_EQ(ls.out.find("so far"), std::string::npos) << ls.out;
}

// What ls and show print comes from scripts and API clients: escape sequences are shown,
// not obeyed; a mistyped store path is an error, not a new empty store.
TEST_F(CliTest, ListingsShowWhatIsStoredSafely) {
  ASSERT_EQ(Trainbench("run -q -l top -n \"$(printf 'evil\\033]0;owned\\007\\033[31mred')\" -t \"k=$(printf "
                       "'a\\033[2Jb')\" -- true")
                .code,
            0);
  Shell ls = Trainbench("ls");
  EXPECT_EQ(ls.out.find('\033'), std::string::npos) << ls.out;
  EXPECT_NE(ls.out.find("evil\\x1b]0;owned\\x07\\x1b[31mred"), std::string::npos) << ls.out;
  Shell show = Trainbench("show " + OnlyRun(*OpenStore()).id);
  EXPECT_EQ(show.out.find('\033'), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("a\\x1b[2Jb"), std::string::npos) << show.out;
  // A model and a dataset record forged in the run's tags (fields of other types, not JSON)
  // show what of them is text; show does not fail.
  std::string id = OnlyRun(*OpenStore()).id;
  ASSERT_TRUE(OpenStore()
                  ->SetTags(id, {{"trainbench.model.m-forged", R"({"name": 5, "status": ["x"]})"},
                                 {"trainbench.dataset.ffff", R"({"tags": 3, "dataset": "x"})"},
                                 {"trainbench.dataset.eeee", "{not json"}})
                  .ok());
  Shell forged = Trainbench("show " + id);
  EXPECT_EQ(forged.code, 0) << forged.err;
  EXPECT_NE(forged.out.find("m-forged"), std::string::npos) << forged.out;
  for (const char* command : {"ls --store typo.db", "show --store typo.db evil",
                              "export --store typo.db evil", "report --store typo.db Default"}) {
    Shell r = Trainbench(command);
    EXPECT_NE(r.code, 0) << command;
    EXPECT_NE(r.err.find("no store at"), std::string::npos) << command << ": " << r.err;
  }
  EXPECT_FALSE(fs::exists(dir_ / "typo.db"));
}

// Bytes that are not UTF-8 (a Latin-1 argument, a legacy-encoded folder, an environment
// variable) do not abort a run: the command runs, the run finishes, and the manifest is
// JSON holding each such byte as \xHH.
// A hung nvidia-smi on PATH (a driver in trouble) costs a run at most the tool's
// deadline: it is killed with what it started, and the run says what timed out.
TEST_F(CliTest, AHungToolForTheManifestIsKilledWithItsChildrenAndSaid) {
  std::filesystem::create_directories(dir_ / "bin");
  std::ofstream(dir_ / "bin" / "nvidia-smi")
      << "#!/bin/sh\nsleep 300 &\necho $! > " << (dir_ / "child.pid").string() << "\nsleep 300\n";
  std::filesystem::permissions(dir_ / "bin" / "nvidia-smi", std::filesystem::perms::owner_all);
  env_ += " PATH=" + (dir_ / "bin").string() + ":$PATH";
  Shell r = Trainbench("run -l top -- sleep 1");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.err.find("nvidia-smi -q (no answer in 10 s, killed)"), std::string::npos) << r.err;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  bool said = false;
  for (const EventRecord& e : store->ListEvents(run.id).value())
    said |= e.kind == "manifest" && e.label.find("nvidia-smi") != std::string::npos;
  EXPECT_TRUE(said);
  EXPECT_NE(store->GetArtifact(run.id, "manifest.json")->content.find("\"timed_out\""), std::string::npos);
  // What the tool started is gone with it.
  std::string pid = Slurp(dir_ / "child.pid");
  ASSERT_FALSE(pid.empty());
  EXPECT_FALSE(std::filesystem::exists("/proc/" + std::string(Trim(pid)) + "/cmdline") &&
               Slurp("/proc/" + std::string(Trim(pid)) + "/cmdline").find("sleep") != std::string::npos);
}

// trainbench's own messages never pass a script's or tool's escape sequences to the
// terminal (they could clear it, retitle the window, hide text).
TEST_F(CliTest, EscapeSequencesInWhatTrainbenchSaysAreShownNotObeyed) {
  Shell r = Trainbench("run -l top -- sh -c 'exit 3' \"$(printf 'clear\\033[2J')\"");
  EXPECT_EQ(r.code, 3);
  EXPECT_EQ(r.err.find('\033'), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("\\x1b[2J"), std::string::npos) << r.err;
}

// trainbench killed outright (SIGKILL, the OOM killer) leaves nothing of its run running:
// a wrapper script's own children included, which the parent death signal never reached.
TEST_F(CliTest, WhenTrainbenchIsKilledTheWholeCommandGoesWithIt) {
  std::string pid_file = (dir_ / "grandchild.pid").string();
  SpawnOptions o;
  o.argv = {"/bin/sh", "-c",
            "cd " + dir_.string() + " && TRAINBENCH_STORE=" + db_ + " exec " + TRAINBENCH_BINARY +
                " run -q -l top -- sh -c 'sleep 300 & echo $! > " + pid_file + "; wait'"};
  ChildProcess tb = ChildProcess::Spawn(o).value();
  for (int i = 0; i < 100 && Slurp(pid_file).empty(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  std::string pid(Trim(Slurp(pid_file)));
  ASSERT_FALSE(pid.empty());
  ASSERT_TRUE(fs::exists("/proc/" + pid));
  kill(tb.pid(), SIGKILL);
  (void)tb.Wait();  // killed: its exit is known
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    gone =
        !fs::exists("/proc/" + pid) || Slurp("/proc/" + pid + "/cmdline").find("sleep") == std::string::npos;
    if (!gone) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  EXPECT_TRUE(gone) << "sleep " << pid << " outlived trainbench";
  if (!gone) kill(std::stoi(pid), SIGKILL);
}

// One version: the binary's (CMakeLists.txt) is the Python client's and the web UI's.
TEST_F(CliTest, TheBinaryTheClientAndTheWebUiShowOneVersion) {
  Shell r = Trainbench("--version");
  ASSERT_EQ(r.code, 0);
  std::string version(Trim(r.out.substr(r.out.find(' ') + 1)));
  ASSERT_FALSE(version.empty());
  std::string root = TRAINBENCH_SOURCE_DIR;
  EXPECT_NE(Slurp(root + "/python/pyproject.toml").find("version = \"" + version + "\""), std::string::npos);
  EXPECT_NE(Slurp(root + "/python/trainbench/__init__.py").find("__version__ = \"" + version + "\""),
            std::string::npos);
  EXPECT_NE(Slurp(root + "/web/package.json").find("\"version\": \"" + version + "\""), std::string::npos);
}

// docs/ARCHITECTURE.md is the map a newcomer reads: every source folder has its row.
TEST_F(CliTest, TheArchitectureMapNamesEverySourceFolder) {
  std::string map = Slurp(std::string(TRAINBENCH_SOURCE_DIR) + "/docs/ARCHITECTURE.md");
  ASSERT_FALSE(map.empty());
  int folders = 0;
  for (const auto& entry : fs::directory_iterator(std::string(TRAINBENCH_SOURCE_DIR) + "/src")) {
    if (!entry.is_directory()) continue;
    ++folders;
    std::string name = entry.path().filename().string();
    EXPECT_NE(map.find("| `" + name + "/` |"), std::string::npos)
        << name << "/ has no row in docs/ARCHITECTURE.md";
  }
  EXPECT_GT(folders, 10);
}

TEST_F(CliTest, BytesThatAreNotUtf8RunAndAreRecordedEscaped) {
  fs::create_directory(dir_ / "d\xe9");
  Shell r = Run("(cd 'd\xe9' && CUDA_FOO=$(printf '\\377') " + kTrainbench + " run --store " + db_ +
                " -l top -n 'n\xe9' -- /bin/echo 'caf\xe9')");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_EQ(r.out, "caf\xe9\n") << "the command got its bytes unchanged";
  RunRecord run = OnlyRun(*OpenStore());
  EXPECT_EQ(run.status, "FINISHED");
  std::string manifest = OpenStore()->GetArtifact(run.id, "manifest.json").value().content;
  nlohmann::json m = nlohmann::json::parse(manifest, nullptr, /*allow_exceptions=*/false);
  ASSERT_FALSE(m.is_discarded()) << manifest;
  EXPECT_EQ(m["command"][1], "caf\\xe9");
  EXPECT_TRUE(m["working_directory"].get<std::string>().ends_with("/d\\xe9")) << m["working_directory"];
  EXPECT_EQ(m["environment"]["CUDA_FOO"], "\\xff");
}

// The training command does not outlive a SIGKILLed trainbench: it gets SIGTERM.
TEST_F(CliTest, TheCommandEndsWhenTrainbenchIsKilled) {
  SpawnOptions o;
  o.argv = {kTrainbench, "run", "--store", db_, "-q", "-l", "top", "--", "sleep", "30"};
  o.stdout_mode = Stdio::kDevNull;
  o.stderr_mode = Stdio::kDevNull;
  ChildProcess tb = ChildProcess::Spawn(o).value();
  pid_t command = 0;
  for (int i = 0; i < 100 && command == 0; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::ifstream children("/proc/" + std::to_string(tb.pid()) + "/task/" + std::to_string(tb.pid()) +
                           "/children");
    children >> command;
  }
  ASSERT_NE(command, 0);
  ASSERT_EQ(kill(tb.pid(), SIGKILL), 0);
  ASSERT_TRUE(tb.Wait().ok());
  bool gone = false;
  for (int i = 0; i < 100 && !gone; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    std::ifstream stat("/proc/" + std::to_string(command) + "/stat");
    std::string line;
    std::getline(stat, line);
    gone = line.empty() || line.find(") Z ") != std::string::npos;  // gone, or a zombie of init's
  }
  EXPECT_TRUE(gone) << "sleep 30 (pid " << command << ") outlived trainbench";
}

// A store that cannot take the samples (here a file size limit, as a full disk would):
// the run says so, with how many samples, and trainbench exits non-zero.
TEST_F(CliTest, SamplesThatCannotBeStoredAreSaidSo) {
  ASSERT_EQ(Trainbench("run -q -l top -- true").code, 0);  // the store exists
  uintmax_t size = fs::file_size(db_);
  // Room for the run's record, not for its samples.
  std::string limited = "sh -c \"trap '' XFSZ; ulimit -f " + std::to_string(size / 1024 + 32) + "; exec " +
                        kTrainbench + " run --store " + db_ + " -i 100ms -l top+net -- sleep 1.5\"";
  Shell r = Trainbench("-h > /dev/null; " + limited);
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("samples could not be stored"), std::string::npos) << r.err;
}

TEST_F(CliTest, OutputFloodNeitherBlocksNorFillsMemory) {
  const int64_t kBytes = 100 << 20;
  SpawnOptions o;
  o.argv = {kTrainbench,           "run", "--store", db_, "-l", "top", "--", kBurner, "--print-bytes",
            std::to_string(kBytes)};
  o.stdout_mode = Stdio::kDevNull;  // echoed output goes nowhere; the log keeps it all
  ChildProcess tb = ChildProcess::Spawn(o).value();
  ExitInfo exit = tb.Wait().value();
  EXPECT_EQ(exit.ShellCode(), 0);
  EXPECT_LT(exit.usage.ru_maxrss, 64 * 1024) << "KiB";  // trainbench and the burner stayed small
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  ArtifactRecord log = store->GetArtifact(run.id, "stdout.log").value();
  EXPECT_EQ(log.size, kBytes);
  EXPECT_EQ(static_cast<int64_t>(fs::file_size(log.path)), kBytes);
}

TEST_F(CliTest, AClosedOutputPipeDoesNotStopTheRun) {
  // `head` exits after 100 bytes; the run goes on and its log keeps everything.
  std::string script = "cd " + dir_.string() + " && " + kTrainbench + " run --store " + db_ + " -l top -- " +
                       kBurner +
                       " --print-bytes 10485760 2>/dev/null | head -c 100 > /dev/null; exit ${PIPESTATUS[0]}";
  int status = std::system(("bash -c '" + script + "'").c_str());
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0);
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  EXPECT_EQ(run.status, kFinished);
  EXPECT_EQ(store->GetArtifact(run.id, "stdout.log")->size, 10485760);
}

TEST_F(CliTest, CommandNotFoundIsAFailedRunWithExitCode127) {
  Shell r = Trainbench("run -q -- no-such-program-anywhere --epochs 3");
  EXPECT_EQ(r.code, 127);
  EXPECT_NE(r.err.find("command not found: no-such-program-anywhere"), std::string::npos) << r.err;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  EXPECT_EQ(run.status, kFailed);
  EXPECT_EQ(run.exit_code, 127);
  EXPECT_NE(run.reason.find("command not found"), std::string::npos);
}

TEST_F(CliTest, ExitCodeAndStatusFollowTheChild) {
  EXPECT_EQ(Trainbench("run -q -n fails -- sh -c 'exit 3'").code, 3);
  EXPECT_EQ(Trainbench("run -q -n works -- true").code, 0);
  auto store = OpenStore();
  EXPECT_EQ(store->FindRun("fails")->status, kFailed);
  EXPECT_EQ(store->FindRun("fails")->exit_code, 3);
  EXPECT_EQ(store->FindRun("works")->status, kFinished);
  // The later run left the earlier one as it was.
  EXPECT_EQ(store->FindRun("fails")->reason, "exit code 3");
}

// radT's -t: a time limit is a planned end. SIGTERM, then SIGKILL after the grace; the run is
// FINISHED with the limit as its reason and trainbench exits 0, so that an experiment's
// resume does not run it again. A signal from the user is a kill (below).
TEST_F(CliTest, MaximumRunTimeEndsTheRunAsPlannedWithTermThenKill) {
  auto start = std::chrono::steady_clock::now();
  Shell r = Trainbench("run -q -n polite --max-time 1s -- sleep 30");
  EXPECT_EQ(r.code, 0) << r.err;
  Shell r2 = Trainbench(
      "run -q -n stubborn --max-time 1s --kill-grace 1s -- sh -c \"trap '' TERM; while :; do sleep 0.1; "
      "done\"");
  EXPECT_EQ(r2.code, 0) << r2.err;
  EXPECT_LT(std::chrono::steady_clock::now() - start, std::chrono::seconds(15));
  auto store = OpenStore();
  EXPECT_EQ(store->FindRun("polite")->status, kFinished);
  EXPECT_NE(store->FindRun("polite")->reason.find("maximum run time"), std::string::npos);
  EXPECT_EQ(store->FindRun("polite")->signal, SIGTERM);
  EXPECT_EQ(store->FindRun("stubborn")->status, kFinished);
  EXPECT_EQ(store->FindRun("stubborn")->signal, SIGKILL);
}

TEST_F(CliTest, SigintIsForwardedAndTheRunIsKilled) {
  SpawnOptions o;
  o.argv = {kTrainbench, "run", "--store", db_, "-q", "--", "sleep", "30"};
  o.stderr_mode = Stdio::kDevNull;
  ChildProcess tb = ChildProcess::Spawn(o).value();
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));
  kill(tb.pid(), SIGINT);
  ExitInfo exit = tb.Wait().value();
  EXPECT_EQ(exit.ShellCode(), 128 + SIGINT);  // sleep died of the forwarded SIGINT
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  EXPECT_EQ(run.status, kKilled);
  EXPECT_GT(run.end_ms, run.start_ms);
  EXPECT_FALSE(store->ListEvents(run.id)->empty());
}

TEST_F(CliTest, BadInputIsRefusedBeforeAnythingStarts) {
  Shell r = Trainbench("run -l top+gpu -- touch marker");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("unknown listener 'gpu'"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("top, ps, iostat, net"), std::string::npos) << r.err;
  r = Trainbench("run -i 50ms -- touch marker");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("100ms"), std::string::npos) << r.err;
  r = Trainbench("run -i often -- touch marker");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("not a duration"), std::string::npos) << r.err;
  std::ofstream(dir_ / "notes.txt") << "not a database at all, just some text that is long enough\n";
  r = Trainbench("run --store notes.txt -- touch marker");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("not a trainbench store"), std::string::npos) << r.err;
  r = Trainbench("run --store /nonexistent/dir/tb.db -- touch marker");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("does not exist"), std::string::npos) << r.err;
  r = Trainbench("run -p batch-size -- touch marker");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("KEY=VALUE"), std::string::npos) << r.err;
  r = Trainbench("run --distributed -- touch marker");  // outside Slurm: which part, of how many?
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("--nodes N and --node-rank R"), std::string::npos) << r.err;
  r = Trainbench("run --node-rank 1 -- touch marker");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("belong to --distributed"), std::string::npos) << r.err;
  EXPECT_FALSE(fs::exists(dir_ / "marker"));  // the command never ran
  EXPECT_TRUE(OpenStore()->ListRuns("")->empty());
}

// Without Slurm (torchrun on each node, say): the parts are given, with one run id. A part
// that starts before part 0 waits for the run; the run ends with the last part.
TEST_F(CliTest, PartsOfADistributedRunStartedByHandAreOneRun) {
  std::string id(32, 'd');
  std::string part = "run --distributed --nodes 2 --run-id " + id + " -q -l top -i 200ms -e dist";
  Shell r =
      Run("(" + env_ + " TRAINBENCH_STORE=" + db_ + " " + kTrainbench + " " + part +
          " --node-rank 1 --node second -- sleep 1.5 & sleep 0.5; " + env_ + " TRAINBENCH_STORE=" + db_ +
          " " + kTrainbench + " " + part + " --node-rank 0 --node first -- sleep 0.3; wait)");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  std::vector<RunRecord> runs = store->ListRuns("dist").value();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].id, id);
  EXPECT_EQ(runs[0].status, kFinished);
  EXPECT_GE(runs[0].end_ms - runs[0].start_ms, 1000) << "the run lasts until its later part ends";
  std::set<std::string> nodes;
  for (const SeriesInfo& s : store->ListSeries(id).value())
    if (s.metric == "host.cpu.utilization_ratio" && s.labels.starts_with("node=")) nodes.insert(s.labels);
  EXPECT_EQ(nodes, (std::set<std::string>{"node=first", "node=second"}));
}

TEST_F(CliTest, ScriptFormRecordsArgumentsAsParams) {
  std::ofstream(dir_ / "train.py") << "import sys\nprint('args', sys.argv[1:])\n";
  Shell r = Trainbench("run -e digits -w 1 -t owner=me -p lr=0.5 train.py --batch-size 128 --lr=0.1 --amp");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("args ['--batch-size', '128', '--lr=0.1', '--amp']"), std::string::npos) << r.out;
  Shell show = Trainbench("show train.py");
  ASSERT_EQ(show.code, 0) << show.err;
  EXPECT_NE(show.out.find("batch-size = 128"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("lr = 0.5"), std::string::npos) << show.out;  // --param wins
  EXPECT_NE(show.out.find("amp = true"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("owner = me"), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("host.cpu.utilization_ratio"), std::string::npos) << show.out;
  Shell ls = Trainbench("ls");
  EXPECT_NE(ls.out.find("experiment digits"), std::string::npos) << ls.out;
  EXPECT_NE(ls.out.find("workload 1"), std::string::npos) << ls.out;
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  std::string manifest = store->GetArtifact(run.id, "manifest.json")->content;
  EXPECT_NE(manifest.find("\"cpu_count\""), std::string::npos);
  EXPECT_NE(manifest.find("\"python\""), std::string::npos);
  EXPECT_NE(manifest.find("\"version\""), std::string::npos);
  EXPECT_NE(manifest.find("PYTHONUNBUFFERED"), std::string::npos);
  EXPECT_NE(manifest.find("\"packages\""), std::string::npos);
}

// The manifest lists the interpreter's packages as `pip freeze` does: NAME==VERSION, and
// NAME @ URL for one installed from a URL, a path or a checkout (its direct_url.json).
TEST_F(CliTest, TheManifestListsPackagesAsPipFreezeDoes) {
  fs::path site = dir_ / "site";
  fs::create_directories(site / "plain_pkg-1.2.3.dist-info");
  fs::create_directories(site / "editable_pkg-0.3.dist-info");
  std::ofstream(site / "editable_pkg-0.3.dist-info" / "direct_url.json")
      << R"({"url": "file:///src/editable_pkg", "dir_info": {"editable": true}})";
  env_ += " PYTHONPATH=" + site.string();
  std::ofstream(dir_ / "train.py") << "print('trained')\n";
  Shell r = Trainbench("run train.py");
  ASSERT_EQ(r.code, 0) << r.err;
  auto store = OpenStore();
  std::string manifest = store->GetArtifact(OnlyRun(*store).id, "manifest.json")->content;
  EXPECT_NE(manifest.find("plain_pkg==1.2.3"), std::string::npos) << manifest;
  EXPECT_NE(manifest.find("editable_pkg @ file:///src/editable_pkg"), std::string::npos) << manifest;
}

// A figure with nothing to draw is refused with what to do, and no empty file is left
// for a paper: a sampled metric has no steps, a range may hold no point.
TEST_F(CliTest, PlotRefusesAFigureWithNothingToDraw) {
  ASSERT_EQ(Trainbench("run -n short -l top -i 100ms -- sleep 0.5").code, 0);
  Shell steps = Trainbench("plot short -m proc.cpu.utilization_ratio --x step -o steps.svg");
  EXPECT_NE(steps.code, 0);
  EXPECT_NE(steps.err.find("draw them with --x relative"), std::string::npos) << steps.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "steps.svg"));
  Shell range = Trainbench("plot short -m proc.cpu.utilization_ratio --from 3600 -o range.svg");
  EXPECT_NE(range.code, 0);
  EXPECT_NE(range.err.find("lies in the range asked"), std::string::npos) << range.err;
  EXPECT_FALSE(std::filesystem::exists(dir_ / "range.svg"));
  Shell drawn = Trainbench("plot short -m proc.cpu.utilization_ratio -o drawn.svg --save-spec");
  ASSERT_EQ(drawn.code, 0) << drawn.err;
  EXPECT_NE(drawn.out.find("(1 line, "), std::string::npos) << drawn.out;
  // The saved figure names its run by its whole id, not by the name typed: it reruns the
  // same figure when another run is later called "short".
  std::string saved = Slurp(dir_ / "drawn.figure.json");
  EXPECT_NE(saved.find("\"" + OnlyRun(*OpenStore()).id + "\""), std::string::npos) << saved;
}

// A figure made with no options draws a script's own metric (its loss) over the steps it
// was logged at, as an author plots a loss, and a listener's sample over time; a script's
// metric logged without steps falls back to time; --x chooses.
TEST_F(CliTest, PlotDrawsAScriptsMetricOverItsStepsByDefault) {
  std::ofstream(dir_ / "loss.py") << "import time, trainbench\n"
                                     "with trainbench.Run() as run:\n"
                                     "    for i in range(40):\n"
                                     "        run.log_metric('loss', 2.0 / (i + 1), step=i * 10)\n"
                                     "        run.log_metric('lr', 0.1)\n"
                                     "        time.sleep(0.01)\n";
  ASSERT_EQ(Trainbench("run -n loss -l top -i 100ms -- /usr/bin/python3 loss.py").code, 0);
  auto x_title = [&](const std::string& args) {
    Shell r = Trainbench("plot loss " + args + " -o f.svg");
    EXPECT_EQ(r.code, 0) << r.err;
    std::string svg = Slurp(dir_ / "f.svg");
    size_t at = svg.find(">Step<");
    return at != std::string::npos                              ? std::string("Step")
           : svg.find(">Time since start") != std::string::npos ? "Time"
                                                                : svg;
  };
  EXPECT_EQ(x_title("-m train.loss"), "Step");
  EXPECT_EQ(x_title("-m train.loss --x relative"), "Time");
  EXPECT_EQ(x_title("-m proc.cpu.utilization_ratio"), "Time");
  EXPECT_EQ(x_title("-m train.lr"), "Time") << "logged without steps: all at step 0";
  // A figure file that names its axis keeps it.
  ASSERT_EQ(Trainbench("plot loss -m train.loss --x relative -o saved.svg --save-spec").code, 0);
  EXPECT_EQ(x_title("--spec saved.figure.json"), "Time");
}

// libpq, cairo and pango are opened only by the commands that need them: a run on a SQLite
// store, the monitor beside every training script, loads neither (nor the libraries they
// bring), and starts where they are not installed.
TEST_F(CliTest, ARunLoadsNeitherPostgresqlsNorTheFiguresLibraries) {
  Shell r = Trainbench("run -n maps -- sh -c 'cat /proc/$PPID/maps'");
  ASSERT_EQ(r.code, 0) << r.err;
  EXPECT_NE(r.out.find("libsqlite3"), std::string::npos) << r.out;  // the parent's map it is
  for (const char* library : {"libpq", "libcairo", "libpango", "libgobject", "libX11"})
    EXPECT_EQ(r.out.find(library), std::string::npos) << library;
  // The figures load them when they are drawn.
  Shell figure = Trainbench("plot maps --metric host.load.average_1m -o maps.svg");
  ASSERT_EQ(figure.code, 0) << figure.err;
  std::stringstream svg;
  svg << std::ifstream(dir_ / "maps.svg").rdbuf();
  EXPECT_NE(svg.str().find("<svg"), std::string::npos);
}

// radT's form with a script that is not there (a typo): refused before anything runs, and
// no FAILED run is left in the experiment.
TEST_F(CliTest, AScriptThatIsNotThereIsRefusedAndNothingIsRecorded) {
  ASSERT_EQ(Trainbench("run -e digits -n before -- true").code, 0);
  Shell r = Trainbench("run -e digits trian.py --epochs 3");
  EXPECT_NE(r.code, 0);
  EXPECT_NE(r.err.find("trian.py does not exist"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("nothing was run or recorded"), std::string::npos) << r.err;
  std::vector<RunRecord> runs = OpenStore()->ListRuns("digits").value();
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].name, "before");
}

TEST_F(CliTest, ShowSaysWhatTrainbenchCostBesideTheCommand) {
  std::ofstream(dir_ / "spin.py") << "import time\n"
                                     "end = time.process_time() + 0.5\n"
                                     "while time.process_time() < end:\n"
                                     "    pass\n";
  Shell r = Trainbench("run -i 100ms spin.py");
  ASSERT_EQ(r.code, 0) << r.err;
  RunRecord run = OnlyRun(*OpenStore());
  std::optional<RunCost> cost = RunCostOfTags(run.tags);
  ASSERT_TRUE(cost.has_value());
  EXPECT_GE(cost->command, 0.5);  // the script's own CPU time, not trainbench's
  EXPECT_LT(cost->command, 5);
  EXPECT_GT(cost->listeners, 0);
  EXPECT_GT(cost->trainbench, cost->listeners);
  EXPECT_GT(cost->tools, 0);  // the manifest asked the interpreter for its packages
  Shell show = Trainbench("show spin.py");
  ASSERT_EQ(show.code, 0) << show.err;
  EXPECT_NE(show.out.find("trainbench  "), std::string::npos) << show.out;
  EXPECT_NE(show.out.find("of the command's"), std::string::npos) << show.out;
  EXPECT_EQ(show.out.find("trainbench.cpu_seconds"), std::string::npos) << show.out;  // not again as tags
}

// The ps listener's per-thread series carry long labels (pid=...,tid=...,name=...): every
// row of show's metric table keeps its count under the header's "count".
TEST_F(CliTest, ShowsMetricTableInColumnsWhateverTheLabels) {
  Shell r = Trainbench("run -n threads -l top+ps -i 100ms -- bash -c 'sleep 0.4; sleep 0.4'");
  ASSERT_EQ(r.code, 0) << r.err;
  Shell show = Trainbench("show threads");
  ASSERT_EQ(show.code, 0) << show.err;
  std::istringstream lines(show.out);
  std::string line;
  while (std::getline(lines, line) && !line.starts_with("metrics (")) {
  }
  ASSERT_TRUE(std::getline(lines, line)) << show.out;
  size_t count_end = line.find("count");
  ASSERT_NE(count_end, std::string::npos) << line;
  count_end += 5;
  int rows = 0, thread_rows = 0;
  while (std::getline(lines, line) && !line.empty()) {
    ++rows;
    if (line.find("tid=") != std::string::npos) ++thread_rows;
    ASSERT_GT(line.size(), count_end) << line;
    std::string count = line.substr(count_end - 7, 7);
    count.erase(0, count.find_first_not_of(' '));
    EXPECT_TRUE(!count.empty() && count.find_first_not_of("0123456789") == std::string::npos)
        << "count out of its column: " << line << "\n"
        << show.out;
    EXPECT_EQ(line[count_end], ' ') << line;
  }
  EXPECT_GT(rows, 5) << show.out;
  EXPECT_GT(thread_rows, 0) << show.out;
}

TEST_F(CliTest, ExportWritesEverySampleAsCsvAndJson) {
  ASSERT_EQ(Trainbench("run -q -i 100ms -n short -- sleep 1").code, 0);
  auto store = OpenStore();
  RunRecord run = OnlyRun(*store);
  size_t points = Series(*store, run.id, "host.memory.used_bytes").size();
  ASSERT_GT(points, 5u);
  Shell csv = Trainbench("export short --metric host.memory.used_bytes --format csv");
  ASSERT_EQ(csv.code, 0) << csv.err;
  EXPECT_EQ(csv.out.rfind("run_id,metric,labels,time_ms,step,value\n", 0), 0u);
  EXPECT_EQ(static_cast<size_t>(std::count(csv.out.begin(), csv.out.end(), '\n')), points + 1);
  Shell json = Trainbench("export short -f json -o all.json");
  ASSERT_EQ(json.code, 0) << json.err;
  EXPECT_NE(Slurp(dir_ / "all.json").find("\"metric\":\"host.memory.used_bytes\""), std::string::npos);
  Shell bad = Trainbench("export short --metric gpu.power.draw_watts");
  EXPECT_NE(bad.code, 0);
  EXPECT_NE(bad.err.find("no metric"), std::string::npos);
  // A reader that stops early (`| head`, here one gone before the export starts) is no
  // error; a full disk is, and says so.
  Shell gone = Run("(sleep 0.3; " + env_ + " TRAINBENCH_STORE=" + db_ + " " + kTrainbench +
                   " export short --format csv 2> export.err; echo $? > export.status) | true");
  ASSERT_EQ(gone.code, 0);
  EXPECT_EQ(Slurp(dir_ / "export.err"), "");
  EXPECT_EQ(Slurp(dir_ / "export.status"), "141\n") << "128 + SIGPIPE, as other tools end";
  Shell full = Trainbench("export short --format csv -o /dev/full");
  EXPECT_EQ(full.code, 1);
  EXPECT_NE(full.err.find("No space left on device"), std::string::npos) << full.err;
}

// A whole experiment in one long file, as other tools read it (JSON lines: a point a line),
// and several runs by name; neither runs nor an experiment is a mistake that says what to do.
TEST_F(CliTest, ExportsAWholeExperimentAsJsonLines) {
  ASSERT_EQ(Trainbench("run -q -i 100ms -e paper -n first -- sleep 0.5").code, 0);
  ASSERT_EQ(Trainbench("run -q -i 100ms -e paper -n second -- sleep 0.5").code, 0);
  ASSERT_EQ(Trainbench("run -q -i 100ms -e other -n third -- sleep 0.5").code, 0);
  auto store = OpenStore();
  size_t expected = 0;
  std::set<std::string> paper;
  for (const RunRecord& r : store->ListRuns("paper").value()) {
    expected += Series(*store, r.id, "host.memory.used_bytes").size();
    paper.insert(r.id);
  }
  Shell all = Trainbench("export --experiment paper -m host.memory.used_bytes -f jsonl");
  ASSERT_EQ(all.code, 0) << all.err;
  std::istringstream lines(all.out);
  std::set<std::string> seen;
  size_t count = 0;
  for (std::string line; std::getline(lines, line); ++count)
    seen.insert(nlohmann::json::parse(line)["run_id"].get<std::string>());
  EXPECT_EQ(count, expected);
  EXPECT_EQ(seen, paper) << "both runs of the experiment, not the other's";
  Shell named = Trainbench("export first second -m host.memory.used_bytes -f jsonl");
  ASSERT_EQ(named.code, 0) << named.err;
  EXPECT_EQ(named.out, all.out);
  Shell neither = Trainbench("export -f jsonl");
  EXPECT_NE(neither.code, 0);
  EXPECT_NE(neither.err.find("--experiment NAME"), std::string::npos) << neither.err;
  Shell empty = Trainbench("export --experiment nothing");
  EXPECT_NE(empty.code, 0);
  EXPECT_NE(empty.err.find("trainbench ls"), std::string::npos) << empty.err;
}

}  // namespace
}  // namespace tb
