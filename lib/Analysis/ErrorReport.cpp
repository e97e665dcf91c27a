//===- ErrorReport.cpp - quantization error decomposition of tensors ------===//
//
// Drives the scheme's reference quantizer and dequantizer over row chunks of
// a tensor and hands each row to numerics::decomposeRow. Chunks run in
// parallel; each keeps its own sums, reduced in chunk order afterwards, so
// the figures are the same with or without threading.
//
//===----------------------------------------------------------------------===//

#include "fp4/Analysis/ErrorReport.h"

#include "fp4/Dialect/FP4/IR/ReferenceQuantization.h"
#include "fp4/Numerics/Reference.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Threading.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MathExtras.h"

#include <atomic>
#include <cmath>
#include <cstring>

using namespace mlir;
using namespace mlir::fp4;
namespace nm = mlir::fp4::numerics;

/// Elements per chunk: a task large enough to amortize scheduling, small
/// enough that a worker's buffers stay in cache.
static constexpr int64_t kChunkElements = 1 << 16;

FailureOr<nm::ElementGrid>
mlir::fp4::getIdealGrid(QuantSchemeAttrInterface scheme) {
  Type element = scheme.getElementType();
  if (isa<Float4E2M1FNType>(element))
    return nm::ElementGrid::E2M1;
  if (isa<S1P2Type>(element))
    return nm::ElementGrid::HiF4;
  return failure();
}

FailureOr<QuantizationErrorReport> mlir::fp4::analyzeQuantizationError(
    MLIRContext *context, QuantizedTensorType type, ReferenceRowReader readRows,
    bool perBlock, std::string &error) {
  QuantSchemeAttrInterface scheme = type.getScheme();
  auto fail = [&](const Twine &reason) {
    error = reason.str();
    return failure();
  };
  if (!type.hasStaticShape())
    return fail("the quantized shape is not static");
  FailureOr<nm::ElementGrid> grid = getIdealGrid(scheme);
  if (failed(grid))
    return fail("scheme '" + scheme.getFormatName() +
                "' has no ideal grid for its element type");

  QuantizationErrorReport report;
  report.grid = *grid;
  report.blockSize = scheme.getBlockSize();
  ArrayRef<int64_t> shape = type.getShape();
  int64_t axis = type.getAxis();
  report.cols = shape[axis];
  report.rows = report.cols == 0 ? 0 : type.getNumElements() / report.cols;
  int64_t inner = 1;
  for (int64_t d = axis + 1, e = shape.size(); d < e; ++d)
    inner *= shape[d];
  int64_t cols = report.cols, rows = report.rows, block = report.blockSize;
  if (block <= 0 || block % 2 != 0 || cols % block != 0)
    return fail("the blocked axis (" + Twine(cols) +
                ") is not a multiple of the block size " + Twine(block));
  int64_t multiple = scheme.getReferenceRowMultiple();
  if (rows % multiple != 0)
    return fail(Twine(rows) + " rows are not a multiple of " + Twine(multiple) +
                ", which the scheme's quantizer needs");
  int64_t blocksPerRow = cols / block;
  if (perBlock)
    report.perBlock.resize(rows * blocksPerRow);
  if (rows == 0)
    return report;

  int64_t chunkRows = std::max<int64_t>(1, kChunkElements / cols);
  chunkRows = llvm::divideCeil(chunkRows, multiple) * multiple;
  int64_t numChunks = llvm::divideCeil(rows, chunkRows);
  auto chunk = [&](int64_t c) {
    ReferenceRows r;
    r.firstRow = c * chunkRows;
    r.numRows = std::min(chunkRows, rows - r.firstRow);
    r.cols = cols;
    r.logicalInner = inner;
    return r;
  };

  // Per-tensor inputs first: the tensor amax (NVFP4's tensor scale).
  float tensorAmax = 0.0f;
  if (scheme.referenceNeedsTensorAmax()) {
    std::vector<float> partial(numChunks, 0.0f);
    parallelFor(context, 0, numChunks, [&](size_t c) {
      ReferenceRows r = chunk(c);
      std::vector<float> values(r.numRows * r.cols);
      readRows(r.firstRow, r.numRows, values);
      partial[c] = nm::nvfp4TensorAmax(values.data(), values.size());
    });
    for (float a : partial)
      tensorAmax = std::max(tensorAmax, a);
  }

  // Which components are per tensor (rank 0): only the chunk with
  // firstRow == 0 writes them, the others copy them before dequantizing.
  SmallVector<Type> componentTypes;
  scheme.getComponentTypes({rows, cols}, 1, componentTypes);
  SmallVector<bool> perTensor;
  for (Type t : componentTypes)
    perTensor.push_back(cast<ShapedType>(t).getRank() == 0);
  SmallVector<std::vector<char>> tensorComponents(componentTypes.size());

  std::vector<nm::ErrorStats> chunkStats(numChunks);
  std::atomic<bool> ok(true);
  auto runChunk = [&](size_t c) {
    ReferenceRows r = chunk(c);
    std::vector<float> values(r.numRows * cols), dequantized(r.numRows * cols);
    readRows(r.firstRow, r.numRows, values);
    SmallVector<int64_t> bytes = getReferenceComponentBytes(scheme, r);
    SmallVector<std::vector<char>> storage;
    for (int64_t b : bytes)
      storage.emplace_back(b);
    SmallVector<MutableArrayRef<char>> out;
    for (std::vector<char> &s : storage)
      out.emplace_back(s);
    if (failed(scheme.quantizeReference(r, values, tensorAmax, out))) {
      ok = false;
      return;
    }
    for (size_t i = 0; i < storage.size(); ++i) {
      if (!perTensor[i])
        continue;
      if (c == 0)
        tensorComponents[i] = storage[i];
      else
        storage[i] = tensorComponents[i];
    }
    SmallVector<ArrayRef<char>> in;
    for (std::vector<char> &s : storage)
      in.emplace_back(s);
    if (failed(scheme.dequantizeReference(r, in, dequantized))) {
      ok = false;
      return;
    }
    // Component 0 is the packed codes in every scheme (the interface's
    // contract): row r's codes are its cols / 2 bytes.
    const auto *codes = reinterpret_cast<const uint8_t *>(storage[0].data());
    for (int64_t row = 0; row < r.numRows; ++row)
      nm::decomposeRow(report.grid, block, values.data() + row * cols,
                       dequantized.data() + row * cols, cols,
                       codes + row * (cols / 2), chunkStats[c],
                       perBlock ? report.perBlock.data() +
                                      (r.firstRow + row) * blocksPerRow
                                : nullptr);
  };
  // Chunk 0 first: it produces the per-tensor components the others reuse.
  runChunk(0);
  if (ok && numChunks > 1)
    parallelFor(context, 1, numChunks, runChunk);
  if (!ok)
    return fail("the reference quantizer of '" + scheme.getFormatName() +
                "' rejected the tensor");
  for (const nm::ErrorStats &s : chunkStats)
    report.stats.add(s);
  return report;
}

//===----------------------------------------------------------------------===//
// JSON
//===----------------------------------------------------------------------===//

/// A JSON number, or null for NaN / infinity (JSON has neither).
static llvm::json::Value number(double x) {
  if (!std::isfinite(x))
    return nullptr;
  return x;
}

void mlir::fp4::writeErrorReportJSON(llvm::json::OStream &json,
                                     const QuantizationErrorReport &report,
                                     bool perBlock) {
  const nm::ErrorStats &s = report.stats;
  double norm2 = s.energies.norm2;
  auto rel = [&](double x) { return number(relativeTo(x, norm2)); };
  json.attribute("grid",
                 report.grid == nm::ElementGrid::E2M1 ? "e2m1" : "hif4");
  json.attribute("block_size", report.blockSize);
  json.attribute("elements", s.elements);
  json.attribute("blocks", s.blocks);
  json.attribute("non_finite_blocks", s.nonFiniteBlocks);
  json.attribute("norm2", number(norm2));
  json.attributeObject("relative", [&] {
    json.attribute("total", rel(s.energies.total));
    json.attribute("scale", rel(s.energies.scale()));
    json.attribute("dead", rel(s.energies.dead));
    json.attribute("grid", rel(s.energies.grid));
  });
  json.attributeObject("vector_terms", [&] {
    json.attribute("scale_bias", rel(s.terms.scaleBias));
    json.attribute("deadzone", rel(s.terms.deadzone));
    json.attribute("grid_noise", rel(s.terms.gridNoise));
    json.attribute("cross_scale_bias_deadzone",
                   rel(s.terms.crossScaleBiasDeadzone));
    json.attribute("cross_scale_bias_grid_noise",
                   rel(s.terms.crossScaleBiasGridNoise));
    json.attribute("cross_deadzone_grid_noise",
                   rel(s.terms.crossDeadzoneGridNoise));
    json.attribute("max_abs_residual", number(s.terms.maxAbsResidual));
  });
  double elements = s.elements > 0 ? static_cast<double>(s.elements) : 1.0;
  json.attributeObject("fractions", [&] {
    json.attribute("clipped", s.clipped / elements);
    json.attribute("zeroed", s.zeroed / elements);
  });
  if (!perBlock)
    return;
  // Block energies relative to the block's own ||x||² (0 for an all-zero
  // block, null for a non-finite one), plus that norm.
  json.attributeObject("per_block", [&] {
    json.attribute("blocks_per_row",
                   report.blockSize ? report.cols / report.blockSize : 0);
    auto array = [&](StringRef name, auto get) {
      json.attributeArray(name, [&] {
        for (const nm::ErrorEnergies &e : report.perBlock)
          json.value(std::isnan(e.norm2) ? llvm::json::Value(nullptr) : get(e));
      });
    };
    array("norm2", [](const nm::ErrorEnergies &e) { return number(e.norm2); });
    array("total", [](const nm::ErrorEnergies &e) {
      return number(relativeTo(e.total, e.norm2));
    });
    array("scale", [](const nm::ErrorEnergies &e) {
      return number(relativeTo(e.scale(), e.norm2));
    });
    array("dead", [](const nm::ErrorEnergies &e) {
      return number(relativeTo(e.dead, e.norm2));
    });
    array("grid", [](const nm::ErrorEnergies &e) {
      return number(relativeTo(e.grid, e.norm2));
    });
  });
}
