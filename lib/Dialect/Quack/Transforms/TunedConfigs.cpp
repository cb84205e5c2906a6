//===- TunedConfigs.cpp - measured configs per architecture ----------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "quack/Dialect/Quack/Transforms/TunedConfigs.h"

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/MathExtras.h"
#include "llvm/Support/raw_ostream.h"

using namespace mlir;
using namespace mlir::quack;

namespace {
/// kernels/tuning/sm_90.tsv, embedded by CMake.
constexpr const char kSm90Table[] =
#include "TunedConfigsSm90.inc"
    ;
/// kernels/tuning/sm_90-h100.tsv, embedded by CMake.
constexpr const char kSm90H100Table[] =
#include "TunedConfigsSm90H100.inc"
    ;

const TuningTarget kSm90Targets[] = {
    {"h100", "H100", "sm_90-h100.tsv", kSm90H100Table},
};

/// A built-in table, parsed once; a malformed one is reported and ignored
/// (a unit test checks every built-in table).
std::vector<TunedConfig> parseBuiltin(StringRef text, StringRef name) {
  std::string error;
  FailureOr<std::vector<TunedConfig>> parsed = parseTunedConfigs(text, error);
  if (failed(parsed)) {
    llvm::errs() << "quack: ignoring kernels/tuning/" << name << ": " << error
                 << "\n";
    return {};
  }
  for (TunedConfig &entry : *parsed)
    entry.table = name;
  return *parsed;
}

std::optional<TunedConfig> find(const std::vector<TunedConfig> &table,
                                StringRef kernel, int64_t elementBytes,
                                int64_t bucket) {
  for (const TunedConfig &entry : table)
    if (entry.kernel == kernel && entry.elementBytes == elementBytes &&
        entry.rowLength == bucket)
      return entry;
  return std::nullopt;
}
} // namespace

FailureOr<std::vector<TunedConfig>>
mlir::quack::parseTunedConfigs(StringRef text, std::string &error) {
  std::vector<TunedConfig> entries;
  SmallVector<StringRef> lines;
  text.split(lines, '\n');
  for (auto [index, rawLine] : llvm::enumerate(lines)) {
    StringRef line = rawLine.split('#').first.trim();
    if (line.empty())
      continue;
    SmallVector<StringRef> fields;
    line.split(fields, ' ', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
    // Tabs count as spaces.
    SmallVector<StringRef> words;
    for (StringRef field : fields) {
      SmallVector<StringRef> parts;
      field.split(parts, '\t', -1, false);
      words.append(parts.begin(), parts.end());
    }
    // A copy: C++17 lambdas cannot capture structured bindings.
    size_t lineNumber = index + 1;
    auto fail = [&](const Twine &why) {
      error = ("line " + Twine(lineNumber) + ": " + why).str();
      return failure();
    };
    if (words.size() < 5 || words.size() > 9)
      return fail("expected '<kernel> <element bytes> <N> <vectors per "
                  "thread> <rows per CTA> [<cluster> [<copy> [<stages> "
                  "[sums=<K>] | prefetch]]]', got " +
                  Twine(words.size()) + " fields");
    TunedConfig entry;
    if (words.size() == 9) {
      StringRef count = words[8];
      if (!count.consume_front("sums=") ||
          count.getAsInteger(10, entry.sharedSums) || entry.sharedSums < 1)
        return fail("the ninth column must be 'sums=<K>' with K >= 1 (the "
                    "last K sums over rows in shared memory), got '" +
                    words[8] + "'");
      if (words[7] == "prefetch")
        return fail("'sums=" + Twine(entry.sharedSums) +
                    "' follows a stage count, not 'prefetch'");
      words.pop_back();
    }
    if (words.size() == 8) {
      if (words[7] == "prefetch")
        entry.prefetch = true;
      else if (words[7].getAsInteger(10, entry.stages) || entry.stages < 2 ||
               entry.stages > 8)
        return fail("the stages must be an integer from 2 to 8 (or "
                    "'prefetch' after 'global'), got '" + words[7] + "'");
      words.pop_back();
    }
    if (words.size() == 7) {
      entry.copy = parseCopy(words[6]);
      if (!entry.copy)
        return fail("the copy path must be 'global', 'bulk' or 'tensor', "
                    "got '" + words[6] + "'");
      if (entry.stages != 0 && *entry.copy == KernelConfig::Copy::Global)
        return fail("stages need a copy into shared memory ('bulk' or "
                    "'tensor'), not 'global'");
      if (entry.prefetch && *entry.copy != KernelConfig::Copy::Global)
        return fail("'prefetch' follows the copy path 'global'; after '" +
                    words[6] + "' the column is a stage count");
      words.pop_back();
    }
    entry.kernel = words[0].str();
    entry.line = index + 1;
    int64_t *values[] = {&entry.elementBytes, &entry.rowLength,
                         &entry.vectorsPerThread, &entry.rowsPerCta,
                         &entry.clusterSize};
    for (auto [value, word] : llvm::zip(values, ArrayRef(words).drop_front()))
      if (word.getAsInteger(10, *value) || *value <= 0)
        return fail("'" + word + "' is not a positive integer");
    if (entry.elementBytes != 1 && entry.elementBytes != 2 &&
        entry.elementBytes != 4 && entry.elementBytes != 8)
      return fail("element bytes must be 1, 2, 4 or 8");
    for (int64_t v : {entry.rowLength, entry.vectorsPerThread,
                      entry.rowsPerCta, entry.clusterSize})
      if (!llvm::isPowerOf2_64(v))
        return fail("N, vectors per thread, rows per CTA and the cluster "
                    "size must be powers of two");
    if (entry.clusterSize > 16)
      return fail("the cluster size must be at most 16");
    if (entry.clusterSize > 1 && entry.rowsPerCta != 1)
      return fail("a cluster splits one row: rows per CTA must be 1 with a "
                  "cluster of " + Twine(entry.clusterSize));
    for (const TunedConfig &other : entries)
      if (other.kernel == entry.kernel &&
          other.elementBytes == entry.elementBytes &&
          other.rowLength == entry.rowLength)
        return fail("repeats the entry of line " + Twine(other.line));
    entries.push_back(std::move(entry));
  }
  return entries;
}

StringRef mlir::quack::tunedConfigTableName(StringRef arch) {
  if (arch == "sm_90" || arch == "sm_90a")
    return "sm_90.tsv";
  return "";
}

ArrayRef<TuningTarget> mlir::quack::tuningTargets(StringRef arch) {
  if (tunedConfigTableName(arch) == "sm_90.tsv")
    return kSm90Targets;
  return {};
}

const TuningTarget *mlir::quack::findTuningTarget(StringRef arch,
                                                  StringRef name) {
  for (const TuningTarget &target : tuningTargets(arch))
    if (target.name == name)
      return &target;
  return nullptr;
}

std::string mlir::quack::knownTuningTargets(StringRef arch) {
  ArrayRef<TuningTarget> targets = tuningTargets(arch);
  if (targets.empty())
    return " (it has none)";
  std::string text = "; known:";
  for (const TuningTarget &t : targets)
    text += " " + t.name.str();
  return text;
}

StringRef mlir::quack::builtinTunedConfigText(StringRef arch,
                                              StringRef target) {
  if (tunedConfigTableName(arch) != "sm_90.tsv")
    return "";
  if (target.empty())
    return kSm90Table;
  const TuningTarget *found = findTuningTarget(arch, target);
  return found ? found->text : StringRef();
}

std::optional<TunedConfig>
mlir::quack::lookupTunedConfig(StringRef arch, StringRef kernel,
                               int64_t elementBytes, int64_t rowLength,
                               StringRef target) {
  if (tunedConfigTableName(arch).empty() || rowLength <= 0)
    return std::nullopt;
  int64_t bucket = static_cast<int64_t>(llvm::PowerOf2Ceil(rowLength));
  // The targets' tables are parsed on the first lookup that names one.
  if (!target.empty()) {
    static const std::vector<std::vector<TunedConfig>> targetTables = [] {
      std::vector<std::vector<TunedConfig>> tables;
      for (const TuningTarget &t : kSm90Targets)
        tables.push_back(parseBuiltin(t.text, t.table));
      return tables;
    }();
    for (auto [t, table] : llvm::zip(kSm90Targets, targetTables))
      if (t.name == target)
        if (std::optional<TunedConfig> entry =
                find(table, kernel, elementBytes, bucket))
          return entry;
  }
  static const std::vector<TunedConfig> table =
      parseBuiltin(kSm90Table, "sm_90.tsv");
  return find(table, kernel, elementBytes, bucket);
}
