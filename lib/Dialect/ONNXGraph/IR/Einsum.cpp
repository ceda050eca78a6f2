//===- Einsum.cpp - Parsed Einsum equations -------------------------------===//
//
// Part of amp-opt, under the Apache License v2.0.
//
//===----------------------------------------------------------------------===//

#include "amp/Dialect/ONNXGraph/IR/Einsum.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <map>

using namespace mlir;
using namespace mlir::onnxg;

namespace {
/// One term of an equation: its letters, and where "..." stands (-1: none).
struct Term {
  std::string letters;
  int64_t ellipsisAt = -1;
};
} // namespace

/// Splits `text` into letters and at most one "...".
static std::optional<Term> parseTerm(StringRef text, std::string &error) {
  Term term;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.substr(i).starts_with("...")) {
      if (term.ellipsisAt >= 0) {
        error = "'" + text.str() + "' has two '...'";
        return std::nullopt;
      }
      term.ellipsisAt = term.letters.size();
      i += 2;
      continue;
    }
    if (!llvm::isAlpha(text[i])) {
      error = "'" + text.str() + "' has '" + std::string(1, text[i]) +
              "', neither a letter nor '...'";
      return std::nullopt;
    }
    term.letters += text[i];
  }
  return term;
}

std::optional<EinsumEquation> EinsumEquation::parse(StringRef equation,
                                                    ArrayRef<int64_t> ranks,
                                                    std::string &error) {
  std::string compact;
  for (char c : equation)
    if (!llvm::isSpace(c))
      compact += c;
  auto [inputsText, outputText] = StringRef(compact).split("->");
  bool explicitOutput = StringRef(compact).contains("->");
  SmallVector<StringRef> termTexts;
  inputsText.split(termTexts, ',');
  if (termTexts.size() != ranks.size()) {
    error = "the equation has " + std::to_string(termTexts.size()) +
            " operand terms for " + std::to_string(ranks.size()) + " operands";
    return std::nullopt;
  }
  SmallVector<Term> terms;
  int64_t ellipsisRank = 0;
  for (auto [text, rank] : llvm::zip_equal(termTexts, ranks)) {
    std::optional<Term> term = parseTerm(text, error);
    if (!term)
      return std::nullopt;
    int64_t covered = rank - int64_t(term->letters.size());
    if (covered < 0 || (term->ellipsisAt < 0 && covered != 0)) {
      error = "term '" + text.str() + "' does not fit an operand of rank " +
              std::to_string(rank);
      return std::nullopt;
    }
    ellipsisRank = std::max(ellipsisRank, covered);
    terms.push_back(*term);
  }
  EinsumEquation result;
  std::map<char, unsigned> labels, counts;
  for (const Term &term : terms)
    for (char letter : term.letters) {
      labels.try_emplace(letter, ellipsisRank + labels.size());
      ++counts[letter];
    }
  result.numLabels = ellipsisRank + labels.size();
  // "..." of `covered` dimensions takes the last `covered` ellipsis labels.
  auto appendTerm = [&](const Term &term, int64_t covered,
                        SmallVector<unsigned> &dims) {
    for (size_t i = 0; i <= term.letters.size(); ++i) {
      if (int64_t(i) == term.ellipsisAt)
        for (int64_t d = ellipsisRank - covered; d < ellipsisRank; ++d)
          dims.push_back(d);
      if (i < term.letters.size())
        dims.push_back(labels[term.letters[i]]);
    }
  };
  for (auto [term, rank] : llvm::zip_equal(terms, ranks))
    appendTerm(term, rank - int64_t(term.letters.size()),
               result.operands.emplace_back());
  if (!explicitOutput) {
    // numpy's implicit output: "..." first, then the letters that appear
    // once, in alphabetical order.
    for (int64_t d = 0; d < ellipsisRank; ++d)
      result.output.push_back(d);
    for (auto [letter, count] : counts)
      if (count == 1)
        result.output.push_back(labels[letter]);
    return result;
  }
  std::optional<Term> output = parseTerm(outputText, error);
  if (!output)
    return std::nullopt;
  for (auto [i, letter] : llvm::enumerate(output->letters)) {
    if (!labels.count(letter)) {
      error =
          "output label '" + std::string(1, letter) + "' is in no operand term";
      return std::nullopt;
    }
    if (output->letters.find(letter) != i) {
      error = "output label '" + std::string(1, letter) + "' repeats";
      return std::nullopt;
    }
  }
  appendTerm(*output, output->ellipsisAt >= 0 ? ellipsisRank : 0,
             result.output);
  return result;
}
