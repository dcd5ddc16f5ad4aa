// The text of NVIDIA's tools, in the formats the real tools print
// (see sim/README.md).
#include "collect/gpu_tool_parsers.h"

#include <gtest/gtest.h>

namespace tb {
namespace {

TEST(SmiCsv, RadtFieldsWithUnsupportedValuesAbsent) {
  SmiRow row;
  ASSERT_TRUE(ParseSmiCsvLine("2022/08/29 21:41:17.905, 0, 52.18, 7, 1, 3012, P0", 7, row));
  EXPECT_EQ(row.text[0], "2022/08/29 21:41:17.905");
  EXPECT_EQ(*row.values[1], 0);
  EXPECT_EQ(*row.values[2], 52.18);
  EXPECT_EQ(*row.values[5], 3012);
  EXPECT_EQ(*row.values[6], 0);  // P0
  ASSERT_TRUE(ParseSmiCsvLine("2022/08/29 21:41:17.905, 1, [N/A], [Not Supported], 1, 3012, P8", 7, row));
  EXPECT_FALSE(row.values[2].has_value());
  EXPECT_FALSE(row.values[3].has_value());
  EXPECT_EQ(*row.values[6], 8);
}

TEST(SmiCsv, WrongFieldCountIsRefused) {
  SmiRow row;
  EXPECT_FALSE(ParseSmiCsvLine("2022/08/29 21:41:17.905, 0, 52.18", 7, row));
  EXPECT_FALSE(ParseSmiCsvLine("", 7, row));
}

TEST(DcgmiDmon, HeaderUnitsAndRows) {
  DmonRow row;
  EXPECT_EQ(ParseDmonLine("#Entity   POWER     TOTEC           SMACT", 3, row), DmonLine::kHeader);
  EXPECT_EQ(ParseDmonLine("ID        W         mJ", 3, row), DmonLine::kHeader);
  ASSERT_EQ(ParseDmonLine("GPU 0     52.183    356133763110    0.000", 3, row), DmonLine::kRow);
  EXPECT_EQ(row.entity_kind, "GPU");
  EXPECT_EQ(row.entity_id, 0);
  EXPECT_EQ(*row.values[0], 52.183);
  EXPECT_EQ(*row.values[1], 356133763110.0);
  EXPECT_EQ(*row.values[2], 0.0);
  ASSERT_EQ(ParseDmonLine("GPU-I 1   N/A       N/A             0.250", 3, row), DmonLine::kRow);
  EXPECT_EQ(row.entity_kind, "GPU-I");
  EXPECT_FALSE(row.values[0].has_value());
  EXPECT_EQ(*row.values[2], 0.25);
}

TEST(DcgmiDmon, ErrorsAndGarbage) {
  DmonRow row;
  EXPECT_EQ(ParseDmonLine("Error setting watches. Result: -29: The third-party Profiling module returned an "
                          "unrecoverable error",
                          3, row),
            DmonLine::kError);
  EXPECT_EQ(ParseDmonLine("GPU 0     52.183", 3, row), DmonLine::kOther);
  EXPECT_EQ(ParseDmonLine("GPU zero 1 2 3", 3, row), DmonLine::kOther);
  EXPECT_EQ(ParseDmonLine("GPU 0 1.0 abc 3", 3, row), DmonLine::kOther);
}

}  // namespace
}  // namespace tb
