//===- CalibrationDataTest.cpp - .npz reading and calibration keys --------===//
//
// The archives here are built byte by byte the way np.savez writes them
// (stored members with ZIP64 local headers, version-1 .npy headers), so the
// reader is checked without Python; test/python checks real np.savez files.
//
//===----------------------------------------------------------------------===//

#include "fp4/Analysis/CalibrationData.h"
#include "fp4/Dialect/FP4/IR/FP4Dialect.h"
#include "fp4/Dialect/FP4/IR/FP4Ops.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/Dialect/Tensor/IR/Tensor.h"
#include "mlir/IR/BuiltinOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/Parser/Parser.h"
#include "llvm/Support/CRC.h"

#include "gtest/gtest.h"

#include <cstring>
#include <string>
#include <vector>

using namespace mlir;
using namespace mlir::fp4;

namespace {

void putLE(std::string &out, uint64_t value, unsigned width) {
  for (unsigned i = 0; i < width; ++i)
    out.push_back(static_cast<char>((value >> (8 * i)) & 0xFF));
}

/// A version-1 .npy file: header padded so the data starts at a multiple of
/// 64, as NumPy writes it.
std::string npy(const std::string &descr, const std::string &shape,
                bool fortran, const std::vector<float> &values) {
  std::string dict = "{'descr': '" + descr +
                     "', 'fortran_order': " + (fortran ? "True" : "False") +
                     ", 'shape': " + shape + ", }";
  size_t total = 10 + dict.size() + 1;
  dict.append((64 - total % 64) % 64, ' ');
  dict.push_back('\n');
  std::string out = "\x93NUMPY";
  out.push_back(1);
  out.push_back(0);
  putLE(out, dict.size(), 2);
  out += dict;
  std::string data(values.size() * 4, '\0');
  std::memcpy(data.data(), values.data(), data.size());
  return out + data;
}

struct Member {
  std::string name;
  std::string data;
  unsigned method = 0;
};

/// A zip archive as Python's zipfile writes np.savez members: ZIP64 extra
/// field in every local header, plain 32-bit sizes in the central directory.
std::string zip(const std::vector<Member> &members, bool corruptCrc = false) {
  std::string out, central;
  for (const Member &m : members) {
    uint32_t crc = llvm::crc32(llvm::arrayRefFromStringRef(m.data));
    if (corruptCrc)
      crc ^= 1;
    uint64_t offset = out.size();
    putLE(out, 0x04034b50, 4);
    putLE(out, 45, 2);
    putLE(out, 0, 2);
    putLE(out, m.method, 2);
    putLE(out, 0, 4); // time, date
    putLE(out, crc, 4);
    putLE(out, 0xFFFFFFFF, 4);
    putLE(out, 0xFFFFFFFF, 4);
    putLE(out, m.name.size(), 2);
    putLE(out, 20, 2);
    out += m.name;
    putLE(out, 1, 2);
    putLE(out, 16, 2);
    putLE(out, m.data.size(), 8);
    putLE(out, m.data.size(), 8);
    out += m.data;

    putLE(central, 0x02014b50, 4);
    putLE(central, 45, 2);
    putLE(central, 45, 2);
    putLE(central, 0, 2);
    putLE(central, m.method, 2);
    putLE(central, 0, 4);
    putLE(central, crc, 4);
    putLE(central, m.data.size(), 4);
    putLE(central, m.data.size(), 4);
    putLE(central, m.name.size(), 2);
    putLE(central, 0, 2);
    putLE(central, 0, 2);
    putLE(central, 0, 2);
    putLE(central, 0, 2);
    putLE(central, 0, 4);
    putLE(central, offset, 4);
    central += m.name;
  }
  uint64_t cdOffset = out.size();
  out += central;
  putLE(out, 0x06054b50, 4);
  putLE(out, 0, 4);
  putLE(out, members.size(), 2);
  putLE(out, members.size(), 2);
  putLE(out, central.size(), 4);
  putLE(out, cdOffset, 4);
  putLE(out, 0, 2);
  return out;
}

std::string parseError(const std::string &bytes) {
  std::string error;
  FailureOr<CalibrationData> data =
      CalibrationData::parse(bytes, "t.npz", error);
  EXPECT_TRUE(failed(data));
  return error;
}

TEST(CalibrationData, ReadsMembers) {
  std::string bytes =
      zip({{"@main/arg0.npy", npy("<f4", "(2, 3)", false, {1, 2, 3, 4, 5, 6})},
           {"x.npy", npy("<f4", "(4,)", false, {-1, 0.5f, 7, 8})}});
  std::string error;
  FailureOr<CalibrationData> data =
      CalibrationData::parse(bytes, "t.npz", error);
  ASSERT_TRUE(succeeded(data)) << error;
  EXPECT_EQ(data->size(), 2u);
  EXPECT_EQ(data->keys(), (std::vector<std::string>{"@main/arg0", "x"}));
  std::optional<CalibrationView> a = data->lookup("@main/arg0");
  ASSERT_TRUE(a);
  EXPECT_EQ(a->rows(), 2);
  EXPECT_EQ(a->channels(), 3);
  EXPECT_EQ(a->row(1)[2], 6.0f);
  std::optional<CalibrationView> x = data->lookup("x");
  ASSERT_TRUE(x);
  EXPECT_EQ(x->rows(), 1);
  EXPECT_EQ(x->data[0], -1.0f);
  EXPECT_FALSE(data->lookup("y"));
}

/// Bytes of a file NumPy 2.4 wrote:
///   np.savez(f, **{"@main/arg0": a, "wt": np.asfortranarray(a)})
/// with a = np.arange(6, dtype=np.float32).reshape(2, 3).
const char kNumpyArchive[] =
    "\x50\x4b\x03\x04\x2d\x00\x00\x00\x00\x00\x00\x00\x21\x00\x4f\xe9\x00\x2a"
    "\xff\xff\xff\xff\xff\xff\xff\xff\x0e\x00\x14\x00\x40\x6d\x61\x69\x6e\x2f"
    "\x61\x72\x67\x30\x2e\x6e\x70\x79\x01\x00\x10\x00\x98\x00\x00\x00\x00\x00"
    "\x00\x00\x98\x00\x00\x00\x00\x00\x00\x00\x93\x4e\x55\x4d\x50\x59\x01\x00"
    "\x76\x00\x7b\x27\x64\x65\x73\x63\x72\x27\x3a\x20\x27\x3c\x66\x34\x27\x2c"
    "\x20\x27\x66\x6f\x72\x74\x72\x61\x6e\x5f\x6f\x72\x64\x65\x72\x27\x3a\x20"
    "\x46\x61\x6c\x73\x65\x2c\x20\x27\x73\x68\x61\x70\x65\x27\x3a\x20\x28\x32"
    "\x2c\x20\x33\x29\x2c\x20\x7d\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20"
    "\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20"
    "\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20"
    "\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x0a\x00\x00\x00\x00\x00\x00"
    "\x80\x3f\x00\x00\x00\x40\x00\x00\x40\x40\x00\x00\x80\x40\x00\x00\xa0\x40"
    "\x50\x4b\x03\x04\x2d\x00\x00\x00\x00\x00\x00\x00\x21\x00\xce\x2c\xe0\xd3"
    "\xff\xff\xff\xff\xff\xff\xff\xff\x06\x00\x14\x00\x77\x74\x2e\x6e\x70\x79"
    "\x01\x00\x10\x00\x98\x00\x00\x00\x00\x00\x00\x00\x98\x00\x00\x00\x00\x00"
    "\x00\x00\x93\x4e\x55\x4d\x50\x59\x01\x00\x76\x00\x7b\x27\x64\x65\x73\x63"
    "\x72\x27\x3a\x20\x27\x3c\x66\x34\x27\x2c\x20\x27\x66\x6f\x72\x74\x72\x61"
    "\x6e\x5f\x6f\x72\x64\x65\x72\x27\x3a\x20\x54\x72\x75\x65\x2c\x20\x27\x73"
    "\x68\x61\x70\x65\x27\x3a\x20\x28\x32\x2c\x20\x33\x29\x2c\x20\x7d\x20\x20"
    "\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20"
    "\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20"
    "\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20\x20"
    "\x20\x20\x20\x0a\x00\x00\x00\x00\x00\x00\x40\x40\x00\x00\x80\x3f\x00\x00"
    "\x80\x40\x00\x00\x00\x40\x00\x00\xa0\x40\x50\x4b\x01\x02\x2d\x03\x2d\x00"
    "\x00\x00\x00\x00\x00\x00\x21\x00\x4f\xe9\x00\x2a\x98\x00\x00\x00\x98\x00"
    "\x00\x00\x0e\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x80\x01\x00\x00"
    "\x00\x00\x40\x6d\x61\x69\x6e\x2f\x61\x72\x67\x30\x2e\x6e\x70\x79\x50\x4b"
    "\x01\x02\x2d\x03\x2d\x00\x00\x00\x00\x00\x00\x00\x21\x00\xce\x2c\xe0\xd3"
    "\x98\x00\x00\x00\x98\x00\x00\x00\x06\x00\x00\x00\x00\x00\x00\x00\x00\x00"
    "\x00\x00\x80\x01\xd8\x00\x00\x00\x77\x74\x2e\x6e\x70\x79\x50\x4b\x05\x06"
    "\x00\x00\x00\x00\x02\x00\x02\x00\x70\x00\x00\x00\xa8\x01\x00\x00\x00\x00";

TEST(CalibrationData, ReadsNumpySavez) {
  std::string bytes(kNumpyArchive, sizeof(kNumpyArchive) - 1);
  std::string error;
  FailureOr<CalibrationData> data =
      CalibrationData::parse(bytes, "np.npz", error);
  ASSERT_TRUE(succeeded(data)) << error;
  EXPECT_EQ(data->keys(), (std::vector<std::string>{"@main/arg0", "wt"}));
  for (StringRef key : {"@main/arg0", "wt"}) {
    std::optional<CalibrationView> view = data->lookup(key);
    ASSERT_TRUE(view);
    EXPECT_EQ(std::vector<int64_t>(view->shape.begin(), view->shape.end()),
              (std::vector<int64_t>{2, 3}));
    EXPECT_EQ(std::vector<float>(view->data.begin(), view->data.end()),
              (std::vector<float>{0, 1, 2, 3, 4, 5}));
  }
}

TEST(CalibrationData, LeadingDimsFlattenAndFortranOrderTransposes) {
  // Shape (2, 3) stored column-major: C order is 1 2 3 / 4 5 6.
  std::string bytes = zip(
      {{"f.npy", npy("<f4", "(2, 3)", true, {1, 4, 2, 5, 3, 6})},
       {"r.npy", npy("<f4", "(2, 2, 2)", false, {1, 2, 3, 4, 5, 6, 7, 8})}});
  std::string error;
  FailureOr<CalibrationData> data =
      CalibrationData::parse(bytes, "t.npz", error);
  ASSERT_TRUE(succeeded(data)) << error;
  std::optional<CalibrationView> f = data->lookup("f");
  ASSERT_TRUE(f);
  EXPECT_EQ(std::vector<float>(f->data.begin(), f->data.end()),
            (std::vector<float>{1, 2, 3, 4, 5, 6}));
  std::optional<CalibrationView> r = data->lookup("r");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->rows(), 4);
  EXPECT_EQ(r->channels(), 2);
}

TEST(CalibrationData, Errors) {
  EXPECT_NE(parseError("hello").find("not a NumPy .npz archive"),
            std::string::npos);
  std::string good = npy("<f4", "(2,)", false, {1, 2});
  EXPECT_NE(parseError(zip({{"a.npy", good, 8}})).find("np.savez_compressed"),
            std::string::npos);
  EXPECT_NE(parseError(zip({{"a.npy", good}}, /*corruptCrc=*/true))
                .find("CRC mismatch"),
            std::string::npos);
  EXPECT_NE(parseError(zip({{"a.txt", good}})).find("not a .npy array"),
            std::string::npos);
  std::string f8 = npy("<f8", "(1,)", false, {1, 2});
  EXPECT_NE(parseError(zip({{"a.npy", f8}})).find("dtype '<f8'"),
            std::string::npos);
  std::string scalar = npy("<f4", "()", false, {1});
  EXPECT_NE(parseError(zip({{"a.npy", scalar}})).find("rank 0"),
            std::string::npos);
  std::string shortData = npy("<f4", "(3,)", false, {1, 2});
  EXPECT_NE(parseError(zip({{"a.npy", shortData}})).find("expected 12"),
            std::string::npos);

  std::string error;
  EXPECT_TRUE(failed(CalibrationData::load("/nonexistent/c.npz", error)));
  EXPECT_NE(error.find("cannot open calibration file '/nonexistent/c.npz'"),
            std::string::npos);
}

TEST(CalibrationData, Keys) {
  MLIRContext context;
  context.loadDialect<FP4Dialect, func::FuncDialect, arith::ArithDialect,
                      linalg::LinalgDialect, tensor::TensorDialect>();
  const char *source = R"mlir(
    func.func @f(%a: tensor<4x32xbf16>, %b: tensor<32x4xf32>,
                 %c: tensor<4x32xf32>) {
      %0 = arith.extf %a : tensor<4x32xbf16> to tensor<4x32xf32>
      %q0 = fp4.quantize %0 : tensor<4x32xf32>
          -> !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
      %e = tensor.empty() : tensor<4x32xf32>
      %t = linalg.transpose ins(%b : tensor<32x4xf32>)
          outs(%e : tensor<4x32xf32>) permutation = [1, 0]
      %q1 = fp4.quantize %t : tensor<4x32xf32>
          -> !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
      %q2 = fp4.quantize %c {fp4.calibration = "custom"} : tensor<4x32xf32>
          -> !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
      %n = arith.addf %c, %c : tensor<4x32xf32> loc(fused["act"("x.py":1:1)])
      %q3 = fp4.quantize %n : tensor<4x32xf32>
          -> !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
      %m = arith.mulf %c, %c : tensor<4x32xf32>
      %q4 = fp4.quantize %m : tensor<4x32xf32>
          -> !fp4.tensor<4x32xf4E2M1FN, #fp4.mxfp4, axis = 1>
      return
    }
  )mlir";
  OwningOpRef<ModuleOp> module = parseSourceString<ModuleOp>(source, &context);
  ASSERT_TRUE(module);
  std::vector<std::string> keys;
  module->walk(
      [&](QuantizeOp op) { keys.push_back(CalibrationData::keyFor(op)); });
  EXPECT_EQ(keys, (std::vector<std::string>{"@f/arg0", "@f/arg1", "custom",
                                            "act", ""}));
}

} // namespace
