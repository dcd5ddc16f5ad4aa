// The run's process tree on the live /proc, with real processes: a PyTorch-like root with
// dozens of threads and a child of its own, beside a process outside the tree.
#include "collect/process_tree.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <string>
#include <thread>

#include "platform/process.h"

namespace tb {
namespace {

constexpr int kThreads = 64;

ChildProcess Start(std::vector<std::string> argv) {
  SpawnOptions o;
  o.argv = std::move(argv);
  Result<ChildProcess> child = ChildProcess::Spawn(o);
  EXPECT_TRUE(child.ok()) << child.status().message();
  return std::move(child).value();
}

// The pid of the root's child, once the root has started it and its threads.
pid_t WaitForChild(HostFiles& files, pid_t root) {
  for (int i = 0; i < 200; ++i) {
    std::string stat, children;
    if (files.Read("/proc/" + std::to_string(root) + "/stat", stat).ok()) {
      PidStat s;
      if (ParsePidStat(stat, s).ok() && s.num_threads > kThreads &&
          files
              .Read("/proc/" + std::to_string(root) + "/task/" + std::to_string(root) + "/children", children)
              .ok() &&
          !children.empty())
        return static_cast<pid_t>(std::stol(children));
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  return 0;
}

TEST(ProcessTreeTest, AListedProcessIsFoundInTheTreeFromItsParentsWithoutWalkingEveryThread) {
  ChildProcess root = Start({"/usr/bin/python3", "-c",
                             "import subprocess, threading, time\n"
                             "for _ in range(" +
                                 std::to_string(kThreads) +
                                 "):\n"
                                 "    threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"
                                 "subprocess.Popen(['sleep', '60'])\n"
                                 "time.sleep(60)\n"});
  ChildProcess outsider = Start({"sleep", "60"});
  HostFiles files("/");
  pid_t child = WaitForChild(files, root.pid());
  ASSERT_NE(child, 0) << "the root did not start its threads and child";

  ProcessTree tree(HostFiles("/"), root.pid());
  size_t before = tree.files().touched();
  EXPECT_TRUE(tree.Contains(child));
  EXPECT_TRUE(tree.Contains(root.pid()));
  size_t by_parents = tree.files().touched() - before;
  EXPECT_FALSE(tree.Contains(outsider.pid()));
  EXPECT_FALSE(tree.Contains(getpid()));     // the root's parent is not in the tree
  EXPECT_FALSE(tree.Contains(1 << 22 | 7));  // no such process

  before = tree.files().touched();
  size_t listed = tree.Processes().size();
  size_t whole_walk = tree.files().touched() - before;
  EXPECT_EQ(listed, 2u);  // the root and its child (the shell-less Popen)
  // By parents: the child's stat names the root. The whole walk reads each of the root's
  // threads' children file.
  EXPECT_LE(by_parents, 2u);
  EXPECT_GT(whole_walk, static_cast<size_t>(kThreads));

  for (ChildProcess* p : {&root, &outsider}) {
    (void)p->Signal(SIGKILL);
    (void)p->Wait();
  }
  EXPECT_FALSE(tree.Contains(child)) << "a child whose root died (adopted by init) is no longer the run's";
  kill(child, SIGKILL);
}

}  // namespace
}  // namespace tb
