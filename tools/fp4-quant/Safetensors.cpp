//===- Safetensors.cpp - safetensors reader and writer --------------------===//

#include "Safetensors.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/Endian.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <cstring>
#include <limits>

namespace fp4quant {

namespace {

llvm::Error error(const llvm::Twine &message) {
  return llvm::createStringError(llvm::inconvertibleErrorCode(), message);
}

/// The Rust reference implementation refuses headers above 100 MB; so do we
/// (a corrupt length would otherwise make us parse gigabytes as JSON).
constexpr uint64_t kMaxHeaderBytes = 100'000'000;

} // namespace

int64_t safetensorsElementSize(llvm::StringRef dtype) {
  return llvm::StringSwitch<int64_t>(dtype)
      .Cases({"BOOL", "U8", "I8", "F8_E4M3", "F8_E5M2", "F8_E8M0"}, 1)
      .Cases({"U16", "I16", "F16", "BF16"}, 2)
      .Cases({"U32", "I32", "F32"}, 4)
      .Cases({"U64", "I64", "F64"}, 8)
      .Default(0);
}

int64_t TensorEntry::numElements() const {
  int64_t n = 1;
  for (int64_t d : shape)
    n *= d;
  return n;
}

llvm::Expected<std::unique_ptr<SafetensorsFile>>
SafetensorsFile::open(llvm::StringRef path) {
  auto buffer = llvm::MemoryBuffer::getFile(path, /*IsText=*/false,
                                            /*RequiresNullTerminator=*/false);
  if (!buffer)
    return error("cannot read: " + buffer.getError().message());
  std::unique_ptr<SafetensorsFile> file(new SafetensorsFile());
  file->filePath = path.str();
  file->buffer = std::move(*buffer);
  uint64_t size = file->buffer->getBufferSize();
  const char *base = file->buffer->getBufferStart();
  if (size < 8)
    return error(llvm::formatv("truncated header: the file has {0} bytes, "
                               "fewer than the 8-byte header length",
                               size));
  uint64_t headerBytes =
      llvm::support::endian::read64le(reinterpret_cast<const uint8_t *>(base));
  if (headerBytes > kMaxHeaderBytes)
    return error(llvm::formatv("header length {0} is larger than the 100 MB "
                               "safetensors allows (not a safetensors file?)",
                               headerBytes));
  if (headerBytes > size - 8)
    return error(llvm::formatv("truncated header: it claims {0} bytes but "
                               "the file has only {1} after the length",
                               headerBytes, size - 8));
  file->dataStart = 8 + headerBytes;
  int64_t dataBytes = size - file->dataStart;

  llvm::StringRef text(base + 8, headerBytes);
  llvm::Expected<llvm::json::Value> json = llvm::json::parse(text);
  if (!json)
    return error("bad JSON header: " + llvm::toString(json.takeError()));
  const llvm::json::Object *root = json->getAsObject();
  if (!root)
    return error("bad JSON header: the top level is not an object");

  for (const auto &[key, value] : *root) {
    std::string name = key.str();
    if (name == "__metadata__") {
      const llvm::json::Object *meta = value.getAsObject();
      if (!meta)
        return error("bad JSON header: __metadata__ is not an object");
      for (const auto &[mk, mv] : *meta) {
        std::optional<llvm::StringRef> s = mv.getAsString();
        if (!s)
          return error("bad JSON header: __metadata__ value of '" + mk.str() +
                       "' is not a string");
        file->meta[mk.str()] = s->str();
      }
      continue;
    }
    const llvm::json::Object *entry = value.getAsObject();
    if (!entry)
      return error("bad JSON header: tensor '" + name + "' is not an object");
    TensorEntry t;
    t.name = name;
    std::optional<llvm::StringRef> dtype = entry->getString("dtype");
    if (!dtype)
      return error("bad JSON header: tensor '" + name + "' has no dtype");
    t.dtype = dtype->str();
    int64_t elementSize = safetensorsElementSize(t.dtype);
    if (elementSize == 0)
      return error("tensor '" + name + "' has unsupported dtype '" + t.dtype +
                   "'");
    const llvm::json::Array *shape = entry->getArray("shape");
    if (!shape)
      return error("bad JSON header: tensor '" + name + "' has no shape");
    for (const llvm::json::Value &d : *shape) {
      std::optional<int64_t> v = d.getAsInteger();
      if (!v || *v < 0)
        return error("bad JSON header: tensor '" + name +
                     "' has a shape entry that is not a non-negative integer");
      t.shape.push_back(*v);
    }
    const llvm::json::Array *offsets = entry->getArray("data_offsets");
    if (!offsets || offsets->size() != 2)
      return error("bad JSON header: tensor '" + name +
                   "' needs data_offsets [begin, end]");
    std::optional<int64_t> begin = (*offsets)[0].getAsInteger();
    std::optional<int64_t> end = (*offsets)[1].getAsInteger();
    if (!begin || !end || *begin < 0 || *end < *begin)
      return error("bad JSON header: tensor '" + name +
                   "' has invalid data_offsets");
    t.begin = *begin;
    t.end = *end;
    if (t.end > dataBytes)
      return error(llvm::formatv("tensor '{0}' data offsets [{1}, {2}] are out "
                                 "of range: the data section has {3} bytes",
                                 name, t.begin, t.end, dataBytes));
    // Overflow-safe byte count (a corrupt shape can hold huge numbers).
    int64_t expected = elementSize;
    for (int64_t d : t.shape) {
      if (d != 0 && expected > std::numeric_limits<int64_t>::max() / d) {
        expected = -1;
        break;
      }
      expected *= d;
    }
    if (expected != t.end - t.begin)
      return error(llvm::formatv(
          "tensor '{0}' has {1} bytes of data but its shape and dtype {2} "
          "need {3}",
          name, t.end - t.begin, t.dtype,
          expected < 0 ? std::string("more than the file")
                       : std::to_string(expected)));
    file->entries.push_back(std::move(t));
  }
  llvm::sort(file->entries, [](const TensorEntry &a, const TensorEntry &b) {
    return a.begin < b.begin || (a.begin == b.begin && a.end < b.end);
  });
  // Tensors must not overlap (the reference implementation also requires
  // them to tile the buffer exactly; we only need them not to alias).
  for (size_t i = 1; i < file->entries.size(); ++i)
    if (file->entries[i].begin < file->entries[i - 1].end)
      return error("tensors '" + file->entries[i - 1].name + "' and '" +
                   file->entries[i].name + "' overlap");
  return file;
}

llvm::Expected<std::unique_ptr<SafetensorsWriter>>
SafetensorsWriter::create(llvm::StringRef path,
                          std::vector<OutputTensor> &tensors,
                          const std::map<std::string, std::string> &metadata) {
  // Largest element size first, then by name (the order of the reference
  // writer): back-to-back tensors then stay aligned to their element size.
  std::vector<OutputTensor *> order;
  for (OutputTensor &t : tensors)
    order.push_back(&t);
  std::sort(order.begin(), order.end(), [](const OutputTensor *a, const OutputTensor *b) {
    int64_t sa = safetensorsElementSize(a->dtype);
    int64_t sb = safetensorsElementSize(b->dtype);
    return sa != sb ? sa > sb : a->name < b->name;
  });

  std::vector<int64_t> offsets(order.size());
  int64_t offset = 0;
  std::string header;
  {
    llvm::raw_string_ostream os(header);
    llvm::json::OStream json(os);
    json.object([&] {
      if (!metadata.empty())
        json.attributeObject("__metadata__", [&] {
          for (const auto &[k, v] : metadata)
            json.attribute(k, v);
        });
      for (size_t i = 0; i < order.size(); ++i) {
        const OutputTensor *t = order[i];
        offsets[i] = offset;
        json.attributeObject(t->name, [&] {
          json.attribute("dtype", t->dtype);
          json.attributeArray("shape", [&] {
            for (int64_t d : t->shape)
              json.value(d);
          });
          json.attributeArray("data_offsets", [&] {
            json.value(offset);
            json.value(offset + t->bytes);
          });
        });
        offset += t->bytes;
      }
    });
  }
  // Pad with spaces so the data section starts 8-byte aligned.
  while (header.size() % 8)
    header.push_back(' ');

  int64_t total = 8 + header.size() + offset;
  auto buffer = llvm::FileOutputBuffer::create(path, total);
  if (!buffer)
    return error("cannot write: " + llvm::toString(buffer.takeError()));
  std::unique_ptr<SafetensorsWriter> writer(new SafetensorsWriter());
  writer->out = std::move(*buffer);
  uint8_t *base = writer->out->getBufferStart();
  llvm::support::endian::write64le(base, header.size());
  std::memcpy(base + 8, header.data(), header.size());
  char *dataBase = reinterpret_cast<char *>(base) + 8 + header.size();
  for (auto [i, t] : llvm::enumerate(order))
    t->data = dataBase + offsets[i];
  return writer;
}

} // namespace fp4quant
