#include "base/read_file.h"

#include <zstd.h>

#include <fstream>
#include <iterator>
#include <memory>

namespace tb {
namespace {

bool Decompress(const std::string& path, const std::string& compressed, std::string* out,
                std::string* error) {
  std::unique_ptr<ZSTD_DStream, decltype(&ZSTD_freeDStream)> stream(ZSTD_createDStream(), ZSTD_freeDStream);
  if (!stream) {
    *error = "cannot decompress " + path + ": out of memory";
    return false;
  }
  out->clear();
  std::string buffer(ZSTD_DStreamOutSize(), '\0');
  ZSTD_inBuffer in{compressed.data(), compressed.size(), 0};
  size_t last = 0;
  while (in.pos < in.size) {
    ZSTD_outBuffer o{buffer.data(), buffer.size(), 0};
    last = ZSTD_decompressStream(stream.get(), &o, &in);
    if (ZSTD_isError(last)) {
      *error = "cannot decompress " + path + ": " + ZSTD_getErrorName(last);
      return false;
    }
    out->append(buffer.data(), o.pos);
  }
  if (last != 0) {
    *error = "cannot decompress " + path + ": the file is truncated";
    return false;
  }
  return true;
}

}  // namespace

bool ReadWholeFile(const std::string& path, std::string* out, std::string* error) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    *error = "cannot read " + path;
    return false;
  }
  std::string raw((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) {
    *error = "cannot read " + path;
    return false;
  }
  if (path.size() > 4 && path.compare(path.size() - 4, 4, ".zst") == 0)
    return Decompress(path, raw, out, error);
  *out = std::move(raw);
  return true;
}

}  // namespace tb
