//===- PrintLayout.cpp - quackc --print-layout ----------------------------===//
//
// Part of the quack project.
//
//===----------------------------------------------------------------------===//

#include "PrintLayout.h"

#include "quack/Layout/LayoutPrinter.h"
#include "quack/Layout/TVLayout.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/WithColor.h"

using llvm::errs;
using llvm::raw_fd_ostream;
using llvm::raw_ostream;
using llvm::SmallVector;
using llvm::StringRef;
using llvm::StringSet;
using llvm::Twine;
using llvm::WithColor;
using namespace quack::layout;

namespace {

/// A picture to draw: its text grid and, when it has one, its SVG.
struct Picture {
  std::string text;
  /// Why there is no SVG picture (empty when `svg` holds one).
  std::string noSvgReason;
  Result<std::string> svg = Error{""};
};

int fail(const Twine &message) {
  WithColor::error(errs(), "quackc") << message << "\n";
  return 1;
}

/// `tv:N=64,threads=8,vec=4,rows=2[,cluster=2]`.
Result<RowPartition> parseRowPartition(StringRef spec) {
  RowPartition config;
  struct Field {
    StringRef key;
    int64_t *value;
    bool required;
  } fields[] = {{"N", &config.numCols, true},
                {"threads", &config.threadsPerRow, true},
                {"vec", &config.vecSize, true},
                {"rows", &config.rowsPerCta, true},
                {"cluster", &config.clusterSize, false}};
  StringSet<> seen;
  SmallVector<StringRef> items;
  spec.split(items, ',');
  for (StringRef item : items) {
    auto [key, value] = item.split('=');
    key = key.trim();
    value = value.trim();
    Field *field =
        llvm::find_if(fields, [&](const Field &f) { return f.key == key; });
    if (field == std::end(fields))
      return Error{"unknown TV key '" + key.str() +
                   "' (expected N, threads, vec, rows or cluster)"};
    if (!seen.insert(key).second)
      return Error{"TV key '" + key.str() + "' is given twice"};
    if (value.getAsInteger(10, *field->value))
      return Error{"TV key '" + key.str() + "' needs an integer, got '" +
                   value.str() + "'"};
  }
  for (const Field &field : fields)
    if (field.required && !seen.contains(field.key))
      return Error{"TV spec is missing '" + field.key.str() +
                   "=' (it needs N, threads, vec and rows)"};
  return config;
}

/// `tv:<tv layout>, tile = <tile layout>`.
Result<Picture> tvOverTile(StringRef spec) {
  // Layouts contain commas, so look for the keyword from the end.
  size_t at = spec.rfind("tile");
  StringRef tvText = spec.take_front(at).rtrim();
  StringRef rest = at == StringRef::npos ? "" : spec.drop_front(at + 4).ltrim();
  if (at == StringRef::npos || !tvText.consume_back(",") ||
      !rest.consume_front("="))
    return Error{"expected 'tv:<layout>, tile = <layout>' but got 'tv:" +
                 spec.str() + "'"};
  Result<Layout> tv = parseLayout(tvText.trim());
  if (!tv)
    return Error{"in the tv layout: " + tv.error()};
  Result<Layout> tile = parseLayout(rest.trim());
  if (!tile)
    return Error{"in the tile layout: " + tile.error()};
  Result<std::string> text = printTVLayout(*tv, *tile);
  if (!text)
    return Error{text.error()};
  return Picture{*text, "", tvLayoutToSvg(*tv, *tile)};
}

Result<Picture> rowPartition(StringRef spec) {
  Result<RowPartition> config = parseRowPartition(spec);
  if (!config)
    return Error{config.error()};
  Result<RowTVLayout> row = makeRowTVLayout(*config);
  if (!row)
    return Error{row.error()};
  Result<std::string> text = printTVLayout(row->tv, row->tile);
  if (!text)
    return Error{text.error()};
  return Picture{*text, "", tvLayoutToSvg(row->tv, row->tile)};
}

/// `Sw<B,M,S> o <layout>`.
Result<Picture> swizzled(StringRef spec) {
  size_t close = spec.find('>');
  if (close == StringRef::npos)
    return Error{"expected 'Sw<B,M,S> o <layout>' but got '" + spec.str() +
                 "'"};
  Result<Swizzle> swizzle = parseSwizzle(spec.take_front(close + 1).trim());
  if (!swizzle)
    return Error{swizzle.error()};
  StringRef rest = spec.drop_front(close + 1).ltrim();
  if (!rest.consume_front("o"))
    return Error{"expected 'o' between the swizzle and the layout in '" +
                 spec.str() + "'"};
  Result<Layout> layout = parseLayout(rest.trim());
  if (!layout)
    return Error{layout.error()};
  Result<std::string> text = printLayout(composition(*swizzle, *layout));
  if (!text)
    return Error{text.error()};
  return Picture{*text, "SVG pictures of swizzled layouts are not supported",
                 Error{""}};
}

Result<Picture> plain(StringRef spec) {
  Result<Layout> layout = parseLayout(spec);
  if (!layout)
    return Error{layout.error()};
  Result<std::string> text = printLayout(*layout);
  if (!text)
    return Error{text.error()};
  return Picture{*text, "", layoutToSvg(*layout)};
}

Result<Picture> draw(StringRef spec) {
  spec = spec.trim();
  if (spec.consume_front("tv:")) {
    spec = spec.trim();
    // A layout starts with a digit, a sign or '('; key=value pairs do not.
    if (!spec.empty() && (llvm::isDigit(spec.front()) || spec.front() == '(' ||
                          spec.front() == '-'))
      return tvOverTile(spec);
    return rowPartition(spec);
  }
  if (spec.starts_with("Sw<"))
    return swizzled(spec);
  return plain(spec);
}

} // namespace

int quack::printLayoutCommand(StringRef layoutText, StringRef svgPath,
                              raw_ostream &out) {
  Result<Picture> picture = draw(layoutText);
  if (!picture)
    return fail(picture.error());
  // Write the SVG first so that a failure prints no grid.
  if (!svgPath.empty()) {
    if (!picture->noSvgReason.empty())
      return fail(picture->noSvgReason);
    if (!picture->svg)
      return fail(picture->svg.error());
    std::error_code ec;
    raw_fd_ostream file(svgPath, ec, llvm::sys::fs::OF_None);
    if (ec)
      return fail("cannot write '" + svgPath + "': " + ec.message());
    file << *picture->svg;
  }
  out << picture->text;
  if (!StringRef(picture->text).ends_with("\n"))
    out << "\n";
  return 0;
}
