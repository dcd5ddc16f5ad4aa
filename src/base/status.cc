#include "base/status.h"

#include <cstring>

namespace tb {

Status Status::FromErrno(const std::string& what, int errnum) {
  Code code = errnum == ENOENT ? Code::kNotFound : Code::kIoError;
  return Status(code, what + ": " + std::strerror(errnum));
}

}  // namespace tb
