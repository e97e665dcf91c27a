//===- Safetensors.h - safetensors reader and writer ------------*- C++ -*-===//
//
// The safetensors format (https://github.com/huggingface/safetensors): an
// 8-byte little-endian header length N, N bytes of JSON mapping each tensor
// name to {"dtype", "shape", "data_offsets": [begin, end]} (offsets relative
// to the byte buffer after the header) plus an optional "__metadata__"
// string-to-string map, then the byte buffer. The reader validates
// everything a consumer relies on and names the first violation; the writer
// lays tensors out back to back (the format allows no gaps), largest element
// size first so every tensor is aligned to its element size.
//
//===----------------------------------------------------------------------===//

#ifndef FP4_TOOLS_FP4QUANT_SAFETENSORS_H
#define FP4_TOOLS_FP4QUANT_SAFETENSORS_H

#include "llvm/ADT/SmallVector.h"
#include "llvm/ADT/StringRef.h"
#include "llvm/Support/Error.h"
#include "llvm/Support/FileOutputBuffer.h"
#include "llvm/Support/MemoryBuffer.h"

#include <map>
#include <memory>
#include <string>
#include <vector>

namespace fp4quant {

/// Element size in bytes of a safetensors dtype name ("BF16" -> 2), or 0 for
/// a name the format does not define.
int64_t safetensorsElementSize(llvm::StringRef dtype);

struct TensorEntry {
  std::string name;
  std::string dtype; // safetensors name: F32, BF16, F16, U8, F8_E4M3, ...
  llvm::SmallVector<int64_t> shape;
  int64_t begin = 0, end = 0; // offsets into the data buffer
  int64_t numElements() const;
};

class SafetensorsFile {
public:
  /// Maps and validates `path`. Errors read `<reason>` (the caller prefixes
  /// the file name).
  static llvm::Expected<std::unique_ptr<SafetensorsFile>>
  open(llvm::StringRef path);

  const std::string &path() const { return filePath; }
  /// Tensors in file order (by data offset).
  const std::vector<TensorEntry> &tensors() const { return entries; }
  const std::map<std::string, std::string> &metadata() const { return meta; }
  const char *data(const TensorEntry &t) const {
    return buffer->getBufferStart() + dataStart + t.begin;
  }
  int64_t fileSize() const { return buffer->getBufferSize(); }

private:
  std::string filePath;
  std::unique_ptr<llvm::MemoryBuffer> buffer;
  int64_t dataStart = 0;
  std::vector<TensorEntry> entries;
  std::map<std::string, std::string> meta;
};

/// A tensor to write: its header entry and where its bytes go.
struct OutputTensor {
  std::string name;
  std::string dtype;
  llvm::SmallVector<int64_t> shape;
  int64_t bytes = 0;
  char *data = nullptr; // set by SafetensorsWriter::create
};

class SafetensorsWriter {
public:
  /// Lays out `tensors` (names must be unique; sizes must match dtype and
  /// shape), creates a temporary for `path` of the final size
  /// and sets every tensor's `data`. commit() renames it into place;
  /// destroying the writer without commit leaves no file.
  static llvm::Expected<std::unique_ptr<SafetensorsWriter>>
  create(llvm::StringRef path, std::vector<OutputTensor> &tensors,
         const std::map<std::string, std::string> &metadata);
  llvm::Error commit() { return out->commit(); }
  int64_t fileSize() const { return out->getBufferSize(); }

private:
  std::unique_ptr<llvm::FileOutputBuffer> out;
};

} // namespace fp4quant

#endif // FP4_TOOLS_FP4QUANT_SAFETENSORS_H
