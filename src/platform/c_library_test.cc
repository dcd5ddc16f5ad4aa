#include "platform/c_library.h"

#include <gtest/gtest.h>

namespace tb {
namespace {

TEST(CLibraryTest, AMissingLibrarySaysWhatNeedsItAndWhatToInstall) {
  Result<void*> missing = OpenCLibrary("libtrainbench-absent.so.7", "PostgreSQL stores", "libpq5");
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Status::Code::kUnavailable);
  const std::string& why = missing.status().message();
  EXPECT_NE(why.find("PostgreSQL stores need libtrainbench-absent.so.7"), std::string::npos) << why;
  EXPECT_NE(why.find("apt-get install libpq5"), std::string::npos) << why;
}

TEST(CLibraryTest, FunctionsAreBoundByNameAndAMissingOneIsRefused) {
  Result<void*> libm = OpenCLibrary("libm.so.6", "this test", "libc6");
  ASSERT_TRUE(libm.ok()) << libm.status().message();
  double (*cosine)(double) = nullptr;
  ASSERT_TRUE(BindCFunction(*libm, "libm.so.6", "cos", cosine).ok());
  EXPECT_EQ(cosine(0.0), 1.0);
  Status absent = BindCFunction(*libm, "libm.so.6", "trainbench_no_such_function", cosine);
  EXPECT_EQ(absent.code(), Status::Code::kUnavailable);
  EXPECT_NE(absent.message().find("libm.so.6 has no function trainbench_no_such_function"), std::string::npos)
      << absent.message();
}

}  // namespace
}  // namespace tb
