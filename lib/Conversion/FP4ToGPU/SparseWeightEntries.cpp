//===- SparseWeightEntries.cpp - weight entries as a 2:4 operand ----------===//

#include "SparseWeightEntries.h"

#include "fp4/Dialect/FP4/IR/ConstantBytes.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"
#include "llvm/ADT/STLFunctionalExtras.h"

#include <cstring>

using namespace mlir;
using namespace mlir::fp4;

namespace {
/// Nibbles lo | hi << 2 of a group (0, a, b, 0) by which entries it holds.
constexpr uint32_t kNone = 0 | 3 << 2;
constexpr uint32_t kBoth = 1 | 2 << 2;
uint32_t firstAlone(uint32_t slot) { return slot | 3 << 2; }
uint32_t secondAlone(uint32_t slot) { return slot << 2; }

bool finiteBF16(uint16_t bits) { return (bits & 0x7F80) != 0x7F80; }
} // namespace

namespace {
/// One unit's entries of a row: (position in the unit, value bits), in
/// position order.
struct UnitEntries {
  std::pair<int64_t, uint16_t> found[2];
  int64_t count = 0;
};

/// Checks the arrays' shape and visits every (row, unit) with its entries
/// (at most 2, distinct positions, in order; non-finite values refused
/// when `finite`), or fails with `why`.
LogicalResult
forEachUnit(ArrayRef<uint16_t> values, ArrayRef<uint8_t> indices, int64_t n,
            int64_t k, int64_t blockSize, int64_t perBlock, bool finite,
            std::string &why,
            llvm::function_ref<void(int64_t, int64_t, const UnitEntries &)>
                visit) {
  if (!(blockSize == 16 || (blockSize > 0 && blockSize % 32 == 0)) ||
      k % blockSize != 0 || perBlock < 1) {
    why = "entries in blocks of 16 or a multiple of 32 dividing K";
    return failure();
  }
  const int64_t blocks = k / blockSize;
  if (static_cast<int64_t>(values.size()) != n * blocks * perBlock ||
      values.size() != indices.size()) {
    why = "entry arrays do not match the weight's shape";
    return failure();
  }
  for (int64_t row = 0; row < n; ++row)
    for (int64_t unit = 0; unit < k / 32 + (k % 32 != 0); ++unit) {
      UnitEntries u;
      const int64_t lo = 32 * unit, hi = std::min<int64_t>(lo + 32, k);
      for (int64_t block = lo / blockSize; block * blockSize < hi; ++block)
        for (int64_t e = 0; e < perBlock; ++e) {
          const int64_t at = (row * blocks + block) * perBlock + e;
          const int64_t index = indices[at];
          if (index >= blockSize) {
            why = "an entry index is not inside its block";
            return failure();
          }
          const int64_t column = block * blockSize + index;
          if (column < lo || column >= hi)
            continue;
          if (u.count == 2) {
            why = "more than 2 entries in a 32-element unit";
            return failure();
          }
          if (finite && !finiteBF16(values[at])) {
            why = "a non-finite entry (its zero-slot products would be NaN)";
            return failure();
          }
          u.found[u.count++] = {column - lo, values[at]};
        }
      if (u.count == 2 && u.found[0].first == u.found[1].first) {
        why = "two entries at one position";
        return failure();
      }
      if (u.count == 2 && u.found[1].first < u.found[0].first)
        std::swap(u.found[0], u.found[1]);
      visit(row, unit, u);
    }
  return success();
}

/// Where (row, unit)'s packed word goes: lane 4 g + q of row block r,
/// chunk c, half h (SparseWeightEntries.h).
int64_t laneWord(int64_t row, int64_t unit, int64_t chunks) {
  const int64_t r = row / 16, g = row % 8;
  return (r * chunks + unit / 4) * 32 + 4 * g + unit % 4;
}

uint32_t valueWord(const UnitEntries &u) {
  uint32_t v = 0;
  for (int64_t j = 0; j < u.count; ++j)
    v |= static_cast<uint32_t>(u.found[j].second) << (16 * j);
  return v;
}
} // namespace

LogicalResult mlir::fp4::packSparseWeightEntries(
    ArrayRef<uint16_t> values, ArrayRef<uint8_t> indices, int64_t n,
    int64_t k, int64_t blockSize, int64_t perBlock,
    std::vector<uint32_t> &packedValues, std::vector<uint32_t> &meta,
    std::string &why) {
  const int64_t rowBlocks = sparseEntryRowBlocks(n),
                chunks = sparseEntryChunks(k);
  packedValues.assign(rowBlocks * chunks * 32 * 2, 0);
  meta.assign(rowBlocks * chunks * 32 * 4, 0xCCCCCCCCu);
  static_assert(kNone == 0xC, "the default nibble fills the words");
  return forEachUnit(
      values, indices, n, k, blockSize, perBlock, /*finite=*/true, why,
      [&](int64_t row, int64_t unit, const UnitEntries &found) {
        const int64_t h = (row % 16) / 8, u = unit % 4;
        const int64_t lane = laneWord(row, unit, chunks);
        packedValues[lane * 2 + h] = valueWord(found);
        // Each entry's group: pair p = e % 4 of code word e / 8, slot 1
        // (a) or 2 (b); lane 4 g + p (the unit's lane 4 g + u, moved to
        // column p) supplies its word e / 8.
        for (int64_t j = 0; j < found.count; ++j) {
          const int64_t e = found.found[j].first;
          const int64_t word = e / 8, pair = e % 4;
          const uint32_t slot = 1 + static_cast<uint32_t>((e % 8) / 4);
          const bool shared = found.count == 2 &&
                              found.found[0].first / 8 ==
                                  found.found[1].first / 8 &&
                              found.found[0].first % 4 ==
                                  found.found[1].first % 4;
          const uint32_t nibble =
              shared ? kBoth
                     : (j == 0 ? firstAlone(slot) : secondAlone(slot));
          uint32_t &w = meta[(lane - u + pair) * 4 + word];
          const int64_t shift = 4 * u + 16 * h;
          w = (w & ~(0xFu << shift)) | nibble << shift;
        }
      });
}

LogicalResult mlir::fp4::packPatchWeightEntries(
    ArrayRef<uint16_t> values, ArrayRef<uint8_t> indices, int64_t n,
    int64_t k, int64_t blockSize, int64_t perBlock,
    std::vector<uint32_t> &packedValues, std::vector<uint32_t> &keys,
    std::string &why) {
  const int64_t rowBlocks = sparseEntryRowBlocks(n),
                chunks = sparseEntryChunks(k);
  packedValues.assign(rowBlocks * chunks * 32 * 2, 0);
  // Every key byte starts as "no entry" (pair 16, which no pair has).
  keys.assign(rowBlocks * chunks * 32, 0x10101010u);
  return forEachUnit(
      values, indices, n, k, blockSize, perBlock, /*finite=*/false, why,
      [&](int64_t row, int64_t unit, const UnitEntries &found) {
        const int64_t h = (row % 16) / 8;
        const int64_t lane = laneWord(row, unit, chunks);
        packedValues[lane * 2 + h] = valueWord(found);
        for (int64_t j = 0; j < found.count; ++j) {
          const int64_t e = found.found[j].first;
          const uint32_t key = static_cast<uint32_t>(4 * (e / 8) + e % 4) |
                               static_cast<uint32_t>((e % 8) / 4) << 5;
          const int64_t shift = 16 * h + 8 * j;
          keys[lane] = (keys[lane] & ~(0xFFu << shift)) | key << shift;
        }
      });
}

static DenseResourceElementsAttr resourceOf(MLIRContext *ctx,
                                            ArrayRef<int64_t> shape,
                                            const std::vector<uint32_t> &data,
                                            StringRef name) {
  auto type = RankedTensorType::get(shape, IntegerType::get(ctx, 32));
  AsmResourceBlob blob = HeapAsmResourceBlob::allocateAndCopyWithAlign(
      ArrayRef<char>(reinterpret_cast<const char *>(data.data()),
                     data.size() * 4),
      alignof(uint64_t));
  return DenseResourceElementsAttr::get(type, name, std::move(blob));
}

LogicalResult mlir::fp4::packConstantSparseEntries(
    Value values, Value indices, int64_t n, int64_t k, int64_t blockSize,
    DenseResourceElementsAttr &packed, DenseResourceElementsAttr &meta,
    std::string &why, bool forPatch) {
  auto valuesType = dyn_cast<RankedTensorType>(values.getType());
  auto indicesType = dyn_cast<RankedTensorType>(indices.getType());
  if (!valuesType || !indicesType || !valuesType.hasStaticShape() ||
      !valuesType.getElementType().isBF16() ||
      !indicesType.getElementType().isInteger(8) ||
      valuesType.getShape() != indicesType.getShape() ||
      valuesType.getRank() != 3) {
    why = "the entries are not bf16 values with i8 indices";
    return failure();
  }
  std::vector<char> valueStorage, indexStorage;
  ArrayRef<char> valueBytes, indexBytes;
  if (failed(readConstantBytes(values, valuesType, valueStorage, valueBytes)) ||
      failed(readConstantBytes(indices, indicesType, indexStorage,
                               indexBytes))) {
    why = "the entries are not constants";
    return failure();
  }
  std::vector<uint16_t> v(valueBytes.size() / 2);
  std::memcpy(v.data(), valueBytes.data(), v.size() * 2);
  ArrayRef<uint8_t> idx(reinterpret_cast<const uint8_t *>(indexBytes.data()),
                        indexBytes.size());
  std::vector<uint32_t> packedData, metaData;
  const int64_t perBlock = valuesType.getShape().back();
  if (failed(forPatch ? packPatchWeightEntries(v, idx, n, k, blockSize,
                                               perBlock, packedData, metaData,
                                               why)
                      : packSparseWeightEntries(v, idx, n, k, blockSize,
                                                perBlock, packedData, metaData,
                                                why)))
    return failure();
  MLIRContext *ctx = values.getContext();
  const int64_t rb = sparseEntryRowBlocks(n), ch = sparseEntryChunks(k);
  packed = resourceOf(ctx, {rb, ch, 32, 2}, packedData,
                      forPatch ? "patch_entry_values" : "sparse_entry_values");
  meta = forPatch ? resourceOf(ctx, {rb, ch, 32, 1}, metaData,
                               "patch_entry_keys")
                  : resourceOf(ctx, {rb, ch, 32, 4}, metaData,
                               "sparse_entry_meta");
  return success();
}
