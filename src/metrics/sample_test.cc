#include "metrics/sample.h"

#include <gtest/gtest.h>

namespace tb {
namespace {

TEST(LabelsTest, PairsKeepTheirOrderAndReadBack) {
  Labels labels = Labels().Add("gpu", 1).Add("gpu_instance", 2).Add("listener", "dcgmi");
  EXPECT_EQ(labels.text(), "gpu=1,gpu_instance=2,listener=dcgmi");
  Labels read = Labels::Parse(labels.text());
  EXPECT_EQ(read, labels);
  EXPECT_EQ(read.Get("gpu"), "1");
  EXPECT_EQ(read.Get("gpu_instance"), "2");  // not confused with "gpu"
  EXPECT_EQ(read.Get("listener"), "dcgmi");
  EXPECT_TRUE(read.Has("listener"));
  EXPECT_FALSE(read.Has("pid"));
  EXPECT_EQ(read.Get("pid"), "");
}

TEST(LabelsTest, ValuesFromOutsideCannotForgeAPair) {
  // A thread named by the training script, a disk's name: never a second label.
  Labels labels{{"name", "data,loader=1\nx"}, {"device", "sda"}};
  EXPECT_EQ(labels.text(), "name=data_loader_1_x,device=sda");
  EXPECT_EQ(Labels::Parse(labels.text()).Get("device"), "sda");
  EXPECT_FALSE(Labels::Parse(labels.text()).Has("loader"));
}

TEST(LabelsTest, NoLabelsIsEmptyText) {
  EXPECT_TRUE(kNoLabels.empty());
  EXPECT_EQ(kNoLabels.text(), "");
  EXPECT_FALSE(Labels::Parse("").Has("gpu"));
  Labels gpu{{"gpu", "0"}};
  EXPECT_EQ(kNoLabels.With(gpu), gpu);
  EXPECT_EQ(gpu.With(Labels{{"listener", "smi"}}).text(), "gpu=0,listener=smi");
}

TEST(LabelsTest, OrderedForUseAsAKey) {
  Labels gpu0{{"gpu", "0"}}, gpu1{{"gpu", "1"}}, process{{"gpu", "0"}, {"pid", "7"}};
  EXPECT_LT(gpu0, gpu1);
  EXPECT_NE(gpu0, process);
}

}  // namespace
}  // namespace tb
