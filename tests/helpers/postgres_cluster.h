// A throw-away PostgreSQL cluster for tests: Debian's server binaries, a data directory
// and socket under /tmp, a free loopback port, trust authentication; run as the postgres
// user when the tests run as root (initdb refuses root). Stop() and Start() take the
// server down and up again (for "the database went away mid-run"); the destructor stops it
// and removes everything.
#pragma once

#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <string>

#include "tests/helpers/free_port.h"

namespace tb {

class PostgresCluster {
 public:
  PostgresCluster() {
    char dir[] = "/tmp/tb-pg-XXXXXX";
    if (mkdtemp(dir) == nullptr) return;
    dir_ = dir;
    port_ = FreeLoopbackPort();
    bin_ = FindBin();
    if (bin_.empty()) {
      error_ = "PostgreSQL's server is not installed (scripts/setup.sh installs Debian's postgresql)";
      return;
    }
    as_ = geteuid() == 0 ? "runuser -u postgres -- " : "";
    if (geteuid() == 0) Sh("chown postgres " + dir_);
    if (Sh(as_ + bin_ + "/initdb -D " + dir_ + "/data -A trust -U postgres --no-sync > " + dir_ +
           "/initdb.log 2>&1") != 0) {
      error_ = "initdb failed; see " + dir_ + "/initdb.log";
      return;
    }
    if (!Start()) {
      error_ = "the test server did not start; see " + dir_ + "/server.log";
      return;
    }
    ok_ = true;
  }
  ~PostgresCluster() {
    if (!dir_.empty()) {
      Stop();
      std::error_code ec;
      std::filesystem::remove_all(dir_, ec);
    }
  }
  PostgresCluster(const PostgresCluster&) = delete;
  PostgresCluster& operator=(const PostgresCluster&) = delete;

  bool ok() const { return ok_; }
  const std::string& error() const { return error_; }
  int port() const { return port_; }

  // A new empty database; its URI.
  std::string CreateDatabase(const std::string& name) {
    Psql("DROP DATABASE IF EXISTS " + name);
    Psql("CREATE DATABASE " + name);
    return Uri(name);
  }
  std::string Uri(const std::string& database) const {
    return "postgresql://postgres@127.0.0.1:" + std::to_string(port_) + "/" + database;
  }
  int Psql(const std::string& sql, const std::string& database = "postgres") {
    return Sh("psql -q -X -h 127.0.0.1 -p " + std::to_string(port_) + " -U postgres -d " + database +
              " -c \"" + sql + "\" > /dev/null");
  }
  // The first value psql prints for `sql`.
  std::string Value(const std::string& sql, const std::string& database) {
    std::string cmd = "psql -q -X -t -A -h 127.0.0.1 -p " + std::to_string(port_) + " -U postgres -d " +
                      database + " -c \"" + sql + "\"";
    std::string out;
    if (FILE* p = popen(cmd.c_str(), "r")) {
      char buf[256];
      while (fgets(buf, sizeof buf, p) != nullptr) out += buf;
      pclose(p);
    }
    while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
    return out;
  }

  bool Start() {
    return Sh(as_ + bin_ + "/pg_ctl -D " + dir_ + "/data -l " + dir_ + "/server.log -w -o \"-k " + dir_ +
              " -p " + std::to_string(port_) +
              " -c listen_addresses=127.0.0.1 -c fsync=off\" start > /dev/null") == 0;
  }
  bool Stop() {
    return Sh(as_ + bin_ + "/pg_ctl -D " + dir_ + "/data -m fast -w stop > /dev/null 2>&1") == 0;
  }

 private:
  static int Sh(const std::string& cmd) { return std::system(cmd.c_str()); }
  static std::string FindBin() {
    for (const char* v : {"17", "16", "15", "14", "13"}) {
      std::string dir = std::string("/usr/lib/postgresql/") + v + "/bin";
      if (std::filesystem::exists(dir + "/initdb")) return dir;
    }
    return "";
  }

  std::string dir_, bin_, as_, error_;
  int port_ = 0;
  bool ok_ = false;
};

}  // namespace tb
