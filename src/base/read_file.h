// Reads a whole file into memory, decompressing it when its name ends in ".zst" (one or
// more zstd frames), so data kept compressed in the repository (testdata/) reads like the
// plain file. Shared by the simulated GPU, the tests and the benchmarks; thread-safe.
#pragma once

#include <string>

namespace tb {

// True with the contents in *out; false with a sentence in *error (the path and why).
bool ReadWholeFile(const std::string& path, std::string* out, std::string* error);

}  // namespace tb
