//===- Checkpoint.cpp - quantize a safetensors checkpoint -----------------===//

#include "Checkpoint.h"

#include "JitQuantizer.h"
#include "Progress.h"
#include "Safetensors.h"
#include "TensorSelection.h"

#include "fp4/Dialect/FP4/IR/FP4Dialect.h"

#include "mlir/IR/BuiltinTypes.h"

#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSet.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/raw_ostream.h"

#include <chrono>
#include <cmath>
#include <cstring>
#include <map>
#include <set>

using namespace mlir;
namespace fs = llvm::sys::fs;
namespace path = llvm::sys::path;

namespace fp4quant {
namespace {

constexpr llvm::StringLiteral kIndexName = "model.safetensors.index.json";
constexpr llvm::StringLiteral kConfigName = "config.json";
/// The compressed-tensors release whose conventions the layout follows
/// (written as quantization_config.version, as compressed-tensors does).
constexpr llvm::StringLiteral kCompressedTensorsVersion = "0.20.0";

/// `fp4-quant: error: <file>: <reason>`, the form of every checkpoint error.
int fileError(llvm::StringRef file, const llvm::Twine &reason) {
  (void)userError(file + ": " + reason);
  return 1;
}

double secondsSince(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start)
      .count();
}

std::string joinPath(llvm::StringRef dir, llvm::StringRef name) {
  llvm::SmallString<256> p(dir);
  path::append(p, name);
  return std::string(p);
}

/// The checkpoint's files: shard names relative to `dir`, and the index.
struct Source {
  std::string dir;
  std::string indexPath;        // empty: not sharded
  llvm::json::Object indexMeta; // the index's "metadata" (total_size aside)
  std::map<std::string, std::string> weightMap; // tensor -> shard
  std::vector<std::string> shards;
  bool isFolder = false; // copy the folder's other files
};

llvm::Expected<llvm::json::Value> readJson(llvm::StringRef file) {
  auto buffer = llvm::MemoryBuffer::getFile(file);
  if (!buffer)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "cannot read: " +
                                       buffer.getError().message());
  auto json = llvm::json::parse((*buffer)->getBuffer());
  if (!json)
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "bad JSON: " +
                                       llvm::toString(json.takeError()));
  return json;
}

int resolveSource(llvm::StringRef src, Source &out) {
  if (!fs::exists(src))
    return fileError(src, "no such file or folder");
  if (fs::is_directory(src)) {
    out.dir = src.str();
    out.isFolder = true;
    std::string index = joinPath(src, kIndexName);
    if (fs::exists(index)) {
      out.indexPath = index;
    } else {
      std::error_code ec;
      for (fs::directory_iterator it(src, ec), end; it != end && !ec;
           it.increment(ec))
        if (llvm::StringRef(it->path()).ends_with(".safetensors"))
          out.shards.push_back(path::filename(it->path()).str());
      llvm::sort(out.shards);
      if (out.shards.empty())
        return fileError(src, "no .safetensors file and no " + kIndexName +
                                  " in this folder");
      return 0;
    }
  } else if (src.ends_with(".json")) {
    out.indexPath = src.str();
    out.dir = path::parent_path(src).str();
    out.isFolder = true;
  } else {
    out.dir = path::parent_path(src).str();
    out.shards.push_back(path::filename(src).str());
    return 0;
  }
  if (out.dir.empty())
    out.dir = ".";

  llvm::Expected<llvm::json::Value> json = readJson(out.indexPath);
  if (!json)
    return fileError(out.indexPath, llvm::toString(json.takeError()));
  const llvm::json::Object *root = json->getAsObject();
  const llvm::json::Object *map = root ? root->getObject("weight_map") : nullptr;
  if (!map)
    return fileError(out.indexPath, "no \"weight_map\" object (not a "
                                    "safetensors index?)");
  if (const llvm::json::Object *meta = root->getObject("metadata"))
    for (const auto &[k, v] : *meta)
      if (k != "total_size")
        out.indexMeta[k] = v;
  std::set<std::string> shards;
  for (const auto &[name, shard] : *map) {
    std::optional<llvm::StringRef> file = shard.getAsString();
    if (!file || file->empty() || file->contains('/') ||
        file->contains('\\'))
      return fileError(out.indexPath, "weight_map entry of '" + name.str() +
                                          "' is not a file name in the "
                                          "index's folder");
    out.weightMap[name.str()] = file->str();
    shards.insert(file->str());
  }
  out.shards.assign(shards.begin(), shards.end());
  if (out.shards.empty())
    return fileError(out.indexPath, "the weight_map is empty");
  return 0;
}

/// `14336x4096` (empty for a scalar).
std::string shapeString(llvm::ArrayRef<int64_t> shape) {
  std::string s;
  for (auto [i, d] : llvm::enumerate(shape))
    s += (i ? "x" : "") + std::to_string(d);
  return s;
}

/// What happens to one input tensor.
struct TensorPlan {
  const TensorEntry *entry = nullptr;
  bool quantize = false;
};

Type elementTypeOf(MLIRContext *ctx, llvm::StringRef dtype) {
  if (dtype == "F32")
    return Float32Type::get(ctx);
  if (dtype == "BF16")
    return BFloat16Type::get(ctx);
  if (dtype == "F16")
    return Float16Type::get(ctx);
  return nullptr;
}

/// The module name of a weight (`model.layers.0.mlp.up_proj.weight` ->
/// `model.layers.0.mlp.up_proj`), the prefix compressed-tensors' names use.
llvm::StringRef moduleName(llvm::StringRef name) {
  return name.ends_with(".weight") ? name.drop_back(strlen(".weight")) : name;
}

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, 4);
  return u;
}

/// An f32 G with fl32(1 / G) == gDec bit for bit: the encode-side global
/// scale compressed-tensors stores, chosen so that the reciprocal vLLM and
/// the kernels take gives back exactly our decode scale. G = g_enc (of which
/// gDec = fl32(1 / g_enc) is the reciprocal) always qualifies; the search
/// from fl32(1 / gDec) finds it or a neighbour within a few ulps.
std::optional<float> reciprocalWitness(float gDec) {
  float start = 1.0f / gDec;
  for (int k = 0; k <= 16; ++k)
    for (int sign : {1, -1}) {
      float g = start;
      for (int i = 0; i < k; ++i)
        g = std::nextafter(g, sign > 0 ? INFINITY : 0.0f);
      if (std::isfinite(g) && g > 0 &&
          bitsOf(1.0f / g) == bitsOf(gDec))
        return g;
    }
  return std::nullopt;
}

/// The config_groups weights entry of compressed-tensors' MXFP4A16 /
/// NVFP4A16 presets (QuantizationArgs.model_dump()).
llvm::json::Object weightArgs(bool nvfp4) {
  return llvm::json::Object{
      {"num_bits", 4},
      {"type", "float"},
      {"symmetric", true},
      {"group_size", nvfp4 ? 16 : 32},
      {"strategy", nvfp4 ? "tensor_group" : "group"},
      {"dynamic", false},
      {"scale_dtype", nvfp4 ? "torch.float8_e4m3fn" : "torch.uint8"},
  };
}

llvm::json::Object quantizationConfig(bool nvfp4,
                                      const std::vector<std::string> &ignore) {
  std::string format = nvfp4 ? "nvfp4-pack-quantized" : "mxfp4-pack-quantized";
  llvm::json::Array ignoreList;
  for (const std::string &m : ignore)
    ignoreList.push_back(m);
  return llvm::json::Object{
      {"config_groups",
       llvm::json::Object{
           {"group_0",
            llvm::json::Object{{"targets", llvm::json::Array{"Linear"}},
                               {"weights", weightArgs(nvfp4)},
                               {"input_activations", nullptr},
                               {"output_activations", nullptr},
                               {"format", format}}}}},
      {"format", format},
      {"global_compression_ratio", nullptr},
      {"ignore", std::move(ignoreList)},
      {"kv_cache_scheme", nullptr},
      {"quant_method", "compressed-tensors"},
      {"quantization_status", "compressed"},
      {"sparsity_config", llvm::json::Object{}},
      {"transform_config", llvm::json::Object{}},
      {"version", kCompressedTensorsVersion},
  };
}

/// Writes `value` to `file` through a temporary renamed into place.
int writeJson(llvm::StringRef file, llvm::json::Value value) {
  llvm::Error err = llvm::writeToOutput(file, [&](llvm::raw_ostream &os) {
    os << llvm::formatv("{0:2}", value) << "\n";
    return llvm::Error::success();
  });
  if (err)
    return fileError(file, "cannot write: " + llvm::toString(std::move(err)));
  return 0;
}

/// A buffer aligned for any element type, for inputs the file leaves
/// unaligned (compiled code may assume element alignment).
struct AlignedCopy {
  std::unique_ptr<uint64_t[]> storage;
  const void *get(const char *data, int64_t bytes, int64_t align) {
    if (reinterpret_cast<uintptr_t>(data) % align == 0)
      return data;
    storage.reset(new uint64_t[(bytes + 7) / 8]);
    std::memcpy(storage.get(), data, bytes);
    return storage.get();
  }
};

} // namespace

int quantizeCheckpoint(MLIRContext &ctx, const CheckpointOptions &options) {
  auto startTotal = std::chrono::steady_clock::now();
  bool ctLayout = options.layout == "compressed-tensors";
  if (!ctLayout && options.layout != "fp4")
    return fileError(options.source,
                     "unknown --layout '" + options.layout +
                         "' (expected compressed-tensors or fp4)");

  // The scheme, and whether the chosen layout can represent it.
  FailureOr<fp4::QuantSchemeAttrInterface> scheme =
      parseScheme(&ctx, options.scheme);
  if (failed(scheme))
    return 1;
  std::string schemeString;
  llvm::raw_string_ostream(schemeString) << Attribute(*scheme);
  llvm::StringRef format = scheme->getFormatName();
  bool nvfp4 = format == "nvfp4";
  if (ctLayout && !(nvfp4 || (format == "mxfp4" &&
                              scheme->getBlockSize() == 32)))
    return fileError(options.source,
                     "--layout=compressed-tensors holds #fp4.mxfp4 with "
                     "block_size = 32 (mxfp4-pack-quantized) or #fp4.nvfp4 "
                     "(nvfp4-pack-quantized), not " +
                         schemeString + "; use --layout=fp4");

  std::vector<NamePattern> include, exclude;
  for (auto [list, texts, flag] :
       {std::tuple(&include, &options.include, "--include"),
        std::tuple(&exclude, &options.exclude, "--exclude")})
    for (const std::string &text : *texts) {
      llvm::Expected<NamePattern> p = NamePattern::parse(text);
      if (!p)
        return fileError(options.source, llvm::Twine(flag) + ": " +
                                             llvm::toString(p.takeError()));
      list->push_back(std::move(*p));
    }

  Source src;
  if (int rc = resolveSource(options.source, src))
    return rc;

  // Open and validate every shard before writing anything.
  std::vector<std::unique_ptr<SafetensorsFile>> files;
  for (const std::string &shard : src.shards) {
    std::string file = joinPath(src.dir, shard);
    auto opened = SafetensorsFile::open(file);
    if (!opened)
      return fileError(file, llvm::toString(opened.takeError()));
    files.push_back(std::move(*opened));
  }
  if (!src.indexPath.empty()) {
    std::map<std::string, std::string> found;
    for (auto [shard, file] : llvm::zip_equal(src.shards, files))
      for (const TensorEntry &t : file->tensors())
        found[t.name] = shard;
    for (const auto &[name, shard] : src.weightMap) {
      auto it = found.find(name);
      if (it == found.end() || it->second != shard)
        return fileError(src.indexPath, "tensor '" + name +
                                            "' is mapped to '" + shard +
                                            "', which does not contain it");
    }
  }

  // Selection: explicit --include patterns, or llm-compressor's default;
  // then --exclude. A tensor named by --include that cannot be quantized is
  // an error; one the default picks but whose shape does not fit the scheme
  // stays unquantized with a warning.
  int64_t multiple = scheme->getAxisMultiple();
  std::vector<std::vector<TensorPlan>> plans(files.size());
  std::vector<std::string> ignore;
  int64_t toQuantize = 0;
  for (auto [file, plan] : llvm::zip_equal(files, plans)) {
    for (const TensorEntry &t : file->tensors()) {
      TensorPlan p{&t, false};
      bool floating = elementTypeOf(&ctx, t.dtype) != nullptr;
      bool selected =
          include.empty()
              ? (t.shape.size() == 2 && floating &&
                 isDefaultQuantizedName(t.name))
              : llvm::any_of(include, [&](const NamePattern &pat) {
                  return pat.matches(t.name);
                });
      if (selected && llvm::any_of(exclude, [&](const NamePattern &pat) {
            return pat.matches(t.name);
          }))
        selected = false;
      if (selected) {
        std::string shape = shapeString(t.shape);
        if (t.shape.size() != 2 || !floating)
          return fileError(file->path(),
                           "tensor '" + t.name + "' (" + t.dtype + " " +
                               (shape.empty() ? "scalar" : shape) +
                               ") matches --include but only 2-D F32, BF16 "
                               "or F16 tensors can be quantized");
        if (t.shape[1] % multiple != 0 || t.shape[0] == 0) {
          std::string why = llvm::formatv(
              "tensor '{0}' ({1}) has {2} columns, not a positive multiple of "
              "{3}, the block structure of {4}",
              t.name, shape, t.shape[1], multiple, schemeString);
          if (!include.empty())
            return fileError(file->path(), why);
          llvm::WithColor::warning(llvm::errs(), "fp4-quant")
              << file->path() << ": " << why << "; left unquantized\n";
          selected = false;
        }
      }
      p.quantize = selected;
      toQuantize += selected;
      // compressed-tensors lists the Linear layers it leaves alone.
      if (!selected && t.shape.size() == 2 && floating &&
          llvm::StringRef(t.name).ends_with(".weight") &&
          !isEmbeddingName(t.name))
        ignore.push_back(moduleName(t.name).str());
      plan.push_back(p);
    }
  }
  if (toQuantize == 0)
    return fileError(options.source,
                     "no tensor to quantize (the default selects 2-D "
                     "*.weight tensors except embeddings and lm_head; see "
                     "--include)");
  llvm::sort(ignore);

  // The output folder (never the source: shards would be overwritten while
  // mapped).
  if (std::error_code ec = fs::create_directories(options.destination))
    return fileError(options.destination,
                     "cannot create the output folder: " + ec.message());
  if (fs::equivalent(options.destination, src.dir))
    return fileError(options.destination,
                     "the output folder is the checkpoint's own folder; "
                     "choose another one");

  Progress progress(toQuantize, options.quiet);
  // Compiled quantizers by (rows, cols, dtype): a model has a handful of
  // weight shapes, each compiled once.
  std::map<std::tuple<int64_t, int64_t, std::string>,
           std::unique_ptr<JitQuantizer>>
      quantizers;
  double compileSeconds = 0, runSeconds = 0;
  int64_t inBytes = 0, outBytes = 0, quantizedBytes = 0;
  std::vector<std::unique_ptr<SafetensorsWriter>> writers;
  llvm::json::Object outWeightMap;

  for (auto [shard, file, plan] : llvm::zip_equal(src.shards, files, plans)) {
    // Output tensors in input order; quantized ones become their parts.
    std::vector<OutputTensor> outputs;
    struct Action {
      const TensorPlan *plan;
      size_t first; // index of its first output tensor
    };
    std::vector<Action> actions;
    for (const TensorPlan &p : plan) {
      const TensorEntry &t = *p.entry;
      actions.push_back({&p, outputs.size()});
      inBytes += t.end - t.begin;
      if (!p.quantize) {
        outputs.push_back({t.name, t.dtype, t.shape, t.end - t.begin});
        continue;
      }
      int64_t rows = t.shape[0], cols = t.shape[1];
      auto key = std::make_tuple(rows, cols, t.dtype);
      auto &jit = quantizers[key];
      if (!jit) {
        jit = JitQuantizer::create(&ctx, *scheme, rows, cols,
                                   elementTypeOf(&ctx, t.dtype),
                                   /*dequantize=*/false, options.pipeline);
        if (!jit)
          return fileError(file->path(), "cannot compile the quantizer for "
                                         "tensor '" +
                                             t.name + "'");
        compileSeconds += jit->compileSeconds();
      }
      if (ctLayout) {
        llvm::StringRef base = moduleName(t.name);
        outputs.push_back({(base + ".weight_packed").str(), "U8",
                           {rows, cols / 2}, rows * cols / 2});
        int64_t block = nvfp4 ? 16 : 32;
        outputs.push_back({(base + ".weight_scale").str(),
                           nvfp4 ? "F8_E4M3" : "U8",
                           {rows, cols / block},
                           rows * cols / block});
        if (nvfp4)
          outputs.push_back(
              {(base + ".weight_global_scale").str(), "F32", {1}, 4});
      } else {
        for (const ComponentInfo &c : jit->outputs()) {
          Type e = c.type.getElementType();
          std::string dtype = e.isBF16()                        ? "BF16"
                              : e.isF32()                       ? "F32"
                              : e.getIntOrFloatBitWidth() == 32 ? "U32"
                              : (nvfp4 && c.name == "scales")   ? "F8_E4M3"
                                                                : "U8";
          outputs.push_back({t.name + "." + c.name, dtype,
                             llvm::SmallVector<int64_t>(c.type.getShape()),
                             c.bytes});
        }
      }
    }
    for (const OutputTensor &o : outputs) {
      outBytes += o.bytes;
      outWeightMap[o.name] = shard;
    }

    // Header metadata: the input's, plus what each layout's readers expect.
    std::map<std::string, std::string> metadata = file->metadata();
    if (ctLayout) {
      metadata["format"] = "pt"; // transformers refuses other formats
    } else {
      metadata["fp4.layout"] = "fp4-mlir-abi/1";
      for (const TensorPlan &p : plan) {
        if (!p.quantize)
          continue;
        const TensorEntry &t = *p.entry;
        auto &jit = quantizers[std::make_tuple(t.shape[0], t.shape[1], t.dtype)];
        llvm::json::Array components;
        for (const ComponentInfo &c : jit->outputs())
          components.push_back(t.name + "." + c.name);
        llvm::json::Object info{
            {"scheme", schemeString},
            {"shape", llvm::json::Array{t.shape[0], t.shape[1]}},
            {"axis", 1},
            {"dtype", t.dtype},
            {"components", std::move(components)}};
        metadata["fp4:" + t.name] =
            llvm::formatv("{0}", llvm::json::Value(std::move(info))).str();
      }
    }

    std::string outFile = joinPath(options.destination, shard);
    auto writer = SafetensorsWriter::create(outFile, outputs, metadata);
    if (!writer)
      return fileError(outFile, llvm::toString(writer.takeError()));

    for (const Action &a : actions) {
      const TensorEntry &t = *a.plan->entry;
      const char *data = file->data(t);
      if (!a.plan->quantize) {
        std::memcpy(outputs[a.first].data, data, t.end - t.begin);
        continue;
      }
      auto &jit = quantizers[std::make_tuple(t.shape[0], t.shape[1], t.dtype)];
      AlignedCopy aligned;
      const void *input = aligned.get(data, t.end - t.begin,
                                      safetensorsElementSize(t.dtype));
      float tensorScale = 0;
      llvm::SmallVector<void *> dst;
      for (auto [i, c] : llvm::enumerate(jit->outputs())) {
        if (ctLayout && c.name == "tensor_scale")
          dst.push_back(&tensorScale);
        else
          dst.push_back(outputs[a.first + i].data);
      }
      auto start = std::chrono::steady_clock::now();
      if (failed(jit->run(input, dst)))
        return fileError(file->path(),
                         "quantizing tensor '" + t.name + "' failed");
      double seconds = secondsSince(start);
      if (ctLayout && nvfp4) {
        std::optional<float> g = reciprocalWitness(tensorScale);
        if (!g)
          return fileError(file->path(),
                           llvm::formatv("tensor '{0}': no f32 global scale "
                                         "has the reciprocal {1:e} (the "
                                         "tensor's decode scale)",
                                         t.name, tensorScale));
        std::memcpy(outputs[a.first + 2].data, &*g, 4);
      }
      runSeconds += seconds;
      quantizedBytes += t.end - t.begin;
      progress.step(t.name,
                    llvm::formatv("{0}x{1} {2}", t.shape[0], t.shape[1],
                                  t.dtype)
                        .str(),
                    t.end - t.begin, seconds);
    }
    writers.push_back(std::move(*writer));
  }

  // Everything computed: put the shards in place, then the index, config
  // and the folder's other files.
  for (auto [shard, writer] : llvm::zip_equal(src.shards, writers))
    if (llvm::Error err = writer->commit())
      return fileError(joinPath(options.destination, shard),
                       "cannot write: " + llvm::toString(std::move(err)));
  if (!src.indexPath.empty()) {
    llvm::json::Object meta = src.indexMeta;
    meta["total_size"] = outBytes;
    llvm::json::Object index{{"metadata", std::move(meta)},
                             {"weight_map", std::move(outWeightMap)}};
    if (int rc = writeJson(joinPath(options.destination, kIndexName),
                           std::move(index)))
      return rc;
  }
  std::string configIn = joinPath(src.dir, kConfigName);
  if (ctLayout) {
    llvm::json::Object config;
    if (fs::exists(configIn)) {
      llvm::Expected<llvm::json::Value> json = readJson(configIn);
      if (!json)
        return fileError(configIn, llvm::toString(json.takeError()));
      if (!json->getAsObject())
        return fileError(configIn, "the top level is not an object");
      config = std::move(*json->getAsObject());
    }
    config["quantization_config"] = quantizationConfig(nvfp4, ignore);
    if (int rc = writeJson(joinPath(options.destination, kConfigName),
                           std::move(config)))
      return rc;
  }
  if (src.isFolder) {
    std::error_code ec;
    for (fs::directory_iterator it(src.dir, ec), end; it != end && !ec;
         it.increment(ec)) {
      llvm::StringRef name = path::filename(it->path());
      if (name.ends_with(".safetensors") || name == kIndexName ||
          (ctLayout && name == kConfigName) ||
          it->type() != fs::file_type::regular_file)
        continue;
      if (std::error_code copyEc =
              fs::copy_file(it->path(), joinPath(options.destination, name)))
        return fileError(joinPath(options.destination, name),
                         "cannot copy: " + copyEc.message());
    }
  }

  if (!options.quiet) {
    double total = secondsSince(startTotal);
    llvm::outs() << llvm::formatv(
        "fp4-quant: {0} -> {1}: quantized {2} tensors with {3} ({4} layout), "
        "{5} shard(s), {6} -> {7} bytes (compile {8:f2} s, quantize {9:f2} s "
        "at {10:f2} GB/s, total {11:f2} s at {12:f2} GB/s)\n",
        options.source, options.destination, toQuantize, schemeString,
        options.layout, src.shards.size(), inBytes, outBytes, compileSeconds,
        runSeconds, runSeconds > 0 ? quantizedBytes / runSeconds / 1e9 : 0.0,
        total, inBytes / total / 1e9);
  }
  return 0;
}

} // namespace fp4quant
