//===- CalibrationData.cpp - .npz calibration archives --------------------===//
//
// A minimal reader for what `np.savez` writes: a zip archive of stored
// (uncompressed) `.npy` members, ZIP64 records included (NumPy always writes
// its members with ZIP64 local headers). Anything else is rejected with a
// message saying what was found and how to write the file instead; nothing
// is decompressed, so no zlib dependency.
//
//===----------------------------------------------------------------------===//

#include "fp4/Analysis/CalibrationData.h"

#include "fp4/Dialect/FP4/IR/FP4Ops.h"
#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Linalg/IR/Linalg.h"
#include "mlir/IR/Diagnostics.h"
#include "mlir/IR/Location.h"
#include "mlir/IR/SymbolTable.h"
#include "mlir/Interfaces/FunctionInterfaces.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/Support/CRC.h"
#include "llvm/Support/MemoryBuffer.h"

#include <cstring>

using namespace mlir;
using namespace mlir::fp4;

namespace {
struct Array {
  std::vector<int64_t> shape;
  std::vector<float> data;
};
} // namespace

struct CalibrationData::Storage {
  std::string source;
  llvm::StringMap<Array> arrays;
};

//===----------------------------------------------------------------------===//
// Byte reading
//===----------------------------------------------------------------------===//

namespace {
/// Bounds-checked little-endian reads from the archive bytes.
class Bytes {
public:
  explicit Bytes(StringRef bytes) : bytes(bytes) {}
  size_t size() const { return bytes.size(); }
  bool has(uint64_t offset, uint64_t length) const {
    return offset <= bytes.size() && length <= bytes.size() - offset;
  }
  uint64_t le(uint64_t offset, unsigned width) const {
    uint64_t v = 0;
    for (unsigned i = 0; i < width; ++i)
      v |= uint64_t(static_cast<uint8_t>(bytes[offset + i])) << (8 * i);
    return v;
  }
  StringRef slice(uint64_t offset, uint64_t length) const {
    return bytes.substr(offset, length);
  }

private:
  StringRef bytes;
};
} // namespace

static constexpr uint32_t kLocalHeaderSig = 0x04034b50;
static constexpr uint32_t kCentralHeaderSig = 0x02014b50;
static constexpr uint32_t kEndSig = 0x06054b50;
static constexpr uint32_t kZip64EndSig = 0x06064b50;
static constexpr uint32_t kZip64LocatorSig = 0x07064b50;

//===----------------------------------------------------------------------===//
// .npy members
//===----------------------------------------------------------------------===//

/// The value of `'key': <value>` in the .npy header dictionary, up to the
/// next top-level comma or closing brace (a shape tuple is kept whole).
static std::optional<StringRef> headerField(StringRef header, StringRef key) {
  for (char quote : {'\'', '"'}) {
    std::string quoted = (Twine(quote) + key + Twine(quote)).str();
    size_t at = header.find(quoted);
    if (at == StringRef::npos)
      continue;
    StringRef rest = header.drop_front(at + quoted.size()).ltrim();
    if (!rest.consume_front(":"))
      return std::nullopt;
    rest = rest.ltrim();
    size_t end = 0;
    int depth = 0;
    for (; end < rest.size(); ++end) {
      char c = rest[end];
      if (c == '(')
        ++depth;
      else if (c == ')')
        --depth;
      else if ((c == ',' || c == '}') && depth == 0)
        break;
    }
    return rest.take_front(end).trim();
  }
  return std::nullopt;
}

/// Parses one `.npy` file into `array`; `what` names it in messages.
static LogicalResult parseNpy(StringRef npy, Array &array, const Twine &what,
                              std::string &error) {
  auto fail = [&](const Twine &reason) {
    error = (what + ": " + reason).str();
    return failure();
  };
  if (!npy.starts_with("\x93NUMPY") || npy.size() < 10)
    return fail("not a .npy array (bad magic)");
  unsigned major = static_cast<uint8_t>(npy[6]);
  uint64_t headerLen, headerStart;
  if (major == 1) {
    headerLen = uint8_t(npy[8]) | uint64_t(uint8_t(npy[9])) << 8;
    headerStart = 10;
  } else if (major == 2 || major == 3) {
    if (npy.size() < 12)
      return fail("truncated .npy header");
    headerLen = uint8_t(npy[8]) | uint64_t(uint8_t(npy[9])) << 8 |
                uint64_t(uint8_t(npy[10])) << 16 |
                uint64_t(uint8_t(npy[11])) << 24;
    headerStart = 12;
  } else {
    return fail("unsupported .npy format version " + Twine(major));
  }
  if (headerLen > npy.size() - headerStart)
    return fail("truncated .npy header");
  StringRef header = npy.substr(headerStart, headerLen);

  std::optional<StringRef> descr = headerField(header, "descr");
  std::optional<StringRef> fortran = headerField(header, "fortran_order");
  std::optional<StringRef> shapeText = headerField(header, "shape");
  if (!descr || !fortran || !shapeText)
    return fail("malformed .npy header '" + header.trim() + "'");
  StringRef dtype = descr->trim("'\"");
  if (dtype != "<f4")
    return fail("dtype '" + dtype +
                "' is not little-endian float32 ('<f4'); save "
                "x.astype(np.float32)");
  bool fortranOrder;
  if (*fortran == "True")
    fortranOrder = true;
  else if (*fortran == "False")
    fortranOrder = false;
  else
    return fail("malformed fortran_order '" + *fortran + "'");

  StringRef dims = *shapeText;
  if (!dims.consume_front("(") || !dims.consume_back(")"))
    return fail("malformed shape '" + *shapeText + "'");
  array.shape.clear();
  SmallVector<StringRef> parts;
  dims.split(parts, ',', /*MaxSplit=*/-1, /*KeepEmpty=*/false);
  int64_t numElements = 1;
  for (StringRef part : parts) {
    part = part.trim();
    if (part.empty())
      continue;
    int64_t dim;
    if (part.getAsInteger(10, dim) || dim < 0)
      return fail("malformed shape '" + *shapeText + "'");
    array.shape.push_back(dim);
    if (dim != 0 && numElements > (int64_t(1) << 40) / dim)
      return fail("array too large");
    numElements *= dim;
  }
  if (array.shape.empty())
    return fail("is a scalar (rank 0); calibration arrays need a channel "
                "axis (the last one)");

  StringRef payload = npy.drop_front(headerStart + headerLen);
  if (payload.size() != static_cast<uint64_t>(numElements) * 4)
    return fail("holds " + Twine(payload.size()) + " data bytes, expected " +
                Twine(numElements * 4) + " for shape " + *shapeText);
  array.data.resize(numElements);
  if (!fortranOrder || array.shape.size() == 1) {
    std::memcpy(array.data.data(), payload.data(), payload.size());
  } else {
    // Column-major storage (np.save of a transposed view): walk the C-order
    // index and read the element at its column-major offset.
    size_t rank = array.shape.size();
    SmallVector<int64_t> fStrides(rank, 1), index(rank, 0);
    for (size_t d = 1; d < rank; ++d)
      fStrides[d] = fStrides[d - 1] * array.shape[d - 1];
    for (int64_t i = 0; i < numElements; ++i) {
      int64_t offset = 0;
      for (size_t d = 0; d < rank; ++d)
        offset += index[d] * fStrides[d];
      std::memcpy(&array.data[i], payload.data() + offset * 4, 4);
      for (size_t d = rank; d-- > 0;) {
        if (++index[d] < array.shape[d])
          break;
        index[d] = 0;
      }
    }
  }
  return success();
}

//===----------------------------------------------------------------------===//
// The zip container
//===----------------------------------------------------------------------===//

FailureOr<CalibrationData>
CalibrationData::parse(StringRef bytesRef, StringRef name, std::string &error) {
  auto fail = [&](const Twine &reason) -> FailureOr<CalibrationData> {
    error = ("calibration file '" + name + "': " + reason).str();
    return failure();
  };
  Bytes bytes(bytesRef);
  const char *notZip = "not a NumPy .npz archive (no zip end record); write "
                       "it with np.savez";

  // End of central directory: the last record signature within the final
  // 22 + 65535 bytes (a trailing comment may follow it).
  if (bytes.size() < 22)
    return fail(notZip);
  uint64_t end = bytes.size() - 22;
  uint64_t stop = end > 65535 ? end - 65535 : 0;
  while (bytes.le(end, 4) != kEndSig) {
    if (end == stop)
      return fail(notZip);
    --end;
  }
  uint64_t numEntries = bytes.le(end + 10, 2);
  uint64_t cdSize = bytes.le(end + 12, 4);
  uint64_t cdOffset = bytes.le(end + 16, 4);
  if (numEntries == 0xFFFF || cdSize == 0xFFFFFFFF || cdOffset == 0xFFFFFFFF) {
    if (end < 20 || bytes.le(end - 20, 4) != kZip64LocatorSig)
      return fail("ZIP64 end record locator missing");
    uint64_t z64 = bytes.le(end - 20 + 8, 8);
    if (!bytes.has(z64, 56) || bytes.le(z64, 4) != kZip64EndSig)
      return fail("ZIP64 end record missing");
    numEntries = bytes.le(z64 + 32, 8);
    cdSize = bytes.le(z64 + 40, 8);
    cdOffset = bytes.le(z64 + 48, 8);
  }
  if (!bytes.has(cdOffset, cdSize))
    return fail("central directory out of bounds (truncated file?)");

  auto storage = std::make_shared<Storage>();
  storage->source = name.str();
  uint64_t at = cdOffset;
  for (uint64_t entry = 0; entry < numEntries; ++entry) {
    if (!bytes.has(at, 46) || bytes.le(at, 4) != kCentralHeaderSig)
      return fail("corrupt central directory entry " + Twine(entry));
    uint64_t flags = bytes.le(at + 8, 2);
    uint64_t method = bytes.le(at + 10, 2);
    uint32_t crc = bytes.le(at + 16, 4);
    uint64_t compressedSize = bytes.le(at + 20, 4);
    uint64_t size = bytes.le(at + 24, 4);
    uint64_t nameLen = bytes.le(at + 28, 2);
    uint64_t extraLen = bytes.le(at + 30, 2);
    uint64_t commentLen = bytes.le(at + 32, 2);
    uint64_t localOffset = bytes.le(at + 42, 4);
    if (!bytes.has(at + 46, nameLen + extraLen + commentLen))
      return fail("corrupt central directory entry " + Twine(entry));
    StringRef member = bytes.slice(at + 46, nameLen);
    // ZIP64 extended information: the 8-byte values of the fields saturated
    // at 0xFFFFFFFF, in this order.
    uint64_t extra = at + 46 + nameLen, extraEnd = extra + extraLen;
    while (extra + 4 <= extraEnd) {
      uint64_t id = bytes.le(extra, 2), len = bytes.le(extra + 2, 2);
      uint64_t field = extra + 4, fieldEnd = field + len;
      if (fieldEnd > extraEnd)
        break;
      if (id == 0x0001) {
        for (uint64_t *value : {&size, &compressedSize, &localOffset}) {
          if (*value != 0xFFFFFFFF)
            continue;
          if (field + 8 > fieldEnd)
            return fail("member '" + member + "': corrupt ZIP64 field");
          *value = bytes.le(field, 8);
          field += 8;
        }
      }
      extra = fieldEnd;
    }
    at = extraEnd + commentLen;

    if (flags & 1)
      return fail("member '" + member + "' is encrypted");
    if (method != 0)
      return fail("member '" + member + "' is compressed (method " +
                  Twine(method) +
                  "); write the file with np.savez, not np.savez_compressed");
    if (compressedSize != size)
      return fail("member '" + member + "': stored sizes disagree");
    if (!member.ends_with(".npy"))
      return fail("member '" + member + "' is not a .npy array");
    if (!bytes.has(localOffset, 30) ||
        bytes.le(localOffset, 4) != kLocalHeaderSig)
      return fail("member '" + member + "': corrupt local header");
    uint64_t dataStart = localOffset + 30 + bytes.le(localOffset + 26, 2) +
                         bytes.le(localOffset + 28, 2);
    if (!bytes.has(dataStart, size))
      return fail("member '" + member + "' out of bounds (truncated file?)");
    StringRef data = bytes.slice(dataStart, size);
    if (llvm::crc32(llvm::arrayRefFromStringRef(data)) != crc)
      return fail("member '" + member + "': CRC mismatch (corrupt file)");

    StringRef key = member.drop_back(4);
    if (storage->arrays.count(key))
      return fail("member '" + member + "' appears twice");
    Array array;
    std::string npyError;
    if (failed(parseNpy(data, array, "member '" + member + "'", npyError)))
      return fail(npyError);
    storage->arrays[key] = std::move(array);
  }

  CalibrationData result;
  result.storage = std::move(storage);
  return result;
}

FailureOr<CalibrationData> CalibrationData::load(StringRef path,
                                                 std::string &error) {
  llvm::ErrorOr<std::unique_ptr<llvm::MemoryBuffer>> file =
      llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                  /*RequiresNullTerminator=*/false);
  if (!file) {
    error = ("cannot open calibration file '" + path +
             "': " + file.getError().message())
                .str();
    return failure();
  }
  return parse((*file)->getBuffer(), path, error);
}

//===----------------------------------------------------------------------===//
// Keys
//===----------------------------------------------------------------------===//

/// The value a cast or transpose reads, if `op` is one the key rules look
/// through.
static Value lookThrough(Operation *op) {
  if (auto extf = dyn_cast<arith::ExtFOp>(op))
    return extf.getIn();
  if (auto truncf = dyn_cast<arith::TruncFOp>(op))
    return truncf.getIn();
  if (auto transpose = dyn_cast<linalg::TransposeOp>(op))
    return transpose.getInput();
  return {};
}

static std::optional<std::string> nameOf(Location loc) {
  std::optional<std::string> name;
  loc->walk([&](Location nested) {
    if (auto named = dyn_cast<NameLoc>(nested)) {
      name = named.getName().str();
      return WalkResult::interrupt();
    }
    return WalkResult::advance();
  });
  return name;
}

std::string CalibrationData::keyFor(Value value) {
  // Rule 2: a function argument behind casts and transposes.
  for (Value v = value; v;) {
    if (auto arg = dyn_cast<BlockArgument>(v)) {
      Block *block = arg.getOwner();
      Operation *parent = block->getParentOp();
      if (parent && isa<FunctionOpInterface>(parent) && block->isEntryBlock())
        return ("@" + SymbolTable::getSymbolName(parent).getValue() + "/arg" +
                Twine(arg.getArgNumber()))
            .str();
      break;
    }
    v = lookThrough(v.getDefiningOp());
  }
  // Rule 3: the nearest name location along the same chain.
  for (Value v = value; v;) {
    Operation *def = v.getDefiningOp();
    if (!def)
      break;
    if (std::optional<std::string> name = nameOf(def->getLoc()))
      return *name;
    v = lookThrough(def);
  }
  return "";
}

std::string CalibrationData::keyFor(QuantizeOp op) {
  if (auto attr = op->getAttrOfType<StringAttr>(kCalibrationAttrName))
    return attr.getValue().str();
  return keyFor(op.getInput());
}

//===----------------------------------------------------------------------===//
// Lookup
//===----------------------------------------------------------------------===//

std::optional<CalibrationView> CalibrationData::lookup(StringRef key) const {
  if (!storage)
    return std::nullopt;
  auto it = storage->arrays.find(key);
  if (it == storage->arrays.end())
    return std::nullopt;
  return CalibrationView{it->first(), it->second.shape, it->second.data};
}

std::optional<CalibrationView> CalibrationData::lookup(QuantizeOp op) const {
  std::string key = keyFor(op);
  if (key.empty())
    return std::nullopt;
  return lookup(key);
}

FailureOr<CalibrationView>
CalibrationData::lookupOrEmitError(QuantizeOp op) const {
  std::string key = keyFor(op);
  if (key.empty())
    return op.emitError("no calibration key for this value: no '")
           << kCalibrationAttrName
           << "' attribute, the input is not a function argument and has "
              "no name location";
  std::optional<CalibrationView> view = lookup(key);
  if (!view)
    return op.emitError("no calibration data for key '")
           << key << "' in '" << source() << "'";
  int64_t axisSize = op.getResult().getType().getAxisSize();
  if (view->channels() != axisSize)
    return op.emitError("calibration data '")
           << key << "' has " << view->channels()
           << " channels (its last axis), but the quantized axis has "
           << axisSize << " elements";
  if (view->rows() == 0)
    return op.emitError("calibration data '") << key << "' has no samples";
  return *view;
}

std::vector<std::string> CalibrationData::keys() const {
  std::vector<std::string> result;
  if (storage)
    for (const auto &entry : storage->arrays)
      result.push_back(entry.first().str());
  llvm::sort(result);
  return result;
}

size_t CalibrationData::size() const {
  return storage ? storage->arrays.size() : 0;
}

StringRef CalibrationData::source() const {
  return storage ? StringRef(storage->source) : StringRef();
}
