//===- ArithOpsTest.cpp - ArithOps computes what ScalarOps computes -------===//
//
// Every numerics rule is instantiated twice: with ScalarOps (C++) and with
// ArithOps (arith/math IR). Here the IR is built on constant inputs, in
// scalar and in vector<4xf32> form, and folded by MLIR's constant folders
// (APFloat arithmetic, round to nearest even); the folded results must be
// bit for bit the ScalarOps results. This checks the backend mapping
// (predicates, shifts, selects, casts) independently of any lowering.
// MLIR does not fold vector compares, so the vector form is checked
// structurally instead: it must verify, and it must be the scalar form op
// for op with every type replaced by its vector<4x...> version (arith ops
// are elementwise, so each lane then computes exactly the scalar result).
//
//===----------------------------------------------------------------------===//

#include "fp4/Numerics/IR/ArithOps.h"
#include "fp4/Numerics/ScalarOps.h"
#include "fp4/Numerics/F16.h"
#include "fp4/Numerics/ScalarRules.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Math/IR/Math.h"
#include "mlir/IR/Builders.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/Verifier.h"
#include "mlir/Pass/PassManager.h"
#include "mlir/Transforms/Passes.h"

#include "gtest/gtest.h"

#include <cstring>
#include <functional>
#include <vector>

using namespace mlir;
using namespace mlir::fp4;
namespace nm = mlir::fp4::numerics;

namespace {

/// A rule taking one f32 and returning one i32 or f32, in both backends.
struct Rule {
  std::function<Value(const ArithOps &, Value)> ir;
  std::function<uint32_t(const nm::ScalarOps &, float)> cpp;
};

uint32_t bits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof(u));
  return u;
}
float fromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof(f));
  return f;
}

class ArithOpsTest : public ::testing::Test {
protected:
  ArithOpsTest() {
    context.loadDialect<arith::ArithDialect, func::FuncDialect,
                        math::MathDialect>();
  }

  /// Builds `func @f() -> T { return rule(constant input) }`, scalar or as
  /// vector<4xf32> when `vector` is set.
  OwningOpRef<ModuleOp> build(const Rule &rule, float input, bool vector) {
    OpBuilder b(&context);
    Location loc = b.getUnknownLoc();
    OwningOpRef<ModuleOp> module = ModuleOp::create(loc);
    b.setInsertionPointToEnd(module->getBody());
    auto func = func::FuncOp::create(b, loc, "f", b.getFunctionType({}, {}));
    b.setInsertionPointToStart(func.addEntryBlock());
    ArithOps ops = vector ? ArithOps(b, loc, {4}) : ArithOps(b, loc);
    Value x = vector ? ops.f32(input)
                     : arith::ConstantOp::create(b, loc,
                                                 b.getF32FloatAttr(input));
    Value result = rule.ir(ops, x);
    if (getElementTypeOrSelf(result.getType()).isF32())
      result = ops.bitcastToI32(result);
    func::ReturnOp::create(b, loc, result);
    func.setType(b.getFunctionType({}, {result.getType()}));
    EXPECT_TRUE(succeeded(verify(*module)));
    return module;
  }

  /// The bit pattern the scalar IR folds to.
  uint32_t foldScalar(const Rule &rule, float input) {
    OwningOpRef<ModuleOp> module = build(rule, input, /*vector=*/false);
    PassManager pm(&context);
    pm.addPass(createCanonicalizerPass());
    EXPECT_TRUE(succeeded(pm.run(*module)));
    auto func = cast<func::FuncOp>(module->getBody()->front());
    auto ret = cast<func::ReturnOp>(func.getBody().front().getTerminator());
    auto cst = ret.getOperand(0).getDefiningOp<arith::ConstantOp>();
    auto value = cst ? dyn_cast<IntegerAttr>(cst.getValue()) : IntegerAttr();
    if (!value) {
      ADD_FAILURE() << "the rule did not fold to a constant";
      return 0;
    }
    return static_cast<uint32_t>(value.getValue().getZExtValue());
  }

  /// Checks the rule on every input against ScalarOps, and the vector form
  /// against the scalar form.
  void check(const Rule &rule, ArrayRef<float> inputs) {
    nm::ScalarOps scalar;
    for (float x : inputs)
      EXPECT_EQ(foldScalar(rule, x), rule.cpp(scalar, x))
          << "input bits 0x" << std::hex << bits(x);

    OwningOpRef<ModuleOp> s = build(rule, 1.0f, /*vector=*/false);
    OwningOpRef<ModuleOp> v = build(rule, 1.0f, /*vector=*/true);
    SmallVector<Operation *> sOps, vOps;
    s->walk([&](Operation *op) { sOps.push_back(op); });
    v->walk([&](Operation *op) { vOps.push_back(op); });
    ASSERT_EQ(sOps.size(), vOps.size());
    for (auto [so, vo] : llvm::zip(sOps, vOps)) {
      ASSERT_EQ(so->getName(), vo->getName());
      for (auto [st, vt] : llvm::zip(so->getResultTypes(), vo->getResultTypes()))
        EXPECT_EQ(VectorType::get({4}, st), vt)
            << "in " << so->getName().getStringRef().str();
    }
  }

  MLIRContext context;
};

std::vector<float> interestingInputs() {
  std::vector<float> v = {0.0f,     -0.0f,     0.25f,   -0.25f,  0.75f,
                          1.25f,    -1.75f,    2.5f,    3.5f,    -5.0f,
                          5.5f,     6.0f,      7.9f,    -0.26f,  0.1f,
                          1e-40f,   -1e-45f,   448.0f,  449.0f,  1e30f,
                          3.0e38f,  0.142857f, 1.999f,  49152.0f};
  v.push_back(fromBits(0x7F800000)); // +Inf
  v.push_back(fromBits(0xFF800000)); // -Inf
  v.push_back(fromBits(0x7FC00000)); // NaN
  v.push_back(fromBits(0x7F7FFFFF)); // FLT_MAX
  return v;
}

TEST_F(ArithOpsTest, E2M1Encode) {
  for (auto mode : {nm::ElementRounding::NearestEven,
                    nm::ElementRounding::HalfAway}) {
    check({[&](const ArithOps &o, Value x) {
             return nm::e2m1Encode(o, x, mode, o.i32(0));
           },
           [&](const nm::ScalarOps &o, float x) {
             return static_cast<uint32_t>(nm::e2m1Encode(o, x, mode, 0));
           }},
          interestingInputs());
  }
}

TEST_F(ArithOpsTest, E2M1EncodeStochastic) {
  // Random bits from counterRandom of the input's bit pattern, exercising
  // the integer mixing, sitofp and the probability compare.
  auto mode = nm::ElementRounding::Stochastic;
  check({[&](const ArithOps &o, Value x) {
           Value r = nm::counterRandom(o, o.i32(7), o.bitcastToI32(x),
                                       o.i32(0));
           return nm::e2m1Encode(o, x, mode, r);
         },
         [&](const nm::ScalarOps &o, float x) {
           int32_t r = nm::counterRandom(o, 7, o.bitcastToI32(x), 0);
           return static_cast<uint32_t>(nm::e2m1Encode(o, x, mode, r));
         }},
        interestingInputs());
}

TEST_F(ArithOpsTest, MXScaleByteAndFactor) {
  for (auto rule : {nm::ScaleRounding::Floor, nm::ScaleRounding::Ceil,
                    nm::ScaleRounding::Even, nm::ScaleRounding::RCeil}) {
    check({[&](const ArithOps &o, Value x) {
             Value byte = nm::mxScaleByte(o, o.absf(x), rule);
             return nm::e8m0QuantizeFactor(o, byte);
           },
           [&](const nm::ScalarOps &o, float x) {
             int32_t byte = nm::mxScaleByte(o, o.absf(x), rule);
             return bits(nm::e8m0QuantizeFactor(o, byte));
           }},
          interestingInputs());
  }
}

TEST_F(ArithOpsTest, NVFP4BlockScaleAndDequant) {
  check({[&](const ArithOps &o, Value x) {
           Value gEnc = nm::nvfp4GlobalEncodeScale(o, o.f32(6.5f), true);
           Value k = nm::nvfp4BlockScaleFactor(o, gEnc);
           Value byte = nm::nvfp4BlockScaleByte(o, o.absf(x), k, false);
           Value gDec = nm::nvfp4GlobalDecodeScale(o, gEnc);
           Value enc = nm::nvfp4EncodeFactor(o, byte, gDec);
           Value code = nm::nvfp4ElementCode(
               o, x, enc, byte, nm::ElementRounding::NearestEven, o.i32(0));
           return nm::nvfp4Dequant(o, code, byte, gDec);
         },
         [&](const nm::ScalarOps &o, float x) {
           float gEnc = nm::nvfp4GlobalEncodeScale(o, 6.5f, true);
           float k = nm::nvfp4BlockScaleFactor(o, gEnc);
           int32_t byte = nm::nvfp4BlockScaleByte(o, o.absf(x), k, false);
           float gDec = nm::nvfp4GlobalDecodeScale(o, gEnc);
           float enc = nm::nvfp4EncodeFactor(o, byte, gDec);
           int32_t code = nm::nvfp4ElementCode(
               o, x, enc, byte, nm::ElementRounding::NearestEven, 0);
           return bits(nm::nvfp4Dequant(o, code, byte, gDec));
         }},
        interestingInputs());
}

TEST_F(ArithOpsTest, HiF4ScaleAndElement) {
  check({[&](const ArithOps &o, Value x) {
           Value byte = nm::hif4ScaleByte(o, o.absf(x));
           Value sf = nm::e6m2Decode(o, byte);
           Value rec = nm::hif4Reciprocal(o, sf);
           Value l2 = nm::hif4Level2Bit(o, o.absf(x), rec);
           Value l3 = nm::hif4Level3Bit(o, o.absf(x), rec, l2);
           Value scale = nm::hif4LevelScale(o, l2, l3);
           Value code = nm::hif4ElementCode(o, x, rec, scale);
           return nm::hif4Dequant(o, code, scale, sf);
         },
         [&](const nm::ScalarOps &o, float x) {
           int32_t byte = nm::hif4ScaleByte(o, o.absf(x));
           float sf = nm::e6m2Decode(o, byte);
           float rec = nm::hif4Reciprocal(o, sf);
           int32_t l2 = nm::hif4Level2Bit(o, o.absf(x), rec);
           int32_t l3 = nm::hif4Level3Bit(o, o.absf(x), rec, l2);
           float scale = nm::hif4LevelScale(o, l2, l3);
           int32_t code = nm::hif4ElementCode(o, x, rec, scale);
           return bits(nm::hif4Dequant(o, code, scale, sf));
         }},
        interestingInputs());
}

TEST_F(ArithOpsTest, MacroFactorAndBF16) {
  check({[&](const ArithOps &o, Value x) {
           Value m = nm::macroFactorFromAmax(o, o.absf(x));
           return nm::roundToBF16(o, o.mulf(x, m));
         },
         [&](const nm::ScalarOps &o, float x) {
           float m = nm::macroFactorFromAmax(o, o.absf(x));
           return bits(nm::roundToBF16(o, o.mulf(x, m)));
         }},
        interestingInputs());
}

TEST_F(ArithOpsTest, F16RoundTrip) {
  check({[&](const ArithOps &o, Value x) {
           Value h = nm::f16StorageBits(o, nm::roundToF16(o, x));
           return nm::f16Decode(o, h);
         },
         [&](const nm::ScalarOps &o, float x) {
           int32_t h = nm::f16StorageBits(o, nm::roundToF16(o, x));
           return bits(nm::f16Decode(o, h));
         }},
        interestingInputs());
}

TEST_F(ArithOpsTest, SquaredErrorF64) {
  // f64 path: extf, subd, muld, cmpd, selectd; result reduced to an i32.
  check({[&](const ArithOps &o, Value x) {
           Value e = nm::squaredErrorF64(o, x, o.f32(1.5f));
           Value big = o.cmpd(nm::FPred::OLT, e, o.f64(2.25));
           Value s = o.selectd(big, o.f64(1.0), e);
           return o.selecti(o.cmpd(nm::FPred::OEQ, s, o.f64(1.0)), o.i32(1),
                            o.i32(0));
         },
         [&](const nm::ScalarOps &o, float x) {
           double e = nm::squaredErrorF64(o, x, 1.5f);
           double s = o.selectd(o.cmpd(nm::FPred::OLT, e, 2.25), 1.0, e);
           return static_cast<uint32_t>(s == 1.0 ? 1 : 0);
         }},
        interestingInputs());
}

} // namespace
