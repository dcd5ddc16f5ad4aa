// `trainbench serve`.
#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "analyze/phases.h"
#include "analyze/report.h"
#include "base/log.h"
#include "base/strings.h"
#include "base/time.h"
#include "cli/cli.h"
#include "collect/gpu_tool_collectors.h"
#include "http/http_server.h"
#include "http/socket_peer.h"
#include "import/migrate.h"
#include "metrics/catalog.h"
#include "platform/nvml.h"
#include "platform/process.h"
#include "query/energy.h"
#include "query/export.h"
#include "query/summary.h"
#include "run/launcher.h"
#include "schedule/scheduler.h"
#include "serve/serve_api.h"
#include "store/store.h"
#include "track/tracking_api.h"

namespace tb::cli {

// --- serve -------------------------------------------------------------------------------

// The web UI's built files: --web, else web/dist or web/ beside the build or install.
std::string WebDirectory(const std::string& given) {
  if (!given.empty()) return given;
  std::error_code ec;
  std::filesystem::path exe = std::filesystem::read_symlink("/proc/self/exe", ec);
  for (const char* relative :
       {"../web/dist", "../../web/dist", "../share/trainbench/web", "../web", "../../web"}) {
    std::filesystem::path dir = exe.parent_path() / relative;
    if (std::filesystem::exists(dir / "index.html", ec))
      return std::filesystem::weakly_canonical(dir, ec).string();
  }
  return "";
}

// Who the server answers, as its first line says.
std::string WhoMayCall(const ServeArgs& a) {
  if (a.allow_other_users) return a.token.empty() ? "every local user" : "whoever sends its token";
  return a.token.empty() ? "your own processes only" : "your own processes, and others with its token";
}

int CommandServe(ServeArgs a) {
  // The token from a file (a command line is in every user's `ps`), else the environment.
  if (!a.token_file.empty()) {
    if (!a.token.empty()) return Fail(Status::InvalidArgument("give --token or --token-file, not both"));
    std::ifstream in(a.token_file);
    std::string line;
    if (!in || !std::getline(in, line) || Trim(line).empty()) {
      return Fail(
          Status::InvalidArgument("--token-file " + a.token_file +
                                  ": cannot read a token from it; write one with: openssl rand -hex 16 > " +
                                  a.token_file + " && chmod 600 " + a.token_file));
    }
    a.token = std::string(Trim(line));
  } else if (!a.token.empty()) {
    LogWarning(
        "--token on the command line is in every local user's `ps`; prefer --token-file or TRAINBENCH_TOKEN");
  }
  if (a.token.empty()) {
    if (const char* t = std::getenv("TRAINBENCH_TOKEN")) a.token = t;
  }
  if (!IsLoopbackHost(a.host) && a.token.empty()) {
    return Fail(Status::InvalidArgument("serving on " + a.host +
                                        " lets other machines in: give an access token with --token-file or "
                                        "TRAINBENCH_TOKEN (every request must then carry it)"));
  }
  if (a.port < 0 || a.port > 65535) return Fail(Status::InvalidArgument("--port must be 0 to 65535"));
  Result<std::unique_ptr<Store>> store = OpenStore(a.store);
  if (!store.ok()) return Fail(store.status());
  ServeApi api(**store);
  TrackingApi tracking(**store);
  HttpServer server({api.Handler(), tracking.Handler()});
  HttpServerOptions options = TrackingApi::ServerOptions();
  options.host = a.host;
  options.port = a.port;
  options.token = a.token;
  // Who passes without the token: this user's own processes on loopback (the peer's uid,
  // from the connection), or, when asked, every local user.
  options.without_token =
      a.allow_other_users ? HttpServerOptions::Peers::kAnyone : HttpServerOptions::Peers::kOwner;
  options.host_names = a.allowed_hosts;
  options.host_names.push_back(a.host);
  if (char name[256] = {}; gethostname(name, sizeof name - 1) == 0) options.host_names.emplace_back(name);
  options.static_dir = WebDirectory(a.web);
  // Signals are taken by this thread; the server's threads inherit the mask.
  sigset_t signals;
  sigemptyset(&signals);
  for (int sig : {SIGINT, SIGTERM, SIGHUP}) sigaddset(&signals, sig);
  pthread_sigmask(SIG_BLOCK, &signals, nullptr);
  Status started = server.Start(options);
  if (!started.ok()) return Fail(started);
  std::printf("trainbench: serving %s at %s/%s, to %s (Ctrl-C stops)\n", (*store)->Describe().c_str(),
              server.Url().c_str(),
              options.static_dir.empty() ? " (API only: no web UI found, --web names its directory)" : "",
              WhoMayCall(a).c_str());
  std::fflush(stdout);
  int sig = 0;
  sigwait(&signals, &sig);
  server.Stop();
  return 0;
}

void AddServeCommand(CLI::App& app, std::vector<Subcommand>& out) {
  auto sa = std::make_shared<ServeArgs>();
  CLI::App* serve =
      app.add_subcommand("serve", "Serve the web UI, its JSON API (/api/v1) and the tracking API");
  serve->add_option("--store", sa->store, "Store URI or SQLite file (env TRAINBENCH_STORE)")
      ->capture_default_str();
  serve->add_option("--host", sa->host, "Address to listen on; other than loopback needs a token")
      ->capture_default_str();
  serve->add_option("--port", sa->port, "Port (0: a free one)")->capture_default_str();
  serve->add_option(
      "--token-file", sa->token_file,
      "File whose first line is the access token every request must carry (or env TRAINBENCH_TOKEN)");
  serve->add_option("--token", sa->token, "The access token itself (visible in ps; prefer --token-file)");
  serve->add_flag("--allow-other-users", sa->allow_other_users,
                  "Let other local users in without the token (by default only your own processes, "
                  "known from the connection, pass without it)");
  serve->add_option("--allowed-host", sa->allowed_hosts,
                    "A name requests may reach the server by (a proxy's, a DNS name); IP addresses, "
                    "localhost, --host and this machine's name always pass; repeatable");
  serve->add_option("--web", sa->web, "Directory of the web UI's files (default: web/ of this build)");

  out.push_back({serve, [sa](const DashedCommand&) { return CommandServe(*sa); }});
}

}  // namespace tb::cli
