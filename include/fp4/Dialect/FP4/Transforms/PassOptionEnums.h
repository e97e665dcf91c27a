//===- PassOptionEnums.h - pass options over a closed set of names -*- C++ -*-//
//
// The fp4 transform options whose value is one of a few names (operands=,
// mode=, sparsity=) are enums: declared in Passes.td with the enum type and
// `enumOptionValues(k<Enum>Names)`, each enum's names in one table here that
// the option, the recipe parser (parseEnumName) and messages share, so the
// spellings cannot disagree.
//
// An unknown value fails at option parsing with the valid names, like the
// GPU options (GPUConfigOptions.h):
//
//   for the --mode option: 'fast' is not a valid value; valid: randomized,
//   deterministic, two-level
//
// llvm::cl's enum parser only says "Cannot find option named 'fast'!", and
// ODS options cannot name a parser, so FP4_NAMED_ENUM_OPTION(E) specializes
// llvm::cl::parser<E> as NamedEnumParser<E>: the generic enum parser with
// that message (MLIR's pass options still wrap it, for printing).
//
//===----------------------------------------------------------------------===//

#ifndef FP4_DIALECT_FP4_TRANSFORMS_PASSOPTIONENUMS_H
#define FP4_DIALECT_FP4_TRANSFORMS_PASSOPTIONENUMS_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/CommandLine.h"

#include <optional>
#include <string>

namespace mlir::fp4 {

/// One name of an enum option.
template <typename EnumT> struct EnumName {
  EnumT value;
  llvm::StringLiteral name;
  llvm::StringLiteral help;
};

/// The value named `text` (surrounding blanks ignored), if any.
template <typename EnumT>
std::optional<EnumT> parseEnumName(llvm::ArrayRef<EnumName<EnumT>> names,
                                   llvm::StringRef text) {
  for (const EnumName<EnumT> &n : names)
    if (n.name == text.trim())
      return n.value;
  return std::nullopt;
}

/// "a, b or c" for messages.
template <typename EnumT>
std::string listEnumNames(llvm::ArrayRef<EnumName<EnumT>> names) {
  std::string out;
  for (auto [i, n] : llvm::enumerate(names)) {
    if (i)
      out += i + 1 == names.size() ? " or " : ", ";
    out += n.name.str();
  }
  return out;
}

/// The name of `value` in `names`.
template <typename EnumT>
llvm::StringRef stringifyEnumName(llvm::ArrayRef<EnumName<EnumT>> names,
                                  EnumT value) {
  for (const EnumName<EnumT> &n : names)
    if (n.value == value)
      return n.name;
  return "";
}

/// The option modifier adding the names of a table as the option's values.
template <typename EnumT> struct EnumOptionValues {
  llvm::ArrayRef<EnumName<EnumT>> names;
  template <typename OptionT> void apply(OptionT &option) const {
    for (const EnumName<EnumT> &n : names)
      option.getParser().addLiteralOption(n.name, n.value, n.help);
  }
};
template <typename EnumT, size_t N>
EnumOptionValues<EnumT> enumOptionValues(const EnumName<EnumT> (&names)[N]) {
  return {llvm::ArrayRef<EnumName<EnumT>>(names)};
}

/// llvm::cl's generic enum parser, except that an unknown value lists the
/// valid ones.
template <typename EnumT>
class NamedEnumParser : public llvm::cl::generic_parser_base {
protected:
  class OptionInfo : public GenericOptionInfo {
  public:
    OptionInfo(llvm::StringRef name, EnumT value, llvm::StringRef help)
        : GenericOptionInfo(name, help), V(value) {}
    llvm::cl::OptionValue<EnumT> V;
  };
  llvm::SmallVector<OptionInfo, 4> Values;

public:
  using parser_data_type = EnumT;

  NamedEnumParser(llvm::cl::Option &option) : generic_parser_base(option) {}

  unsigned getNumOptions() const override { return Values.size(); }
  llvm::StringRef getOption(unsigned n) const override {
    return Values[n].Name;
  }
  llvm::StringRef getDescription(unsigned n) const override {
    return Values[n].HelpStr;
  }
  const llvm::cl::GenericOptionValue &
  getOptionValue(unsigned n) const override {
    return Values[n].V;
  }

  /// True on error.
  bool parse(llvm::cl::Option &option, llvm::StringRef argName,
             llvm::StringRef arg, EnumT &value) {
    llvm::StringRef text = Owner.hasArgStr() ? arg : argName;
    for (const OptionInfo &info : Values)
      if (info.Name == text) {
        value = info.V.getValue();
        return false;
      }
    return option.error(
        "'" + text + "' is not a valid value; valid: " +
        llvm::join(
            llvm::map_range(Values, [](const OptionInfo &i) { return i.Name; }),
            ", "));
  }

  template <typename DT>
  void addLiteralOption(llvm::StringRef name, const DT &value,
                        llvm::StringRef help) {
    Values.push_back(OptionInfo(name, static_cast<EnumT>(value), help));
    llvm::cl::AddLiteralOption(Owner, name);
  }

  void removeLiteralOption(llvm::StringRef name) {
    unsigned n = findOption(name);
    assert(n != Values.size() && "option not found");
    Values.erase(Values.begin() + n);
  }
};

//===----------------------------------------------------------------------===//
// The enums
//===----------------------------------------------------------------------===//

/// Which operands of `C += A * B` are quantized (fp4-quantize operands=): A
/// (lhs) holds the activations, B (rhs) the weights.
enum class QuantizeOperands { Both, Activations, Weights };
inline constexpr EnumName<QuantizeOperands> kQuantizeOperandsNames[] = {
    {QuantizeOperands::Both, "both", "activations and weights"},
    {QuantizeOperands::Activations, "activations", "the lhs only"},
    {QuantizeOperands::Weights, "weights", "the rhs only"},
};

/// How fp4-rotate chooses R (numerics.md 6; see the pass description).
enum class RotationMode { Randomized, Deterministic, TwoLevel };
inline constexpr EnumName<RotationMode> kRotationModeNames[] = {
    {RotationMode::Randomized, "randomized",
     "random signs D (seeded) times the Walsh-Hadamard matrix"},
    {RotationMode::Deterministic, "deterministic",
     "the Walsh-Hadamard matrix alone"},
    {RotationMode::TwoLevel, "two-level",
     "calibrated permutation, then the block rotation"},
};

/// Which operands of an fp4.matmul a correction applies to (operands= of
/// fp4-outlier-fallback and fp4-residual): the lhs holds the activations,
/// the rhs the weights.
enum class CorrectionOperands { Activations, Weights, Both };
inline constexpr EnumName<CorrectionOperands> kCorrectionOperandsNames[] = {
    {CorrectionOperands::Activations, "activations", "the lhs only"},
    {CorrectionOperands::Weights, "weights", "the rhs only"},
    {CorrectionOperands::Both, "both", "activations and weights"},
};

/// fp4-outlier-fallback mode=.
enum class OutlierMode {
  /// Per block, the k largest |x| of every selected quantized operand go to
  /// a bf16 side tensor (fp4.split_outliers).
  BlockTopK,
  /// Channels whose calibrated max |x| exceeds a threshold are gathered out
  /// of the activations and the weights and multiplied in high precision.
  StaticChannels,
};
inline constexpr EnumName<OutlierMode> kOutlierModeNames[] = {
    {OutlierMode::BlockTopK, "block-topk", "per-block top-k outliers"},
    {OutlierMode::StaticChannels, "static-channels",
     "calibrated outlier channels"},
};

/// fp4-residual sparsity=: which entries of the residual are kept.
enum class ResidualSparsity { TwoFour, TopK };
inline constexpr EnumName<ResidualSparsity> kResidualSparsityNames[] = {
    {ResidualSparsity::TwoFour, "2:4", "2 of every 4 along K"},
    {ResidualSparsity::TopK, "topk", "k of every block"},
};

} // namespace mlir::fp4

/// Makes llvm::cl (and so every pass option of type E) use NamedEnumParser.
#define FP4_NAMED_ENUM_OPTION(E)                                               \
  template <>                                                                  \
  class llvm::cl::parser<E> : public ::mlir::fp4::NamedEnumParser<E> {         \
  public:                                                                      \
    using ::mlir::fp4::NamedEnumParser<E>::NamedEnumParser;                    \
  };

FP4_NAMED_ENUM_OPTION(::mlir::fp4::QuantizeOperands)
FP4_NAMED_ENUM_OPTION(::mlir::fp4::RotationMode)
FP4_NAMED_ENUM_OPTION(::mlir::fp4::CorrectionOperands)
FP4_NAMED_ENUM_OPTION(::mlir::fp4::OutlierMode)
FP4_NAMED_ENUM_OPTION(::mlir::fp4::ResidualSparsity)

#endif // FP4_DIALECT_FP4_TRANSFORMS_PASSOPTIONENUMS_H
