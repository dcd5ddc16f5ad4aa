// Errors as values. A Status is cheap when OK and carries a message a user can act on
// otherwise; Result<T> is a value or the Status that explains why there is none.
// Nothing in trainbench throws across a layer boundary: functions that can fail return
// one of these. Not thread-safe to mutate; safe to copy between threads.
#pragma once

#include <optional>
#include <string>
#include <utility>

namespace tb {

class [[nodiscard]] Status {
 public:
  enum class Code { kOk, kInvalidArgument, kNotFound, kIoError, kCorrupt, kUnavailable };

  Status() = default;
  static Status Ok() { return Status(); }
  static Status InvalidArgument(std::string msg) { return {Code::kInvalidArgument, std::move(msg)}; }
  static Status NotFound(std::string msg) { return {Code::kNotFound, std::move(msg)}; }
  static Status IoError(std::string msg) { return {Code::kIoError, std::move(msg)}; }
  static Status Corrupt(std::string msg) { return {Code::kCorrupt, std::move(msg)}; }
  static Status Unavailable(std::string msg) { return {Code::kUnavailable, std::move(msg)}; }
  // The one place errno becomes a Status: "<what>: <strerror(errnum)>".
  static Status FromErrno(const std::string& what, int errnum);

  bool ok() const { return code_ == Code::kOk; }
  Code code() const { return code_; }
  const std::string& message() const { return message_; }

 private:
  Status(Code code, std::string message) : code_(code), message_(std::move(message)) {}
  Code code_ = Code::kOk;
  std::string message_;
};

template <typename T>
class [[nodiscard]] Result {
 public:
  Result(T value) : value_(std::move(value)) {}          // NOLINT(google-explicit-constructor)
  Result(Status status) : status_(std::move(status)) {}  // NOLINT(google-explicit-constructor)

  bool ok() const { return value_.has_value(); }
  const Status& status() const { return status_; }
  T& value() & { return *value_; }
  const T& value() const& { return *value_; }
  // By value, so `for (auto& x : F().value())` does not dangle.
  T value() && { return std::move(*value_); }
  T* operator->() { return &*value_; }
  const T* operator->() const { return &*value_; }
  T& operator*() { return *value_; }

 private:
  std::optional<T> value_;
  Status status_;
};

}  // namespace tb

// Returns early from the enclosing function when `expr` yields a failed Status.
#define TB_RETURN_IF_ERROR(expr)             \
  do {                                       \
    ::tb::Status tb_status_ = (expr);        \
    if (!tb_status_.ok()) return tb_status_; \
  } while (0)
