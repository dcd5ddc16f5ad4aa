// A throw-away single-machine Slurm cluster for tests: munged with its own socket, slurmctld
// and one slurmd (or several, each a node of its own: tbnode1, tbnode2, ... on one host,
// each on its own port, `slurmd -N NAME`) on free loopback ports, everything
// (configuration, state, spool, logs) in a directory under /tmp; no cgroup plugins and no
// accounting, as root. The destructor stops the daemons by their pid files and removes
// the directory. Commands reach it with SLURM_CONF=conf() in their environment (env()).
#pragma once

#include <signal.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "tests/helpers/free_port.h"

namespace tb {

class SlurmCluster {
 public:
  // `gpus` per node: a GPU GRES whose device files are character devices made in the
  // cluster's directory (Slurm reads their numbers; nothing opens them), for the simulated
  // GPU. Where they cannot be made, the cluster has none and gpus() says 0.
  explicit SlurmCluster(int nodes = 1, int gpus = 0) {
    for (const char* tool :
         {"/usr/sbin/slurmctld", "/usr/sbin/slurmd", "/usr/sbin/munged", "/usr/bin/sbatch"}) {
      if (!std::filesystem::exists(tool)) {
        error_ = std::string(tool) +
                 " is not installed (scripts/setup.sh installs slurmctld, slurmd, slurm-client, munge)";
        return;
      }
    }
    if (geteuid() != 0) {
      error_ = "the test cluster runs its daemons as root";
      return;
    }
    char dir[] = "/tmp/tb-slurm-XXXXXX";
    if (mkdtemp(dir) == nullptr) return;
    dir_ = dir;
    for (const char* sub : {"state", "spool", "munge", "log"})
      std::filesystem::create_directories(dir_ + "/" + sub);
    host_ = Capture("hostname -s");
    // munge: a key of our own, its socket in our directory.
    std::ofstream(dir_ + "/munge/munge.key") << std::string(1024, 'k');
    Sh("chmod 700 " + dir_ + "/munge && chmod 400 " + dir_ + "/munge/munge.key");
    if (Sh("/usr/sbin/munged --force --key-file=" + dir_ + "/munge/munge.key --socket=" + Socket() +
           " --pid-file=" + dir_ + "/munge/munged.pid --log-file=" + dir_ +
           "/log/munged.log --seed-file=" + dir_ + "/munge/seed") != 0) {
      error_ = "munged did not start; see " + dir_ + "/log/munged.log";
      return;
    }
    long mem_mib = sysconf(_SC_PHYS_PAGES) / 1024 * sysconf(_SC_PAGE_SIZE) / 1024 / 2 / nodes;
    std::ostringstream node_lines;
    std::string node_list;
    if (nodes == 1) {
      nodes_ = {host_};
      node_lines << "NodeName=" << host_ << " NodeAddr=127.0.0.1";
    }
    for (int i = 1; nodes > 1 && i <= nodes; ++i) {
      nodes_.push_back("tbnode" + std::to_string(i));
      node_lines << (i > 1 ? " State=UNKNOWN\n" : "") << "NodeName=" << nodes_.back()
                 << " NodeHostname=" << host_ << " NodeAddr=127.0.0.1 Port=" << FreeLoopbackPort();
      std::filesystem::create_directories(dir_ + "/spool/" + nodes_.back());
    }
    for (const std::string& n : nodes_) node_list += (node_list.empty() ? "" : ",") + n;
    std::filesystem::create_directories(dir_ + "/dev");
    for (int i = 0; i < gpus; ++i) {
      std::string file = dir_ + "/dev/nvidia" + std::to_string(i);
      if (mknod(file.c_str(), S_IFCHR | 0600, makedev(195, i)) != 0) {
        gres_error_ = "cannot make the GPU device file " + file + ": " + std::strerror(errno);
        break;
      }
      gpus_ = i + 1;
    }
    if (gpus_ < gpus) gpus_ = 0;
    if (gpus_ > 0) {
      std::ofstream(dir_ + "/gres.conf")
          << "Name=gpu File=" << dir_ << "/dev/nvidia[0-" << gpus_ - 1 << "]\n";
    }
    std::string per_node = nodes > 1 ? "/%n" : "";
    std::ofstream(conf())
        << "ClusterName=tbtest\n"
        << (gpus_ > 0 ? "GresTypes=gpu\n" : "") << "SlurmctldHost=" << host_ << "(127.0.0.1)\n"
        << "SlurmctldPort=" << FreeLoopbackPort() << "\nSlurmdPort=" << FreeLoopbackPort() << "\n"
        << "AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket=" << Socket() << "\n"
        << "SlurmUser=root\nSlurmdUser=root\n"
        << "StateSaveLocation=" << dir_ << "/state\nSlurmdSpoolDir=" << dir_ << "/spool" << per_node << "\n"
        << "SlurmctldPidFile=" << dir_ << "/slurmctld.pid\nSlurmdPidFile=" << dir_ << "/slurmd" << per_node
        << ".pid\n"
        << "SlurmctldLogFile=" << dir_ << "/log/slurmctld.log\nSlurmdLogFile=" << dir_ << "/log/slurmd"
        << per_node << ".log\n"
        << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
        << "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
        << "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\nMpiDefault=none\n"
        << "ReturnToService=2\nSchedulerType=sched/builtin\nMinJobAge=600\n"
        << "KillWait=5\nInactiveLimit=0\nSlurmctldTimeout=30\nSlurmdTimeout=30\n"
        << "NodeName=DEFAULT CPUs=" << std::thread::hardware_concurrency() << " RealMemory=" << mem_mib
        << (gpus_ > 0 ? " Gres=gpu:" + std::to_string(gpus_) : "") << "\n"
        << node_lines.str() << " State=UNKNOWN\n"
        << "PartitionName=test Nodes=" << node_list << " Default=YES MaxTime=INFINITE State=UP\n";
    std::filesystem::create_directories(dir_ + "/log/slurmd");
    std::filesystem::create_directories(dir_ + "/slurmd");
    if (Sh("/usr/sbin/slurmctld -f " + conf()) != 0) {
      error_ = "slurmctld did not start; see " + dir_ + "/log";
      return;
    }
    for (const std::string& n : nodes_) {
      if (Sh("/usr/sbin/slurmd -f " + conf() + (nodes > 1 ? " -N " + n : "")) != 0) {
        error_ = "slurmd did not start for node " + n + "; see " + dir_ + "/log";
        return;
      }
    }
    // Ready when every node takes jobs.
    for (int i = 0; i < 60; ++i) {
      std::string state = Capture(env() + " sinfo -h -N -o %T 2>/dev/null | sort -u");
      if (state == "idle") {
        ok_ = true;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(500));
    }
    error_ = "the node never became idle; see " + dir_ + "/log/slurmctld.log";
  }
  ~SlurmCluster() {
    if (dir_.empty()) return;
    std::vector<std::string> pid_files;
    for (const std::string& n : nodes_)
      pid_files.push_back(nodes_.size() > 1 ? "/slurmd/" + n + ".pid" : "/slurmd.pid");
    for (const char* pid_file : {"/slurmctld.pid", "/munge/munged.pid"}) pid_files.emplace_back(pid_file);
    for (const std::string& pid_file : pid_files) {
      std::ifstream in(dir_ + pid_file);
      pid_t pid = 0;
      if (in >> pid && pid > 1) {
        kill(pid, SIGTERM);
        for (int i = 0; i < 50 && kill(pid, 0) == 0; ++i)
          std::this_thread::sleep_for(std::chrono::milliseconds(100));
        kill(pid, SIGKILL);
      }
    }
    std::error_code ec;
    std::filesystem::remove_all(dir_, ec);
  }
  SlurmCluster(const SlurmCluster&) = delete;
  SlurmCluster& operator=(const SlurmCluster&) = delete;

  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }
  std::string conf() const { return dir_ + "/slurm.conf"; }
  const std::string& node() const { return nodes_.front(); }
  const std::vector<std::string>& nodes() const { return nodes_; }
  // GPUs per node (GRES gpu), and why there are none when some were asked for.
  int gpus() const { return gpus_; }
  const std::string& gres_error() const { return gres_error_; }
  // Put before a command that talks to the cluster.
  std::string env() const { return "SLURM_CONF=" + conf(); }
  // What a command printed (trailing newline removed).
  static std::string Capture(const std::string& command) {
    std::string out;
    if (FILE* p = popen(command.c_str(), "r")) {
      char buf[4096];
      size_t n;
      while ((n = fread(buf, 1, sizeof buf, p)) > 0) out.append(buf, n);
      pclose(p);
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out;
  }

 private:
  std::string Socket() const { return dir_ + "/munge/munge.socket"; }
  static int Sh(const std::string& command) { return std::system(command.c_str()); }

  std::string dir_, host_, error_;
  std::vector<std::string> nodes_;
  int gpus_ = 0;
  std::string gres_error_;
  bool ok_ = false;
};

}  // namespace tb
