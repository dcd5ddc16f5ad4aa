// A throw-away single-machine Slurm cluster for tests: munged with its own socket, slurmctld
// and one slurmd on free loopback ports, everything (configuration, state, spool, logs)
// in a directory under /tmp; no cgroup plugins and no accounting, as root. The destructor
// stops the three daemons by their pid files and removes the directory. Commands reach it
// with SLURM_CONF=conf() in their environment (env()).
#pragma once

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>

#include "tests/helpers/free_port.h"

namespace tb {

class SlurmCluster {
 public:
  SlurmCluster() {
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
    long mem_mib = sysconf(_SC_PHYS_PAGES) / 1024 * sysconf(_SC_PAGE_SIZE) / 1024 / 2;
    std::ofstream(conf())
        << "ClusterName=tbtest\n"
        << "SlurmctldHost=" << host_ << "(127.0.0.1)\n"
        << "SlurmctldPort=" << FreeLoopbackPort() << "\nSlurmdPort=" << FreeLoopbackPort() << "\n"
        << "AuthType=auth/munge\nCredType=cred/munge\nAuthInfo=socket=" << Socket() << "\n"
        << "SlurmUser=root\nSlurmdUser=root\n"
        << "StateSaveLocation=" << dir_ << "/state\nSlurmdSpoolDir=" << dir_ << "/spool\n"
        << "SlurmctldPidFile=" << dir_ << "/slurmctld.pid\nSlurmdPidFile=" << dir_ << "/slurmd.pid\n"
        << "SlurmctldLogFile=" << dir_ << "/log/slurmctld.log\nSlurmdLogFile=" << dir_ << "/log/slurmd.log\n"
        << "ProctrackType=proctrack/linuxproc\nTaskPlugin=task/none\n"
        << "JobAcctGatherType=jobacct_gather/none\nAccountingStorageType=accounting_storage/none\n"
        << "SelectType=select/cons_tres\nSelectTypeParameters=CR_Core\nMpiDefault=none\n"
        << "ReturnToService=2\nSchedulerType=sched/builtin\nMinJobAge=600\n"
        << "KillWait=5\nInactiveLimit=0\nSlurmctldTimeout=30\nSlurmdTimeout=30\n"
        << "NodeName=" << host_ << " NodeAddr=127.0.0.1 CPUs=" << std::thread::hardware_concurrency()
        << " RealMemory=" << mem_mib << " State=UNKNOWN\n"
        << "PartitionName=test Nodes=" << host_ << " Default=YES MaxTime=INFINITE State=UP\n";
    if (Sh("/usr/sbin/slurmctld -f " + conf()) != 0 || Sh("/usr/sbin/slurmd -f " + conf()) != 0) {
      error_ = "slurmctld or slurmd did not start; see " + dir_ + "/log";
      return;
    }
    // Ready when the node takes jobs.
    for (int i = 0; i < 60; ++i) {
      std::string state = Capture(env() + " sinfo -h -n " + host_ + " -o %T 2>/dev/null");
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
    for (const char* pid_file : {"/slurmd.pid", "/slurmctld.pid", "/munge/munged.pid"}) {
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
  const std::string& node() const { return host_; }
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
  bool ok_ = false;
};

}  // namespace tb
