//===- SparseWeightEntries.cpp - weight entries as a 2:4 operand ----------===//

#include "SparseWeightEntries.h"

#include "fp4/Dialect/FP4/IR/ConstantBytes.h"
#include "mlir/IR/AsmState.h"
#include "mlir/IR/BuiltinTypes.h"
#include "mlir/IR/DialectResourceBlobManager.h"

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

LogicalResult mlir::fp4::packSparseWeightEntries(
    ArrayRef<uint16_t> values, ArrayRef<uint8_t> indices, int64_t n,
    int64_t k, int64_t blockSize, int64_t perBlock,
    std::vector<uint32_t> &packedValues, std::vector<uint32_t> &meta,
    std::string &why) {
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
  const int64_t rowBlocks = sparseEntryRowBlocks(n),
                chunks = sparseEntryChunks(k);
  packedValues.assign(rowBlocks * chunks * 32 * 2, 0);
  meta.assign(rowBlocks * chunks * 32 * 4, 0xCCCCCCCCu);
  static_assert(kNone == 0xC, "the default nibble fills the words");
  for (int64_t row = 0; row < n; ++row) {
    const int64_t r = row / 16, g = row % 8, h = (row % 16) / 8;
    for (int64_t unit = 0; unit < k / 32 + (k % 32 != 0); ++unit) {
      // The unit's entries: (position in the unit, value bits).
      std::pair<int64_t, uint16_t> found[2];
      int64_t count = 0;
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
          if (count == 2) {
            why = "more than 2 entries in a 32-element unit";
            return failure();
          }
          if (!finiteBF16(values[at])) {
            why = "a non-finite entry (its zero-slot products would be NaN)";
            return failure();
          }
          found[count++] = {column - lo, values[at]};
        }
      if (count == 2 && found[0].first == found[1].first) {
        why = "two entries at one position";
        return failure();
      }
      if (count == 2 && found[1].first < found[0].first)
        std::swap(found[0], found[1]);
      const int64_t c = unit / 4, q = unit % 4, u = unit % 4;
      const int64_t base = (r * chunks + c) * 32;
      uint32_t v = 0;
      for (int64_t j = 0; j < count; ++j)
        v |= static_cast<uint32_t>(found[j].second) << (16 * j);
      packedValues[(base + 4 * g + q) * 2 + h] = v;
      // Each entry's group: pair p = e % 4 of code word e / 8, slot 1 (a)
      // or 2 (b); lane 4 g + p supplies its word e / 8.
      for (int64_t j = 0; j < count; ++j) {
        const int64_t e = found[j].first;
        const int64_t word = e / 8, pair = e % 4;
        const uint32_t slot = 1 + static_cast<uint32_t>((e % 8) / 4);
        const bool shared =
            count == 2 && found[0].first / 8 == found[1].first / 8 &&
            found[0].first % 4 == found[1].first % 4;
        const uint32_t nibble =
            shared ? kBoth : (j == 0 ? firstAlone(slot) : secondAlone(slot));
        uint32_t &w = meta[(base + 4 * g + pair) * 4 + word];
        const int64_t shift = 4 * u + 16 * h;
        w = (w & ~(0xFu << shift)) | nibble << shift;
      }
    }
  }
  return success();
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
    std::string &why) {
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
  if (failed(packSparseWeightEntries(v, idx, n, k, blockSize,
                                     valuesType.getShape().back(), packedData,
                                     metaData, why)))
    return failure();
  MLIRContext *ctx = values.getContext();
  const int64_t rb = sparseEntryRowBlocks(n), ch = sparseEntryChunks(k);
  packed = resourceOf(ctx, {rb, ch, 32, 2}, packedData, "sparse_entry_values");
  meta = resourceOf(ctx, {rb, ch, 32, 4}, metaData, "sparse_entry_meta");
  return success();
}
