//===- CalibrationData.h - calibration samples for fp4 passes ---*- C++ -*-===//
//
// Calibration data: sample values of the tensors a model quantizes, for the
// passes that need statistics of runtime values (fp4-error-report,
// fp4-rotate's two-level mode, fp4-outlier-fallback's static variant).
//
// The file is a NumPy `.npz` archive written by `np.savez` (stored, not
// compressed): one float32 array per value, whose LAST axis is the channel
// axis K of the value (the quantize op's blocked axis); any leading sample
// dimensions are flattened into rows. docs/Calibration.md is the user
// documentation of the format and of the keys.
//
// A quantized value's key is, in this order (keyFor):
//  1. the `fp4.calibration` string attribute on the fp4.quantize op;
//  2. `@<func>/arg<N>` when the quantize input, looking through arith.extf,
//     arith.truncf and linalg.transpose, is argument N of the entry block of
//     the enclosing function `<func>`;
//  3. the name of the NameLoc (possibly inside a FusedLoc or CallSiteLoc) of
//     the quantize input's defining op, else of the first op found looking
//     through the same casts/transposes.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_ANALYSIS_CALIBRATIONDATA_H
#define FP4_ANALYSIS_CALIBRATIONDATA_H

#include "mlir/IR/Value.h"
#include "mlir/Support/LLVM.h"
#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"

#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace mlir {
class InFlightDiagnostic;
class Operation;
namespace fp4 {
class QuantizeOp;

/// The name of the quantize-op attribute that overrides the derived key.
inline constexpr StringLiteral kCalibrationAttrName = "fp4.calibration";

/// Samples of one value: `rows()` x `channels()` float32, row-major (the
/// array flattened to 2-D with its last axis kept). Valid as long as the
/// CalibrationData it came from.
struct CalibrationView {
  /// The archive member name without `.npy`.
  StringRef key;
  /// Shape of the array as stored (rank >= 1).
  ArrayRef<int64_t> shape;
  /// rows() * channels() values, row-major, channel fastest.
  ArrayRef<float> data;

  int64_t channels() const { return shape.back(); }
  int64_t rows() const {
    return channels() == 0 ? 0 : static_cast<int64_t>(data.size()) / channels();
  }
  ArrayRef<float> row(int64_t r) const {
    return data.slice(r * channels(), channels());
  }
};

/// An opened calibration archive. Cheap to move; copies share the arrays.
class CalibrationData {
public:
  /// Reads an `.npz` file. Fails with a message in `error` naming the file
  /// (and the member) and the reason: unreadable, not a zip archive,
  /// compressed or encrypted members, members that are not `.npy` files,
  /// dtypes other than little-endian float32, arrays of rank 0, CRC
  /// mismatches. Fortran-ordered arrays are transposed to C order on load.
  static FailureOr<CalibrationData> load(StringRef path, std::string &error);

  /// Same, from the archive's bytes (`name` is used in messages).
  static FailureOr<CalibrationData> parse(StringRef bytes, StringRef name,
                                          std::string &error);

  /// The key of a quantized value (see the file comment), or "" when the op
  /// has no attribute, its input is no function argument and carries no
  /// name location.
  static std::string keyFor(QuantizeOp op);
  /// Rules 2 and 3 for any float value (e.g. a matmul operand).
  static std::string keyFor(Value value);

  /// The samples stored under `key`, if any.
  std::optional<CalibrationView> lookup(StringRef key) const;
  /// The samples for a quantize op's input (by keyFor(op)), if any.
  std::optional<CalibrationView> lookup(QuantizeOp op) const;

  /// lookup(op), and checks that the samples have as many channels as the
  /// quantize op's blocked axis. Otherwise emits an error on `op` naming the
  /// key looked for (or saying that the op has none) and fails.
  FailureOr<CalibrationView> lookupOrEmitError(QuantizeOp op) const;

  /// Member keys, sorted.
  std::vector<std::string> keys() const;
  size_t size() const;
  /// The file (or name) the data came from.
  StringRef source() const;

  struct Storage;

private:
  std::shared_ptr<const Storage> storage;
};

} // namespace fp4
} // namespace mlir

#endif // FP4_ANALYSIS_CALIBRATIONDATA_H
