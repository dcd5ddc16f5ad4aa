// A CPU burner for tests: keeps a known share of one core busy, optionally in child
// processes too, and writes the CPU seconds it and its children really used to a file, so
// a test can compare what trainbench measured with the truth.
//   burner --duty 0.5 --seconds 3 [--children 2 --child-duty 0.3] [--report FILE]
//          [--print-bytes N] (writes N bytes to stdout as fast as it can, then exits)
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

double Now(clockid_t clock) {
  timespec ts{};
  clock_gettime(clock, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) / 1e9;
}

// Busy for `duty` of every 100 ms period of wall time, measured in this thread's CPU time.
void Burn(double duty, double seconds) {
  const double period = 0.1;
  double end = Now(CLOCK_MONOTONIC) + seconds;
  while (Now(CLOCK_MONOTONIC) < end) {
    double period_start = Now(CLOCK_MONOTONIC);
    double cpu_start = Now(CLOCK_THREAD_CPUTIME_ID);
    volatile unsigned sink = 0;
    while (Now(CLOCK_THREAD_CPUTIME_ID) - cpu_start < duty * period &&
           Now(CLOCK_MONOTONIC) - period_start < period) {
      for (int i = 0; i < 1000; ++i) sink = sink + static_cast<unsigned>(i);
    }
    double left = period - (Now(CLOCK_MONOTONIC) - period_start);
    if (left > 0) usleep(static_cast<useconds_t>(left * 1e6));
  }
}

double CpuSeconds(int who) {
  rusage u{};
  getrusage(who, &u);
  return static_cast<double>(u.ru_utime.tv_sec + u.ru_stime.tv_sec) +
         static_cast<double>(u.ru_utime.tv_usec + u.ru_stime.tv_usec) / 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  double duty = 0.5, seconds = 2, child_duty = 0.3;
  int children = 0;
  long long print_bytes = -1;
  const char* report = nullptr;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string a = argv[i];
    if (a == "--duty") duty = std::atof(argv[i + 1]);
    if (a == "--seconds") seconds = std::atof(argv[i + 1]);
    if (a == "--children") children = std::atoi(argv[i + 1]);
    if (a == "--child-duty") child_duty = std::atof(argv[i + 1]);
    if (a == "--report") report = argv[i + 1];
    if (a == "--print-bytes") print_bytes = std::atoll(argv[i + 1]);
  }
  if (print_bytes >= 0) {
    std::vector<char> line(4096, 'x');
    line.back() = '\n';
    while (print_bytes > 0) {
      size_t n = static_cast<size_t>(std::min<long long>(print_bytes, static_cast<long long>(line.size())));
      if (write(STDOUT_FILENO, line.data(), n) < 0) return 1;
      print_bytes -= static_cast<long long>(n);
    }
    return 0;
  }
  double start = Now(CLOCK_MONOTONIC);
  std::vector<pid_t> pids;
  for (int c = 0; c < children; ++c) {
    pid_t pid = fork();
    if (pid == 0) {
      Burn(child_duty, seconds);
      _exit(0);
    }
    pids.push_back(pid);
  }
  Burn(duty, seconds);
  for (pid_t pid : pids) waitpid(pid, nullptr, 0);
  double wall = Now(CLOCK_MONOTONIC) - start;
  if (report != nullptr) {
    FILE* f = std::fopen(report, "w");
    if (f == nullptr) return 1;
    std::fprintf(f, "%.6f %.6f\n", CpuSeconds(RUSAGE_SELF) + CpuSeconds(RUSAGE_CHILDREN), wall);
    std::fclose(f);
  }
  return 0;
}
