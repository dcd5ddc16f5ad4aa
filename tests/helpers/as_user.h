// Requests made as another local user: a child process that becomes `uid` (the caller must
// be root) asks a server on 127.0.0.1 and reports the HTTP status. For tests that make the
// attacks a second user of a shared machine would.
#pragma once

#include <httplib.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <string>

namespace tb::testing {

constexpr uid_t kNobody = 65534;

// The status `uid` gets for METHOD path with `headers` (and `body` for a POST), -1 when it
// could not ask (not root, no answer).
inline int StatusAs(uid_t uid, int port, const std::string& method, const std::string& path,
                    const httplib::Headers& headers = {}, const std::string& body = "") {
  int out[2];
  if (pipe(out) != 0) return -1;
  pid_t pid = fork();
  if (pid == 0) {
    close(out[0]);
    int status = -1;
    if (setgid(uid) == 0 && setuid(uid) == 0) {
      httplib::Client c("127.0.0.1", port);
      httplib::Result r = method == "GET"    ? c.Get(path, headers)
                          : method == "POST" ? c.Post(path, headers, body, "application/json")
                                             : c.Delete(path, headers);
      if (r) status = r->status;
    }
    (void)!write(out[1], &status, sizeof status);
    _exit(0);
  }
  close(out[1]);
  int status = -1;
  if (read(out[0], &status, sizeof status) != sizeof status) status = -1;
  close(out[0]);
  waitpid(pid, nullptr, 0);
  return status;
}

}  // namespace tb::testing
