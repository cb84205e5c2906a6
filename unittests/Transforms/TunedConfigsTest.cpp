//===- TunedConfigsTest.cpp - the tables of measured configs --------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Dialect/Quack/Transforms/TunedConfigs.h"

#include "gtest/gtest.h"

using namespace mlir::quack;

namespace {

TEST(TunedConfigs, ParsesEntriesCommentsAndTabs) {
  std::string error;
  auto table = parseTunedConfigs("# header\n"
                                 "\n"
                                 "softmax_fwd 2 1024 4 2  # 3.1 -> 3.5\n"
                                 "rmsnorm_fwd\t4\t256\t1\t8\n",
                                 error);
  ASSERT_TRUE(mlir::succeeded(table)) << error;
  ASSERT_EQ(table->size(), 2u);
  EXPECT_EQ((*table)[0].kernel, "softmax_fwd");
  EXPECT_EQ((*table)[0].elementBytes, 2);
  EXPECT_EQ((*table)[0].rowLength, 1024);
  EXPECT_EQ((*table)[0].vectorsPerThread, 4);
  EXPECT_EQ((*table)[0].rowsPerCta, 2);
  EXPECT_EQ((*table)[0].line, 3);
  EXPECT_EQ((*table)[1].kernel, "rmsnorm_fwd");
  EXPECT_EQ((*table)[1].rowsPerCta, 8);
  EXPECT_EQ((*table)[1].line, 4);
  EXPECT_EQ((*table)[1].clusterSize, 1);
}

TEST(TunedConfigs, ParsesClusterEntries) {
  std::string error;
  auto table = parseTunedConfigs("cross_entropy_fwd 2 65536 16 1 2\n"
                                 "cross_entropy_fwd 2 131072 16 1 8 # c8\n",
                                 error);
  ASSERT_TRUE(mlir::succeeded(table)) << error;
  ASSERT_EQ(table->size(), 2u);
  EXPECT_EQ((*table)[0].clusterSize, 2);
  EXPECT_EQ((*table)[0].vectorsPerThread, 16);
  EXPECT_EQ((*table)[1].clusterSize, 8);
  auto entry = lookupTunedConfig("sm_90", "cross_entropy_fwd", 2, 40000);
  ASSERT_TRUE(entry.has_value());
  EXPECT_EQ(entry->rowLength, 65536);
  EXPECT_GT(entry->clusterSize, 1);
}

TEST(TunedConfigs, ParsesTheCopyColumn) {
  std::string error;
  auto table = parseTunedConfigs("layernorm_bwd 2 65536 4 1 8 bulk\n"
                                 "layernorm_bwd 4 65536 2 1 16 global\n"
                                 "rmsnorm_bwd 2 65536 2 1 8\n"
                                 "rmsnorm_bwd 4 65536 2 1 8 tensor\n",
                                 error);
  ASSERT_TRUE(mlir::succeeded(table)) << error;
  ASSERT_EQ(table->size(), 4u);
  EXPECT_EQ((*table)[3].copy, std::optional(KernelConfig::Copy::Tensor));
  EXPECT_EQ((*table)[0].copy, std::optional(KernelConfig::Copy::Bulk));
  EXPECT_EQ((*table)[0].clusterSize, 8);
  EXPECT_EQ((*table)[1].copy, std::optional(KernelConfig::Copy::Global));
  EXPECT_FALSE((*table)[2].copy.has_value());
  EXPECT_EQ((*table)[0].stages, 0);
}

TEST(TunedConfigs, ParsesTheStagesColumn) {
  std::string error;
  auto table = parseTunedConfigs("layernorm_bwd 2 8192 2 1 1 bulk 3\n"
                                 "layernorm_bwd 2 65536 4 1 8 tensor 4\n",
                                 error);
  ASSERT_TRUE(mlir::succeeded(table)) << error;
  ASSERT_EQ(table->size(), 2u);
  EXPECT_EQ((*table)[0].stages, 3);
  EXPECT_EQ((*table)[0].clusterSize, 1);
  EXPECT_EQ((*table)[1].stages, 4);
  EXPECT_EQ((*table)[1].copy, std::optional(KernelConfig::Copy::Tensor));
}

TEST(TunedConfigs, ParsesTheSharedSumsAfterTheStages) {
  std::string error;
  auto table = parseTunedConfigs("layernorm_bwd 2 131072 4 1 8 bulk 2 sums=1\n"
                                 "layernorm_bwd 2 65536 4 1 4 bulk 2\n",
                                 error);
  ASSERT_TRUE(mlir::succeeded(table)) << error;
  ASSERT_EQ(table->size(), 2u);
  EXPECT_EQ((*table)[0].sharedSums, 1);
  EXPECT_EQ((*table)[0].stages, 2);
  EXPECT_EQ((*table)[0].clusterSize, 8);
  EXPECT_EQ((*table)[1].sharedSums, 0);
}

TEST(TunedConfigs, ParsesPrefetchAfterGlobal) {
  std::string error;
  auto table = parseTunedConfigs("layernorm_fwd 2 256 2 8 1 global prefetch\n"
                                 "layernorm_fwd 2 512 2 8 1 global\n",
                                 error);
  ASSERT_TRUE(mlir::succeeded(table)) << error;
  ASSERT_EQ(table->size(), 2u);
  EXPECT_TRUE((*table)[0].prefetch);
  EXPECT_EQ((*table)[0].stages, 0);
  EXPECT_EQ((*table)[0].copy, std::optional(KernelConfig::Copy::Global));
  EXPECT_FALSE((*table)[1].prefetch);
}

struct BadLine {
  const char *text;
  const char *message;
};

TEST(TunedConfigs, RejectsMalformedLinesNamingThem) {
  const BadLine cases[] = {
      {"softmax_fwd 2 1024 4\n", "line 1: expected"},
      {"# c\nsoftmax_fwd 2 1024 4 2 9 bulk 3 sums=1 9\n", "line 2: expected"},
      {"layernorm_bwd 2 65536 4 1 4 bulk 2 1\n",
       "the ninth column must be 'sums=<K>' with K >= 1 (the last K sums over "
       "rows in shared memory), got '1'"},
      {"layernorm_bwd 2 65536 4 1 4 bulk 2 sums=0\n",
       "the ninth column must be 'sums=<K>'"},
      {"layernorm_bwd 2 65536 4 1 4 bulk 2 sums=all\n",
       "the ninth column must be 'sums=<K>'"},
      {"layernorm_bwd 2 256 2 8 1 global prefetch sums=1\n",
       "'sums=1' follows a stage count, not 'prefetch'"},
      {"softmax_fwd 2 65536 4 1 2 tma\n",
       "the copy path must be 'global', 'bulk' or 'tensor', got 'tma'"},
      {"softmax_fwd 2 65536 4 1 3\n", "powers of two"},
      {"softmax_fwd 2 65536 4 1 2 bulk 1\n",
       "the stages must be an integer from 2 to 8 (or 'prefetch' after 'global'), got '1'"},
      {"softmax_fwd 2 65536 4 1 2 bulk three\n",
       "the stages must be an integer from 2 to 8 (or 'prefetch' after 'global'), got 'three'"},
      {"softmax_fwd 2 65536 4 1 2 global 3\n",
       "stages need a copy into shared memory"},
      {"softmax_fwd 2 65536 4 1 2 bulk prefetch\n",
       "'prefetch' follows the copy path 'global'"},
      {"softmax_fwd 2 1024 4 2 1 global prefetched\n",
       "(or 'prefetch' after 'global'), got 'prefetched'"},
      {"softmax_fwd 2 65536 4 1 32\n", "cluster size must be at most 16"},
      {"softmax_fwd 2 65536 4 2 4\n", "rows per CTA must be 1"},
      {"softmax_fwd two 1024 4 2\n", "'two' is not a positive integer"},
      {"softmax_fwd 2 1024 0 2\n", "'0' is not a positive integer"},
      {"softmax_fwd 2 1024 -4 2\n", "'-4' is not a positive integer"},
      {"softmax_fwd 3 1024 4 2\n", "element bytes must be"},
      {"softmax_fwd 2 1000 4 2\n", "powers of two"},
      {"softmax_fwd 2 1024 3 2\n", "powers of two"},
      {"softmax_fwd 2 1024 4 2\nsoftmax_fwd 2 1024 2 1\n",
       "line 2: repeats the entry of line 1"},
  };
  for (const BadLine &c : cases) {
    std::string error;
    EXPECT_TRUE(mlir::failed(parseTunedConfigs(c.text, error))) << c.text;
    EXPECT_NE(error.find(c.message), std::string::npos)
        << "for '" << c.text << "': got '" << error << "'";
  }
}

TEST(TunedConfigs, TableNamesByArchitecture) {
  EXPECT_EQ(tunedConfigTableName("sm_90"), "sm_90.tsv");
  EXPECT_EQ(tunedConfigTableName("sm_90a"), "sm_90.tsv");
  EXPECT_EQ(tunedConfigTableName("sm_80"), "");
  EXPECT_FALSE(lookupTunedConfig("sm_80", "softmax_fwd", 2, 1024));
  EXPECT_FALSE(lookupTunedConfig("sm_90", "no_such_kernel", 2, 1024));
}

TEST(TunedConfigs, BuiltInTablesParse) {
  std::string error;
  auto table = parseTunedConfigs(builtinTunedConfigText("sm_90"), error);
  EXPECT_TRUE(mlir::succeeded(table)) << "kernels/tuning/sm_90.tsv: " << error;
  for (const TuningTarget &target : tuningTargets("sm_90")) {
    auto text = builtinTunedConfigText("sm_90", target.name);
    EXPECT_FALSE(text.empty()) << target.table.str();
    auto entries = parseTunedConfigs(text, error);
    EXPECT_TRUE(mlir::succeeded(entries)) << target.table.str() << ": " << error;
  }
}

TEST(TunedConfigs, TuningTargets) {
  ASSERT_EQ(tuningTargets("sm_90").size(), 1u);
  const TuningTarget *h100 = findTuningTarget("sm_90a", "h100");
  ASSERT_NE(h100, nullptr);
  EXPECT_EQ(h100->deviceName, "H100");
  EXPECT_EQ(h100->table, "sm_90-h100.tsv");
  EXPECT_EQ(findTuningTarget("sm_90", "h200"), nullptr);
  EXPECT_EQ(findTuningTarget("sm_80", "h100"), nullptr);
  EXPECT_TRUE(tuningTargets("sm_100").empty());
  EXPECT_TRUE(builtinTunedConfigText("sm_90", "h200").empty());
}

TEST(TunedConfigs, TargetEntriesTakePrecedence) {
  // Every entry of the H100's table is what a lookup for that target
  // finds; the architecture's lookup finds its own entry (or none).
  std::string error;
  auto h100 = parseTunedConfigs(builtinTunedConfigText("sm_90", "h100"),
                                error);
  ASSERT_TRUE(mlir::succeeded(h100)) << error;
  ASSERT_FALSE(h100->empty());
  for (const TunedConfig &entry : *h100) {
    auto found = lookupTunedConfig("sm_90", entry.kernel, entry.elementBytes,
                                   entry.rowLength, "h100");
    ASSERT_TRUE(found) << entry.kernel << " " << entry.rowLength;
    EXPECT_EQ(found->table, "sm_90-h100.tsv");
    EXPECT_EQ(found->line, entry.line);
    EXPECT_EQ(found->vectorsPerThread, entry.vectorsPerThread);
    auto base = lookupTunedConfig("sm_90", entry.kernel, entry.elementBytes,
                                  entry.rowLength);
    if (base)
      EXPECT_EQ(base->table, "sm_90.tsv");
  }
  // Where the target's table has no entry, the architecture's applies.
  auto fallback = lookupTunedConfig("sm_90", "cross_entropy_fwd", 2, 4096,
                                    "h100");
  ASSERT_TRUE(fallback);
  EXPECT_EQ(fallback->table, "sm_90.tsv");
}

} // namespace
