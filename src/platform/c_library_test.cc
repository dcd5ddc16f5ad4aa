#include "platform/c_library.h"

#include <gtest/gtest.h>

#include <cmath>

namespace tb {
namespace {

TEST(CLibraryTest, AMissingLibrarySaysWhatNeedsItAndWhatToInstall) {
  Result<void*> missing = OpenCLibrary({"libtrainbench-absent.so.7", "PostgreSQL stores", "libpq5"});
  ASSERT_FALSE(missing.ok());
  EXPECT_EQ(missing.status().code(), Status::Code::kUnavailable);
  const std::string& why = missing.status().message();
  EXPECT_NE(why.find("PostgreSQL stores need libtrainbench-absent.so.7"), std::string::npos) << why;
  EXPECT_NE(why.find("apt-get install libpq5"), std::string::npos) << why;
}

TEST(CLibraryTest, FunctionsAreBoundByNameAndAMissingOneIsRefused) {
  Result<void*> libm = OpenCLibrary({"libm.so.6", "this test", "libc6"});
  ASSERT_TRUE(libm.ok()) << libm.status().message();
  double (*cosine)(double) = nullptr;
  ASSERT_TRUE(BindCFunction(*libm, "libm.so.6", "cos", cosine).ok());
  ASSERT_NE(cosine, nullptr);
  EXPECT_EQ(cosine != nullptr ? cosine(0.0) : 0.0, 1.0);  // the analyzer does not see ASSERT return
  Status absent = BindCFunction(*libm, "libm.so.6", "trainbench_no_such_function", cosine);
  EXPECT_EQ(absent.code(), Status::Code::kUnavailable);
  EXPECT_NE(absent.message().find("libm.so.6 has no function trainbench_no_such_function"), std::string::npos)
      << absent.message();
}

// Two Apis as the library users declare them: one whose functions all exist, one naming
// a library that is not installed.
#define TB_TEST_LIBM_FUNCTIONS(X) X(cos) X(hypot)
struct Libm {
  static constexpr CLibrary kLibrary{"libm.so.6", "this test", "libc6"};
  TB_C_LIBRARY_FUNCTIONS(TB_TEST_LIBM_FUNCTIONS)
};
struct Absent {
  static constexpr CLibrary kLibrary{"libtrainbench-absent.so.7", "figures (PDF, SVG, PNG)",
                                     "libpangocairo-1.0-0"};
  TB_C_LIBRARY_FUNCTIONS(TB_TEST_LIBM_FUNCTIONS)
};

TEST(CLibraryTest, AnApiIsLoadedOnceAndEveryAskAfterGetsTheSameAnswer) {
  Result<const Libm*> first = LoadCLibrary<Libm>();
  ASSERT_TRUE(first.ok()) << first.status().message();
  EXPECT_EQ((*first)->hypot(3.0, 4.0), 5.0);
  EXPECT_EQ(LoadCLibrary<Libm>().value(), *first);
  EXPECT_EQ(&LoadedCLibrary<Libm>(), *first);

  for (int ask = 0; ask < 2; ++ask) {
    Result<const Absent*> absent = LoadCLibrary<Absent>();
    ASSERT_FALSE(absent.ok());
    EXPECT_NE(absent.status().message().find("figures (PDF, SVG, PNG) need libtrainbench-absent.so.7"),
              std::string::npos)
        << absent.status().message();
    EXPECT_NE(absent.status().message().find("apt-get install libpangocairo-1.0-0"), std::string::npos);
  }
}

TEST(CLibraryDeathTest, UsingALibraryThatDidNotLoadEndsTheProcessSayingWhy) {
  EXPECT_DEATH(LoadedCLibrary<Absent>(), "need libtrainbench-absent.so.7.*apt-get install");
}

}  // namespace
}  // namespace tb
