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

// DCGM 3.x's layout: a rule between GPUs, instances and their compute instances below their
// GPU, each cell padded and closed with '|'.
TEST(DcgmiDiscovery, GpuInstanceEntitiesFromTheHierarchy) {
  const char* hierarchy =
      "+-------------------+--------------------------------------------------------------------+\n"
      "| Instance Hierarchy                                                                     |\n"
      "+===================+====================================================================+\n"
      "| GPU 0             | GPU GPU-0a1b2c3d-0000-1111-2222-333344445555 (EntityID: 0)         |\n"
      "| -> I 0/1          | GPU Instance (EntityID: 0)                                         |\n"
      "|    -> CI 0/1/0    | Compute Instance (EntityID: 0)                                     |\n"
      "| -> I 0/2          | GPU Instance (EntityID: 1)                                         |\n"
      "|    -> CI 0/2/0    | Compute Instance (EntityID: 1)                                     |\n"
      "+-------------------+--------------------------------------------------------------------+\n"
      "| GPU 1             | GPU GPU-9f8e7d6c-0000-1111-2222-333344445555 (EntityID: 1)         |\n"
      "| -> I 1/1          | GPU Instance (EntityID: 7)                                         |\n"
      "|    -> CI 1/1/0    | Compute Instance (EntityID: 7)                                     |\n"
      "| -> I 1/13         | GPU Instance (EntityID: 8)                                         |\n"
      "|    -> CI 1/13/0   | Compute Instance (EntityID: 9)                                     |\n"
      "+-------------------+--------------------------------------------------------------------+\n";
  EXPECT_EQ(FindDcgmInstanceEntity(hierarchy, 0, 1), 0);
  EXPECT_EQ(FindDcgmInstanceEntity(hierarchy, 0, 2), 1);
  EXPECT_EQ(FindDcgmInstanceEntity(hierarchy, 1, 1), 7);
  EXPECT_EQ(FindDcgmInstanceEntity(hierarchy, 1, 13), 8);  // the GPU instance's, not its CI's
  EXPECT_EQ(FindDcgmInstanceEntity(hierarchy, 1, 3), std::nullopt);
  EXPECT_EQ(FindDcgmInstanceEntity(hierarchy, 2, 1), std::nullopt);
  EXPECT_EQ(FindDcgmInstanceEntity("Error: unable to establish a connection", 0, 1), std::nullopt);
}

TEST(SmiTimestamp, LocalTimeToUnixMillis) {
  std::optional<int64_t> a = ParseSmiTimestamp("2022/08/29 21:41:17.905");
  std::optional<int64_t> b = ParseSmiTimestamp("2022/08/29 21:41:18.005");
  ASSERT_TRUE(a && b);
  EXPECT_EQ(*b - *a, 100);
  EXPECT_EQ(ParseSmiTimestamp("[N/A]"), std::nullopt);
  // Found by fuzz_tool_output: a field far too long overflowed.
  EXPECT_EQ(ParseSmiTimestamp("2022/041:17.96666666666666666-0766666666666666666666"), std::nullopt);
  EXPECT_EQ(ParseSmiTimestamp("2022/13/29 21:41:17.905"), std::nullopt);
  EXPECT_EQ(ParseSmiTimestamp("2022/08/29 21:41:17.9o5"), std::nullopt);
}

}  // namespace
}  // namespace tb
