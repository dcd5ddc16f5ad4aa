#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <limits>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <stdexcept>
#include <vector>

#include "base/strings.h"
#include "base/time.h"
#include "http/api_toolkit.h"
#include "track/tracking_call.h"

namespace tb {

using namespace tracking;  // NOLINT(google-build-using-namespace): this API's own helpers

ApiResponse TrackingApi::Call::LogEvents() {
  const json& b = Body();
  std::string run_id = RunIdField();
  const json& events = b.contains("events") ? b["events"] : json();
  if (!events.is_array()) throw InvalidParameter("Missing value for required parameter 'events' (a list).");
  if (events.size() > kMaxMetricsPerBatch) {
    throw InvalidParameter("A request can contain at most " + std::to_string(kMaxMetricsPerBatch) +
                           " events.");
  }
  std::vector<EventRecord> records;
  for (const json& e : events) {
    if (!e.is_object()) throw InvalidParameter("An event must be a JSON object");
    std::optional<int64_t> t = Int(e, "timestamp");
    auto kind = e.find("kind");
    auto label = e.find("label");
    if (!t || kind == e.end() || !kind->is_string() || kind->get_ref<const std::string&>().empty()) {
      throw InvalidParameter("An event needs 'timestamp' (ms) and 'kind' (a non-empty string).");
    }
    records.push_back({run_id, *t, kind->get<std::string>(),
                       label != e.end() && label->is_string() ? label->get<std::string>() : ""});
  }
  Exists(run_id);
  for (const EventRecord& r : records) ThrowIfError(api_.store_.AddEvent(r));
  return JsonAnswer(json::object());
}

namespace {

// "<experiment id>/<run id>/artifacts[/<path>]": the run and the path below its artifacts.
struct ArtifactPath {
  std::string run_id;
  std::string relative;  // "" for the run's artifact root
};

std::optional<ArtifactPath> ParseArtifactPath(std::string_view path) {
  while (StartsWith(path, "/")) path.remove_prefix(1);
  while (!path.empty() && path.back() == '/') path.remove_suffix(1);
  std::vector<std::string_view> parts = Split(path, '/');
  if (parts.size() < 3 || parts[1].empty() || parts[2] != "artifacts") return std::nullopt;
  size_t head = parts[0].size() + 1 + parts[1].size() + 1 + parts[2].size();
  return ArtifactPath{std::string(parts[1]), std::string(path.substr(std::min(path.size(), head + 1)))};
}

}  // namespace

namespace tracking {
std::string MlflowArtifactUri(const std::string& experiment_id, const std::string& run_id) {
  return Concat({"mlflow-artifacts:/", experiment_id, "/", run_id, "/artifacts"});
}
}  // namespace tracking

// GET /api/2.0/mlflow-artifacts/artifacts?path=<experiment id>/<run id>/artifacts[/dir]: the
// files and folders directly in that folder, by name, as MLflow's server lists them.
ApiResponse TrackingApi::Call::ListArtifacts() {
  std::string asked = Text("path").value_or("");
  std::optional<ArtifactPath> where = ParseArtifactPath(asked);
  if (!where) {
    throw InvalidParameter("Artifact paths look like <experiment id>/<run id>/artifacts[/<folder>], not '" +
                           asked + "'");
  }
  if (!where->relative.empty()) {
    if (auto bad = BadName("artifact", where->relative)) throw InvalidParameter(*bad);
  }
  Exists(where->run_id);
  Result<std::vector<ArtifactRecord>> all = api_.store_.ListArtifacts(where->run_id);
  ThrowIfError(all.status());
  std::string prefix = where->relative.empty() ? "" : where->relative + "/";
  json files = json::array();
  std::vector<std::string> folders;
  for (const ArtifactRecord& a : *all) {
    if (!StartsWith(a.name, prefix)) continue;
    std::string below = a.name.substr(prefix.size());
    size_t slash = below.find('/');
    if (slash == std::string::npos) {
      files.push_back({{"path", below}, {"is_dir", false}, {"file_size", a.size}});
    } else if (std::find(folders.begin(), folders.end(), below.substr(0, slash)) == folders.end()) {
      folders.push_back(below.substr(0, slash));
      files.push_back({{"path", folders.back()}, {"is_dir", true}});
    }
  }
  return JsonAnswer({{"files", std::move(files)}});
}

ApiResponse TrackingApi::Call::Artifact(const std::string& path) {
  std::optional<ArtifactPath> where = ParseArtifactPath("/" + path);
  if (!where || where->relative.empty()) {
    throw InvalidParameter("Artifact paths look like <experiment id>/<run id>/artifacts/<file>");
  }
  std::string run_id = where->run_id;
  std::string relative = where->relative;
  if (auto bad = BadName("artifact", relative)) throw InvalidParameter(*bad);
  Exists(run_id);
  if (request_.method == "GET") {
    Result<ArtifactRecord> a = api_.store_.GetArtifact(run_id, relative);
    if (!a.ok()) throw FromStatus(a.status());
    ApiResponse out{200, "application/octet-stream", a->content, nullptr, {}};
    if (!a->path.empty()) {
      // Streamed in pieces: a checkpoint of gigabytes is never held in memory.
      auto in = std::make_shared<std::ifstream>(a->path, std::ios::binary);
      if (!*in) throw ApiError{"RESOURCE_DOES_NOT_EXIST", "The file of artifact " + relative + " is gone"};
      out.stream = [in](std::string& piece) {
        piece.resize(1 << 20);
        in->read(piece.data(), static_cast<std::streamsize>(piece.size()));
        piece.resize(static_cast<size_t>(in->gcount()));
        if (in->bad()) throw std::runtime_error("cannot read the artifact");
        return !in->eof();
      };
    }
    return out;
  }
  if (request_.method != "PUT") throw ApiError{"ENDPOINT_NOT_FOUND", "Artifacts are uploaded with PUT"};
  if (IsRunRecordArtifact(relative) && RanUnderTrainbench(Run(run_id))) {
    throw InvalidParameter(
        "'" + relative +
        "' is where trainbench keeps the run's own record; upload the file under "
        "another name or in a folder (mlflow.log_artifact(path, artifact_path=\"outputs\"))");
  }
  Result<std::string> dir = api_.store_.ArtifactDirectory(run_id);
  ThrowIfError(dir.status());
  std::string file = *dir + "/" + relative;
  ThrowIfError(MakeDirectories(DirName(file)));
  std::string partial = file + ".partial";
  int64_t size = static_cast<int64_t>(request_.body.size());
  // A large upload the server spooled to a file moves into place (copied where the spool
  // is on another file system), never through memory.
  std::error_code ec;
  if (!request_.body_file.empty()) {
    size = static_cast<int64_t>(std::filesystem::file_size(request_.body_file, ec));
    if (std::rename(request_.body_file.c_str(), partial.c_str()) != 0) {
      std::filesystem::copy_file(request_.body_file, partial,
                                 std::filesystem::copy_options::overwrite_existing, ec);
      if (ec) {
        std::remove(partial.c_str());  // a full disk leaves nothing half-written behind
        throw ApiError{"INTERNAL_ERROR", "cannot write " + partial + " (is the disk full?)"};
      }
    }
  } else {
    std::ofstream out(partial, std::ios::binary | std::ios::trunc);
    out.write(request_.body.data(), static_cast<std::streamsize>(request_.body.size()));
    out.flush();
    if (!out) {
      std::remove(partial.c_str());
      throw ApiError{"INTERNAL_ERROR", "cannot write " + partial + " (is the disk full?)"};
    }
  }
  if (std::rename(partial.c_str(), file.c_str()) != 0) {
    std::remove(partial.c_str());
    throw ApiError{"INTERNAL_ERROR", "cannot write " + file};
  }
  ThrowIfError(api_.store_.PutArtifact({run_id, relative, size, "", file}));
  return JsonAnswer(json::object());
}

}  // namespace tb
