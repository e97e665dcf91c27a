//===- ErrorReportPass.cpp - the fp4-error-report pass --------------------===//
//
// An analysis pass: finds the values of every fp4.quantize input it can know
// at compile time (constants, or calibration samples), runs
// analyzeQuantizationError on them and reports the figures as remarks and
// JSON. It never modifies the IR.
//
//===----------------------------------------------------------------------===//

#include "fp4/Analysis/CalibrationData.h"
#include "fp4/Analysis/ErrorReport.h"
#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "fp4/Dialect/FP4/Transforms/Passes.h"
#include "fp4/Dialect/FP4/Transforms/Transforms.h"
#include "mlir/Support/FileUtilities.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/ToolOutputFile.h"

#include <cstring>

namespace mlir::fp4 {
#define GEN_PASS_DEF_FP4ERRORREPORT
#include "fp4/Dialect/FP4/Transforms/Passes.h.inc"
} // namespace mlir::fp4

using namespace mlir;
using namespace mlir::fp4;

/// `loc` as MLIR prints it (for the JSON report).
static std::string locationString(Location loc) {
  std::string text;
  llvm::raw_string_ostream os(text);
  loc.print(os);
  return text;
}

static std::string attrString(Attribute attr) {
  std::string text;
  llvm::raw_string_ostream os(text);
  attr.print(os);
  return text;
}

namespace {
struct FP4ErrorReportPass final
    : mlir::fp4::impl::FP4ErrorReportBase<FP4ErrorReportPass> {
  using Base::Base;

  void runOnOperation() override {
    Operation *root = getOperation();
    markAllAnalysesPreserved();

    std::optional<CalibrationData> calibrationData;
    if (!calibration.empty()) {
      std::string error;
      FailureOr<CalibrationData> loaded =
          CalibrationData::load(calibration, error);
      if (failed(loaded)) {
        root->emitError("fp4-error-report: ") << error;
        return signalPassFailure();
      }
      calibrationData = std::move(*loaded);
    }
    // Opened before any work, so that a bad path fails fast.
    std::unique_ptr<llvm::ToolOutputFile> file;
    if (!output.empty()) {
      std::string error;
      file = openOutputFile(output, &error);
      if (!file) {
        root->emitError("fp4-error-report: cannot open output file '")
            << output << "': " << error;
        return signalPassFailure();
      }
    }

    SmallVector<QuantizeOp> ops;
    root->walk([&](QuantizeOp op) { ops.push_back(op); });

    std::optional<llvm::json::OStream> json;
    if (file) {
      json.emplace(file->os(), /*IndentSize=*/2);
      json->objectBegin();
      json->attribute("version", 1);
      json->attributeBegin("ops");
      json->arrayBegin();
    }
    bool failedAny = false;
    for (QuantizeOp op : ops)
      if (failed(analyze(op, calibrationData, json)))
        failedAny = true;
    if (json) {
      json->arrayEnd();
      json->attributeEnd();
      json->objectEnd();
      file->os() << "\n";
      if (!failedAny)
        file->keep();
    }
    if (failedAny)
      signalPassFailure();
  }

private:
  LogicalResult analyze(QuantizeOp op,
                        const std::optional<CalibrationData> &calibrationData,
                        std::optional<llvm::json::OStream> &json) {
    QuantizedTensorType type = op.getResult().getType();
    std::string key = CalibrationData::keyFor(op);
    StringRef source;
    QuantizedTensorType analyzedType;
    ReferenceRowReader reader;
    // Keeps the readers alive for the analysis.
    ConstantRowReader constantReader;
    std::function<void(int64_t, int64_t, MutableArrayRef<float>)>
        calibrationReader;

    std::string constantReason;
    FailureOr<ConstantRowReader> constant =
        getConstantQuantizeInputReader(op, &constantReason);
    if (succeeded(constant)) {
      source = "constant";
      analyzedType = type;
      constantReader = std::move(*constant);
      reader = constantReader;
    } else if (calibrationData && calibrationData->lookup(op)) {
      FailureOr<CalibrationView> view = calibrationData->lookupOrEmitError(op);
      if (failed(view))
        return failure();
      source = "calibration";
      auto emitError = [&] {
        return op.emitError("calibration data '")
               << key << "' (" << view->rows() << " x " << view->channels()
               << ") cannot be quantized with the op's scheme: ";
      };
      analyzedType = QuantizedTensorType::getChecked(
          emitError, op.getContext(), {view->rows(), view->channels()},
          type.getElementType(), type.getScheme(), 1);
      if (!analyzedType)
        return failure();
      CalibrationView samples = *view;
      calibrationReader = [samples](int64_t firstRow, int64_t numRows,
                                    MutableArrayRef<float> values) {
        std::memcpy(values.data(),
                    samples.data.data() + firstRow * samples.channels(),
                    numRows * samples.channels() * sizeof(float));
      };
      reader = calibrationReader;
    } else {
      InFlightDiagnostic remark = op.emitRemark("not analyzed: ");
      remark << constantReason << ", and ";
      if (!calibrationData)
        remark << "no calibration file was given";
      else if (key.empty())
        remark << "the input has no calibration key";
      else
        remark << "'" << calibration << "' has no data for key '" << key << "'";
      return success();
    }

    std::string error;
    FailureOr<QuantizationErrorReport> report = analyzeQuantizationError(
        op.getContext(), analyzedType, reader, perBlock, error);
    if (failed(report))
      return op.emitError("fp4-error-report: ") << error;

    const numerics::ErrorStats &s = report->stats;
    double norm2 = s.energies.norm2;
    double elements = s.elements > 0 ? static_cast<double>(s.elements) : 1.0;
    std::string totals;
    llvm::raw_string_ostream(totals) << llvm::format(
        "E_total %.3e = E_scale %.3e + E_dead %.3e + E_grid %.3e of "
        "||x||^2; clipped %.2f%%, zeroed %.2f%%",
        relativeTo(s.energies.total, norm2),
        relativeTo(s.energies.scale(), norm2),
        relativeTo(s.energies.dead, norm2), relativeTo(s.energies.grid, norm2),
        100.0 * s.clipped / elements, 100.0 * s.zeroed / elements);
    InFlightDiagnostic remark = op.emitRemark(totals);
    remark << " (" << source << ", key '" << key << "')";
    if (s.nonFiniteBlocks)
      remark << "; " << s.nonFiniteBlocks << " non-finite blocks skipped";

    if (json) {
      json->object([&] {
        json->attribute("location", locationString(op.getLoc()));
        json->attribute("key", key);
        json->attribute("source", source);
        json->attribute("scheme", attrString(type.getScheme()));
        json->attribute("format", type.getScheme().getFormatName());
        json->attributeArray("shape", [&] {
          for (int64_t d : analyzedType.getShape())
            json->value(d);
        });
        json->attribute("axis", analyzedType.getAxis());
        writeErrorReportJSON(*json, *report, perBlock);
      });
    }
    return success();
  }
};
} // namespace
