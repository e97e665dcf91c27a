"""A CPU interpreter for the GPU kernels of convert-fp4-to-gpu.

The quantize/dequantize kernels (lib/Conversion/FP4ToGPU/QuantizeKernel.cpp,
DequantizeKernel.cpp) are gpu.func bodies made of arith/math/vector/memref/
scf ops plus gpu.thread_id, block_id, shuffle and barrier. This module runs
such a kernel, as fp4-opt prints it in the generic op form, on NumPy arrays:
every SSA value is an array over all threads of the launch (SIMT in
lockstep), so a gpu.shuffle is a gather across lanes of a warp, a barrier
is a no-op (every thread has finished the previous op), and scf.if executes
its regions under a thread mask (stores are masked, results selected).

The f32/f64 arithmetic is NumPy's, i.e. single IEEE operations rounded to
nearest even with subnormals, exactly what the PTX (.rn, no .ftz, no FMA)
does, so the interpreted kernel computes the bytes the GPU computes up to
NaN payloads. Only the op subset those kernels use is implemented; anything
else raises, so a new op in a kernel cannot be silently skipped.

The decode matmul kernel adds the tensor-core and register-level ops:
nvvm.mma.sync (m16n8k16 bf16, row.col, f32 accumulators) is computed per
warp from the PTX fragment layout in f64 (exact bf16 products, one f32
rounding of C + sum), which is within f32 rounding of what the tensor
cores return (their internal summation order is not IEEE sequential; the
tests that run it compare with a tolerance); nvvm.prmt, llvm.bitcast and
bf16 arithmetic (f32 then one round to nearest even: exact for the
power-of-two scaling the kernels do); loops whose bounds differ between
threads (each thread iterates its own range under the mask).

The prefill matmul kernel (PrefillMatmulKernel.cpp) adds 2-D grids
(gpu.block_id x and y; CTAs are numbered x fastest), dynamic shared memory
(gpu.dynamic_shared_memory: one i8 buffer per CTA of the launch plan's
shared_bytes, and memref.view: typed views of it at a byte offset, sharing
its bytes), vector splat constants, nvgpu.device_async_copy (cp.async:
dstElements elements, those past the optional srcElements zero-filled;
it completes at once, so nvvm.cp.async.commit.group / wait.group are
no-ops: under lockstep every copy has landed before the barrier that
precedes its reads) and nvgpu.ldmatrix (x4, not transposed, 16-bit
elements: lanes 8j..8j+7 give the row addresses of 8x8 matrix j; lane i
gets, as register j, the 32-bit word of row i / 4, columns 2 (i % 4) and
2 (i % 4) + 1 of matrix j).

The prefill kernel's 2:4-sparse lhs adds nvvm.mma.sp.sync (m16n8k32 bf16,
ordered metadata, selector 0; _mma_sp_sync has the layout) and 16-bit
shared loads of its metadata.

Its sm_90a form adds nvvm.wgmma.mma_async (m64nNk16 bf16 -> f32, both
operands from shared-memory descriptors in the 128-byte swizzle; _wgmma)
and the 2:4-sparse wgmma.mma_async.sp m64nNk32 as inline PTX
(llvm.inline_asm; packed A in the 64- or 128-byte swizzle, metadata as
mma.sp's per warp; _inline_wgmma_sp): both decode the descriptors and
apply the swizzle to the addresses; its fence /
commit / wait and nvvm.fence.proxy (no-ops in lockstep), the accumulator
struct (llvm.mlir.undef / insertvalue / extractvalue on a list of fields)
and memref.extract_aligned_pointer_as_index of the dynamic shared memory
(address 0, so descriptor addresses are offsets into it).
"""

import re

import numpy as np

# ---------------------------------------------------------------------------
# Parsing the generic op form
# ---------------------------------------------------------------------------


def _matching(text, start, open_ch, close_ch):
    """Index just past the bracket closing text[start] (== open_ch)."""
    depth, i, n = 0, start, len(text)
    while i < n:
        c = text[i]
        if c == '"':
            i = text.index('"', i + 1)
        elif c == open_ch:
            depth += 1
        elif c == close_ch and not (c == ">" and text[i - 1] == "-"):
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    raise ValueError("unbalanced brackets")


def _split_top(text, sep=","):
    """Splits at top-level `sep` (outside (), [], {}, <> and strings)."""
    parts, depth, cur, i = [], 0, [], 0
    while i < len(text):
        c = text[i]
        if c == '"':
            j = text.index('"', i + 1)
            cur.append(text[i:j + 1])
            i = j + 1
            continue
        if c in "([{<":
            depth += 1
        elif c in ")]}" or (c == ">" and (i == 0 or text[i - 1] != "-")):
            depth -= 1
        if c == sep and depth == 0:
            parts.append("".join(cur).strip())
            cur = []
        else:
            cur.append(c)
        i += 1
    if "".join(cur).strip():
        parts.append("".join(cur).strip())
    return parts


class Op:
    def __init__(self, name, results, operands, props, types_in, types_out):
        self.name = name
        self.results = results
        self.operands = operands
        self.props = props
        self.types_in = types_in
        self.types_out = types_out
        self.regions = []  # list of (block args [(name, type)], [Op])

    def prop(self, key):
        m = re.search(r"\b" + re.escape(key) + r" = ([^,}]+)", self.props)
        return m.group(1).strip() if m else None


_HEAD = re.compile(r'^\s*(?:(%[\w#:]+(?:, %[\w#]+)*) = )?"([\w.]+)"\((.*)$')


def _parse_signature(tail):
    """` : (a, b) -> c` or `-> (c, d)` -> ([a, b], [c, d])."""
    m = tail.rfind(" : ")
    sig = tail[m + 3:].strip()
    arrow = sig.index(") -> ")
    ins = _split_top(sig[1:arrow])
    out = sig[arrow + 5:].strip()
    outs = _split_top(out[1:-1]) if out.startswith("(") else [out]
    return ins, [o for o in outs if o]


def _results(spec):
    if not spec:
        return []
    if ":" in spec and "," not in spec:  # %0:2
        base, n = spec.split(":")
        return [f"{base}#{i}" for i in range(int(n))]
    return [s.strip() for s in spec.split(",")]


def parse_ops(lines, pos):
    """Parses ops from lines[pos] until a region/block end; returns
    (ops, pos of the line that ended the block)."""
    ops = []
    while pos < len(lines):
        line = lines[pos]
        s = line.strip()
        if not s:
            pos += 1
            continue
        if s.startswith("}") or s.startswith("^"):
            return ops, pos
        m = _HEAD.match(line)
        if not m:
            raise ValueError(f"cannot parse: {line[:120]}")
        results, name, rest = m.group(1), m.group(2), m.group(3)
        # Index of the ')' closing the operand list within `rest`.
        close = _matching("(" + rest, 0, "(", ")") - 2
        operands = [o.strip() for o in rest[:close].split(",") if o.strip()]
        after = rest[close + 1:].strip()
        props = ""
        if after.startswith("<{"):
            end = _matching(after, 1, "{", "}") + 1
            props = after[2:end - 2]
            after = after[end:].strip()
        op = Op(name, _results(results), operands, props, [], [])
        if after.startswith("({"):
            pos += 1
            while True:
                args = []
                if lines[pos].strip().startswith("^"):
                    hdr = lines[pos].strip()
                    inner = hdr[hdr.index("(") + 1:hdr.rindex(")")]
                    for a in _split_top(inner):
                        n, t = a.split(":", 1)
                        args.append((n.strip(), t.strip()))
                    pos += 1
                body, pos = parse_ops(lines, pos)
                op.regions.append((args, body))
                end = lines[pos].strip()
                if end.startswith("}, {"):
                    pos += 1
                    continue
                assert end.startswith("})"), end
                op.types_in, op.types_out = _parse_signature(end)
                op.props += " " + end
                pos += 1
                break
        else:
            op.types_in, op.types_out = _parse_signature(after)
            pos += 1
        ops.append(op)
    return ops, pos


def parse_kernels(text):
    """{name: gpu.func Op} of the gpu.module in generic-form `text`."""
    lines = text.split("\n")
    start = next(i for i, l in enumerate(lines) if '"gpu.module"' in l)
    ops, _ = parse_ops(lines, start)
    module = ops[0]
    funcs = {}
    for op in module.regions[0][1]:
        if op.name == "gpu.func":
            funcs[re.search(r'sym_name = "(\w+)"', op.props).group(1)] = op
    return funcs


_MANIFEST_DTYPE = {"bf16": "bfloat16", "f16": "float16", "f32": "float32",
                   "i8": "uint8", "i32": "int32"}


def parse_manifest(text):
    """The launches of the module's #fp4.gpu_manifest (the launch plans of
    convert-fp4-to-gpu): [{name, op, variant, grid, grid_dims, block,
    shared_bytes, args: [(name, dtype, shape, scratch)]}] in the order the
    conversion created the kernels, which is not always the host's launch
    order (an fp4.quantize converted after a correction chain's kernels is
    listed after them but runs before): a test that replays several
    launches must order them itself. dtype as kernels.json names it. grid is the CTA count of a 1-D grid (an
    int) and (x, y, z) otherwise (the prefill matmul's); grid_dims is
    always (x, y, z). run_kernel and Launch take either."""
    m = re.search(r'fp4\.gpu_manifest = #fp4\.gpu_manifest<chip = "\w+", '
                  r'plans = \[', text)
    if not m:
        return []
    line = text[m.end():text.find("\n", m.end())]
    plan_pat = re.compile(
        r'<op = "([\w.]+)", inputs = \[([^\]]*)\], outputs = \[([^\]]*)\], '
        r'scratch = \[([^\]]*)\], launches = \[')
    launch_pat = re.compile(
        r'<@\w+::@(\w+), variant = "([^"]*)", '
        r'grid = \[(\d+), (\d+), (\d+)\], '
        r'block = \[(\d+), \d+, \d+\], shared_bytes = (\d+), '
        r'args = \[([^\]]*)\](?:, dependent = (?:true|false))?>')
    buffer_pat = re.compile(r'"([\w.]+)" : memref<(?:([\dx]+)x)?(\w+)>')
    plans = list(plan_pat.finditer(line))
    out = []
    for i, p in enumerate(plans):
        buffers, scratch = {}, set()
        for group in (2, 3, 4):
            for name, shape, elem in buffer_pat.findall(p.group(group)):
                buffers[name] = (_MANIFEST_DTYPE[elem],
                                 tuple(int(d) for d in shape.split("x") if d))
                if group == 4:
                    scratch.add(name)
        end = plans[i + 1].start() if i + 1 < len(plans) else len(line)
        for l in launch_pat.finditer(line, p.end(), end):
            names = re.findall(r'"([\w.]+)"', l.group(8))
            dims = tuple(int(l.group(i)) for i in (3, 4, 5))
            out.append({
                "name": l.group(1), "op": p.group(1),
                "variant": l.group(2), "block": int(l.group(6)),
                "grid": dims[0] if dims[1:] == (1, 1) else dims,
                "grid_dims": dims, "shared_bytes": int(l.group(7)),
                "args": [(n,) + buffers[n] + (n in scratch,) for n in names]})
    return out


# ---------------------------------------------------------------------------
# Types
# ---------------------------------------------------------------------------

_INT = {"i1": np.bool_, "i8": np.uint8, "i16": np.uint16, "i32": np.uint32,
        "i64": np.uint64, "index": np.uint64}
_SIGNED = {np.uint8: np.int8, np.uint16: np.int16, np.uint32: np.int32,
           np.uint64: np.int64}
_FLOAT = {"f32": np.float32, "f64": np.float64, "f16": np.float16,
          "bf16": np.uint16}  # bf16 values are carried as their bits


def elem_dtype(t):
    return _INT.get(t) or _FLOAT[t]


def parse_type(t):
    """'vector<4xi32>' -> ('vector', (4,), 'i32'); 'f32' -> ('scalar', (),
    'f32'); memrefs -> ('memref', shape, elem, workgroup)."""
    m = re.match(r"vector<([\dx]+)x(\w+)>", t)
    if m:
        return ("vector", tuple(int(d) for d in m.group(1).split("x")),
                m.group(2))
    m = re.match(r"memref<(?:([\dx]+)x)?(\w+)(, #gpu.address_space<(\w+)>)?>",
                 t)
    if m:
        shape = tuple(int(d) for d in m.group(1).split("x")) if m.group(1) \
            else ()
        return ("memref", shape, m.group(2), m.group(4) == "workgroup")
    return ("scalar", (), t)


class Buffer:
    """A memref: raw bytes (global: one copy; workgroup: one per CTA)."""

    def __init__(self, shape, elem, data=None, ctas=None):
        self.shape, self.elem = shape, elem
        self.dtype = np.dtype(elem_dtype(elem))
        n = int(np.prod(shape)) if shape else 1
        if ctas is not None:
            self.bytes = np.zeros((ctas, n * self.dtype.itemsize), np.uint8)
        else:
            self.bytes = np.zeros(n * self.dtype.itemsize, np.uint8) \
                if data is None else data
        self.per_cta = ctas is not None
        # Byte offset in its CTA's shared memory (views of dynamic shared
        # memory; shared-memory bank statistics only).
        self.base = 0

    def view(self, offset, shape, elem):
        """memref.view: a typed view at byte `offset` sharing the bytes."""
        v = Buffer(shape, elem, data=np.zeros(0, np.uint8))
        size = (int(np.prod(shape)) if shape else 1) * v.dtype.itemsize
        total = self.bytes.shape[-1]
        assert 0 <= offset and offset + size <= total, \
            f"view [{offset}, {offset + size}) outside {total} bytes"
        v.bytes = self.bytes[..., offset:offset + size]
        v.per_cta = self.per_cta
        v.base = self.base + offset
        return v

    def linear(self, idx):
        lin = np.zeros_like(idx[0]) if idx else None
        for d, i in enumerate(idx):
            lin = lin * np.uint64(self.shape[d]) + i
        return lin if idx else None


# ---------------------------------------------------------------------------
# Execution
# ---------------------------------------------------------------------------

_CMPI = ["eq", "ne", "slt", "sle", "sgt", "sge", "ult", "ule", "ugt", "uge"]
_CMPF = ["false", "oeq", "ogt", "oge", "olt", "ole", "one", "ord", "ueq",
         "ugt", "uge", "ult", "ule", "une", "uno", "true"]


def _float_const(text, dtype):
    text = text.strip()
    if text.startswith("0x"):
        bits = int(text, 16)
        return np.array([bits], dtype={np.float32: np.uint32,
                                       np.float64: np.uint64}[dtype]
                        ).view(dtype)[0]
    return dtype(float(text))


def _convert_float(x, src, dst):
    """arith.extf / arith.truncf: exact widening or IEEE round to nearest
    even (bf16 values are carried as their 16 bits)."""
    if src == "bf16":
        x = (x.astype(np.uint32) << 16).view(np.float32)
        src = "f32"
    if dst == "bf16":
        assert src == "f32"
        bits = x.view(np.uint32)
        lsb = (bits >> 16) & 1
        r = ((bits + np.uint32(0x7FFF) + lsb) >> 16).astype(np.uint16)
        nan = ((bits >> 16) | 0x40).astype(np.uint16)
        return np.where(np.isnan(x), nan, r)
    return x.astype(_FLOAT[dst])


# Dynamic shared memory when the launch's size is not given: the most an
# sm_90 CTA can have.
DEFAULT_SHARED_BYTES = 228 * 1024

# With COUNT_SHARED set, every Launch counts its shared-memory traffic in
# Launch.stats (count_shared, count_wgmma_operand): a diagnostic of the
# kernel's access pattern (bench/shared_traffic.py), not of its values.
COUNT_SHARED = False


def shared_wavefronts(warp, lane, addr, nbytes):
    """Wavefronts of one shared-memory request of `nbytes` per thread at
    byte addresses `addr` by the active threads (warp and lane ids): a
    warp's request is split into phases of 32 / 16 / 8 lanes for accesses
    of <= 4 / 8 / 16 bytes (128 bytes per phase); within a phase each of
    the 32 4-byte banks serves one distinct word per wavefront (threads
    reading the same word share it). Returns (wavefronts, phases)."""
    if len(addr) == 0:
        return 0, 0
    per_phase = 32 if nbytes <= 4 else (16 if nbytes == 8 else 8)
    group = warp.astype(np.int64) * 4 + lane.astype(np.int64) // per_phase
    nwords = max(1, nbytes // 4)
    words = (addr.astype(np.int64) // 4)[:, None] + np.arange(nwords)[None, :]
    groups = np.repeat(group, nwords)
    words = words.reshape(-1)
    pairs = np.unique(np.stack([groups, words], axis=1), axis=0)
    banks = np.stack([pairs[:, 0], pairs[:, 1] % 32], axis=1)
    keys, per_bank = np.unique(banks, axis=0, return_counts=True)
    phase_ids, inverse = np.unique(keys[:, 0], return_inverse=True)
    worst = np.zeros(len(phase_ids), np.int64)
    np.maximum.at(worst, inverse, per_bank)
    return int(worst.sum()), len(phase_ids)


class Launch:
    def __init__(self, func, grid, block, buffers, shared_bytes=None):
        """grid: CTA count (1-D) or (x[, y[, z]]); CTA c is block
        (c % x, c / x % y, c / (x y)). shared_bytes: the size of the
        dynamic shared memory (DEFAULT_SHARED_BYTES when None)."""
        dims = tuple(grid) if isinstance(grid, (tuple, list)) else (grid,)
        self.grid_dims = dims + (1,) * (3 - len(dims))
        self.ctas = int(np.prod(self.grid_dims))
        self.func, self.grid, self.block = func, self.ctas, block
        self.shared_bytes = shared_bytes
        self.dynamic_shared = None
        self.n = self.ctas * block
        self.gid = np.arange(self.n, dtype=np.uint64)
        self.env = {}
        self.stats = {} if COUNT_SHARED else None
        args, _ = func.regions[0]
        wg = [a for a in args if "workgroup" in a[1]]
        for (name, _), buf in zip([a for a in args if a not in wg], buffers):
            self.env[name] = buf
        for name, t in wg:
            _, shape, elem, _ = parse_type(t)
            self.env[name] = Buffer(shape, elem, ctas=self.ctas)

    def run(self):
        self.block_ops(self.func.regions[0][1], np.ones(self.n, bool))

    def val(self, name):
        return self.env[name]

    def set(self, op, values):
        for r, v in zip(op.results, values):
            self.env[r] = v

    def block_ops(self, ops, mask):
        for op in ops:
            if op.name in ("gpu.return", "scf.yield"):
                return [self.val(o) for o in op.operands]
            self.exec(op, mask)
        return []

    def count_shared(self, kind, buf, offsets, nbytes, mask):
        """With COUNT_SHARED: one request of `kind` ("ld", "st",
        "cp.async") of `nbytes` per thread to shared buffer `buf` into
        self.stats["kind.bBITS"]: requests (warps), bytes, wavefronts and
        the conflict-free minimum."""
        if self.stats is None or not buf.per_cta:
            return
        active = np.asarray(mask, bool)
        gid = self.gid[active].astype(np.int64)
        warp, lane = gid // 32, gid % 32
        addr = buf.base + np.asarray(offsets, np.int64)[active]
        waves, phases = shared_wavefronts(warp, lane, addr, nbytes)
        minimum = max(phases, -(-len(addr) * nbytes // 128))
        st = self.stats.setdefault(f"{kind}.b{8 * nbytes}",
                                   dict(requests=0, bytes=0, wavefronts=0,
                                        ideal=0))
        st["requests"] += len(np.unique(warp))
        st["bytes"] += len(addr) * nbytes
        st["wavefronts"] += waves
        st["ideal"] += minimum

    def count_wgmma_operand(self, rows, k_elems, mask):
        """With COUNT_SHARED: a wgmma operand of rows x k_elems bf16 read
        from shared memory by each active warp group (the swizzled layouts
        are conflict-free: 128 bytes per wavefront)."""
        if self.stats is None:
            return
        groups = int(np.asarray(mask, bool).reshape(-1, 128).any(1).sum())
        nbytes = groups * rows * k_elems * 2
        st = self.stats.setdefault("wgmma", dict(requests=0, bytes=0,
                                                 wavefronts=0, ideal=0))
        st["requests"] += groups
        st["bytes"] += nbytes
        st["wavefronts"] += nbytes // 128
        st["ideal"] += nbytes // 128

    def address(self, buf, idx):
        lin = buf.linear([self.val(i) for i in idx])
        if lin is None:
            lin = np.zeros(self.n, np.uint64)
        return lin.astype(np.int64) * buf.dtype.itemsize

    def gather(self, buf, offsets, nbytes, mask=None):
        # Threads outside the mask may compute any address (a loop
        # iteration past their bound): they read offset 0.
        if mask is not None:
            offsets = np.where(mask, offsets, 0)
        idx = offsets[:, None] + np.arange(nbytes)[None, :]
        if buf.per_cta:
            cta = (self.gid // np.uint64(self.block)).astype(np.int64)
            return buf.bytes[cta[:, None], idx]
        return buf.bytes[idx]

    def scatter(self, buf, offsets, data, mask):
        idx = offsets[mask][:, None] + np.arange(data.shape[1])[None, :]
        if buf.per_cta:
            cta = (self.gid // np.uint64(self.block)).astype(np.int64)[mask]
            buf.bytes[cta[:, None], idx] = data[mask]
        else:
            buf.bytes[idx] = data[mask]

    def exec(self, op, mask):  # noqa: C901 (one branch per op)
        name, ins = op.name, [self.val(o) for o in op.operands]
        tout = op.types_out[0] if op.types_out else None
        with np.errstate(all="ignore"):
            if name == "arith.constant":
                kind, shape, elem = parse_type(tout)
                v = op.prop("value")
                v = v.rsplit(" : ", 1)[0] if " : " in v else v
                if kind == "vector":
                    m = re.fullmatch(r"dense<([^\[\]<>]+)>", v)
                    assert m, f"only splat vector constants: {v}"
                    v = m.group(1)
                if elem in _FLOAT:
                    x = _float_const(v, _FLOAT[elem])
                elif elem == "i1":
                    x = v == "true"
                else:
                    x = np.array(int(v), dtype=np.int64).astype(
                        _SIGNED[elem_dtype(elem)]).view(elem_dtype(elem))
                self.set(op, [np.full((self.n,) + shape, x,
                                      dtype=elem_dtype(elem))])
            elif name == "gpu.thread_id":
                assert "dim x" in op.props, "1-D blocks only"
                self.set(op, [self.gid % np.uint64(self.block)])
            elif name == "gpu.grid_dim":
                dim = re.search(r"dim ([xyz])", op.props).group(1)
                self.set(op, [np.full(self.n, self.grid_dims["xyz".index(dim)],
                                      np.uint64)])
            elif name == "nvvm.griddepcontrol":
                # fp4-gpu-dependent-launch: one launch at a time, nothing
                # to wait for.
                pass
            elif name == "memref.extract_aligned_pointer_as_index":
                # Only fp4-gpu-dependent-launch's prefetch addresses use
                # it: buffer i at (i + 1) << 40, so that nvvm.prefetch can
                # check that each address lies inside its buffer.
                buf = ins[0]
                if not hasattr(self, "bases"):
                    self.bases = []
                if not any(b is buf for b in self.bases):
                    self.bases.append(buf)
                i = next(j for j, b in enumerate(self.bases) if b is buf)
                self.set(op, [np.full(self.n, np.uint64(i + 1) << np.uint64(40),
                                      np.uint64)])
            elif name == "llvm.inttoptr":
                self.set(op, [ins[0]])
            elif name == "nvvm.prefetch":
                # A cache hint (no effect on values), but its address must
                # be inside the buffer it was derived from.
                addr = ins[0][mask].astype(np.uint64)
                if addr.size:
                    i = (addr >> np.uint64(40)).astype(np.int64) - 1
                    off = addr & np.uint64((1 << 40) - 1)
                    sizes = np.array([b.bytes.shape[-1] for b in self.bases],
                                     np.uint64)
                    assert (i >= 0).all() and (i < len(sizes)).all() and \
                        (off < sizes[i]).all(), \
                        "nvvm.prefetch outside its buffer"
                self.prefetched = getattr(self, "prefetched", 0) + addr.size
            elif name == "gpu.block_id":
                cta = self.gid // np.uint64(self.block)
                gx, gy, _ = (np.uint64(d) for d in self.grid_dims)
                dim = re.search(r"dim ([xyz])", op.props).group(1)
                self.set(op, [{"x": cta % gx, "y": cta // gx % gy,
                               "z": cta // (gx * gy)}[dim]])
            elif name in ("gpu.barrier", "nvvm.cp.async.commit.group",
                          "nvvm.cp.async.wait.group"):
                # Lockstep: every thread (and every cp.async, which
                # completes at once) is done with the previous ops.
                pass
            elif name == "gpu.dynamic_shared_memory":
                if self.dynamic_shared is None:
                    size = self.shared_bytes if self.shared_bytes is not None \
                        else DEFAULT_SHARED_BYTES
                    self.dynamic_shared = Buffer((size,), "i8",
                                                 ctas=self.ctas)
                self.set(op, [self.dynamic_shared])
            elif name == "memref.view":
                src, shift = ins[0], ins[1]
                assert len(ins) == 2, "dynamic view sizes are not used"
                assert np.all(shift == shift[0]), "thread-dependent view"
                _, shape, e, _ = parse_type(tout)
                self.set(op, [src.view(int(shift[0]), shape, e)])
            elif name == "nvgpu.device_async_copy":
                self.set(op, [self.async_copy(op, ins, mask)])
            elif name == "nvgpu.ldmatrix":
                self.set(op, [self.ldmatrix(op, ins, mask)])
            elif name == "gpu.shuffle":
                v, off, width = ins
                assert np.all(width == 32)
                lane = (self.gid % np.uint64(32)).astype(np.int64)
                base = self.gid.astype(np.int64) - lane
                mode = re.search(r"shuffle_mode (\w+)", op.props).group(1)
                if mode == "xor":
                    src = base + (lane ^ off.astype(np.int64))
                else:
                    assert mode == "idx"
                    src = base + off.astype(np.int64)
                self.set(op, [v[src], np.ones(self.n, bool)])
            elif name in ("arith.addi", "arith.subi", "arith.muli",
                          "arith.andi", "arith.ori", "arith.xori",
                          "arith.divui", "arith.remui", "arith.minui",
                          "arith.ceildivui"):
                a, b = ins
                fn = {"arith.addi": np.add, "arith.subi": np.subtract,
                      "arith.muli": np.multiply, "arith.andi": np.bitwise_and,
                      "arith.ori": np.bitwise_or,
                      "arith.xori": np.bitwise_xor,
                      "arith.minui": np.minimum}.get(name)
                if fn is not None:
                    r = fn(a, b)
                elif name == "arith.divui":
                    r = a // np.where(b == 0, 1, b).astype(b.dtype)
                elif name == "arith.ceildivui":
                    d = np.where(b == 0, 1, b).astype(b.dtype)
                    r = a // d + (a % d != 0).astype(a.dtype)
                else:
                    r = a % np.where(b == 0, 1, b).astype(b.dtype)
                self.set(op, [r.astype(a.dtype)])
            elif name in ("arith.maxsi", "arith.minsi"):
                # Signed compare of the unsigned-carried bits.
                a, b = ins
                sa = a.view(_SIGNED[a.dtype.type])
                sb = b.view(_SIGNED[b.dtype.type])
                fn = np.maximum if name == "arith.maxsi" else np.minimum
                self.set(op, [fn(sa, sb).view(a.dtype)])
            elif name in ("arith.shli", "arith.shrui", "arith.shrsi"):
                a, b = ins
                bits = a.dtype.itemsize * 8
                assert np.all(b < bits), "shift amount out of range"
                if name == "arith.shli":
                    r = np.left_shift(a, b.astype(a.dtype))
                elif name == "arith.shrui":
                    r = np.right_shift(a, b.astype(a.dtype))
                else:
                    s = a.view(_SIGNED[a.dtype.type])
                    r = np.right_shift(s, b.astype(s.dtype)).view(a.dtype)
                self.set(op, [r.astype(a.dtype)])
            elif name == "arith.cmpi":
                a, b = ins
                p = _CMPI[int(op.prop("predicate").split(":")[0])]
                if p.startswith("s"):
                    a, b = a.view(_SIGNED[a.dtype.type]), b.view(
                        _SIGNED[b.dtype.type])
                    p = p[1:]
                elif p.startswith("u"):
                    p = p[1:]
                r = {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b,
                     "gt": a > b, "ge": a >= b}[p]
                self.set(op, [r])
            elif name == "arith.cmpf":
                a, b = ins
                p = _CMPF[int(op.prop("predicate").split(":")[0])]
                ordered = ~(np.isnan(a) | np.isnan(b))
                r = {"oeq": a == b, "ogt": a > b, "oge": a >= b, "olt": a < b,
                     "ole": a <= b, "one": (a != b) & ordered, "ord": ordered,
                     "uno": ~ordered}[p]
                self.set(op, [r])
            elif name == "arith.select":
                c, a, b = ins
                self.set(op, [np.where(c, a, b).astype(a.dtype)])
            elif name in ("arith.addf", "arith.subf", "arith.mulf",
                          "arith.divf"):
                assert "fastmath<none>" in op.props
                a, b = ins
                fn = {"arith.addf": np.add, "arith.subf": np.subtract,
                      "arith.mulf": np.multiply,
                      "arith.divf": np.divide}[name]
                if parse_type(tout)[2] == "bf16":
                    r = _convert_float(
                        fn(_convert_float(a, "bf16", "f32"),
                           _convert_float(b, "bf16", "f32")), "f32", "bf16")
                else:
                    r = fn(a, b).astype(a.dtype)
                self.set(op, [r])
            elif name == "arith.negf":
                self.set(op, [np.negative(ins[0])])
            elif name == "math.absf":
                self.set(op, [np.abs(ins[0])])
            elif name == "math.floor":
                self.set(op, [np.floor(ins[0])])
            elif name == "arith.bitcast":
                _, _, e = parse_type(tout)
                self.set(op, [ins[0].view(elem_dtype(e))])
            elif name in ("arith.extui", "arith.trunci", "arith.index_castui",
                          "arith.index_cast"):
                _, _, e = parse_type(tout)
                a = ins[0]
                if name == "arith.index_cast" and a.dtype != np.uint64:
                    a = a.view(_SIGNED[a.dtype.type]).astype(np.int64).view(
                        np.uint64)
                if a.dtype == np.bool_:
                    a = a.astype(np.uint8)
                self.set(op, [a.astype(elem_dtype(e))])
            elif name == "arith.sitofp":
                a = ins[0]
                self.set(op, [a.view(_SIGNED[a.dtype.type]).astype(
                    np.float32)])
            elif name == "arith.uitofp":
                # Exact for the kernels' small integers (f16 keys < 2048).
                _, _, e = parse_type(tout)
                assert e in ("f32", "f16"), f"uitofp to {e}"
                a = ins[0].astype(np.uint64)
                self.set(op, [a.astype(np.float64).astype(elem_dtype(e))])
            elif name == "arith.fptosi":
                a = np.where(np.isfinite(ins[0]), ins[0], 0)
                self.set(op, [a.astype(np.int64).astype(np.int32).view(
                    np.uint32)])
            elif name in ("arith.extf", "arith.truncf"):
                _, _, e = parse_type(tout)
                _, _, src = parse_type(op.types_in[0])
                self.set(op, [_convert_float(ins[0], src, e)])
            elif name == "vector.extract":
                pos = int(re.search(r"array<i64: (\d+)>", op.props).group(1))
                self.set(op, [ins[0][:, pos].copy()])
            elif name == "vector.from_elements":
                self.set(op, [np.stack(ins, axis=1)])
            elif name == "vector.bitcast":
                _, _, e = parse_type(tout)
                self.set(op, [np.ascontiguousarray(ins[0]).view(
                    elem_dtype(e))])
            elif name == "vector.load":
                buf = ins[0]
                _, shape, e = parse_type(tout)
                n = shape[0] * buf.dtype.itemsize
                off = self.address(buf, op.operands[1:])
                self.count_shared("ld", buf, off, n, mask)
                self.set(op, [self.gather(buf, off, n, mask).view(buf.dtype)])
            elif name == "vector.store":
                buf = ins[1]
                off = self.address(buf, op.operands[2:])
                data = np.ascontiguousarray(ins[0]).view(np.uint8)
                self.count_shared("st", buf, off, data.shape[1], mask)
                self.scatter(buf, off, data, mask)
            elif name == "memref.load":
                buf = ins[0]
                off = self.address(buf, op.operands[1:])
                self.count_shared("ld", buf, off, buf.dtype.itemsize, mask)
                v = self.gather(buf, off, buf.dtype.itemsize,
                                mask).view(buf.dtype)
                self.set(op, [v[:, 0].copy()])
            elif name == "memref.store":
                buf = ins[1]
                off = self.address(buf, op.operands[2:])
                v = ins[0]
                data = np.ascontiguousarray(
                    v.astype(buf.dtype) if v.dtype != buf.dtype and
                    v.dtype.itemsize != buf.dtype.itemsize else
                    v.view(buf.dtype))[:, None].view(np.uint8)
                self.count_shared("st", buf, off, buf.dtype.itemsize, mask)
                self.scatter(buf, off, data, mask)
            elif name == "memref.atomic_rmw":
                assert re.search(r"kind = 7 : i64", op.props), "only maxu"
                buf = ins[1]
                off = self.address(buf, op.operands[2:])
                words = buf.bytes.view(np.uint32)
                np.maximum.at(words, (off[mask] // 4), ins[0][mask])
                self.set(op, [ins[0]])
            elif name == "llvm.bitcast":
                kind, shape, e = parse_type(tout)
                r = np.ascontiguousarray(ins[0]).view(elem_dtype(e))
                self.set(op, [r.reshape((self.n,) + shape)])
            elif name == "memref.collapse_shape":
                buf = ins[0]
                assert not buf.per_cta
                _, shape, e, _ = parse_type(tout)
                self.set(op, [Buffer(shape, e, data=buf.bytes)])
            elif name == "llvm.inline_asm":
                if op.results and _WGMMA_RS.search(op.props):
                    self.set(op, [self.inline_wgmma_rs(op, ins, mask)])
                elif op.results and _WGMMA_SP_RS.search(op.props):
                    self.set(op, [self.inline_wgmma_sp_rs(op, ins, mask)])
                elif op.results:
                    self.set(op, [self.inline_wgmma_sp(op, ins, mask)])
                else:
                    assert re.search(r'asm_string = ""', op.props), \
                        "only empty asm barriers and wgmma(.sp) are modelled"
            elif name == "llvm.extractvalue":
                pos = int(re.search(r"array<i64: (\d+)>", op.props).group(1))
                self.set(op, [ins[0][pos]])
            elif name == "llvm.mlir.undef":
                # Structs (the wgmma accumulator) are lists of fields.
                m = re.fullmatch(r"!llvm\.struct<\((.*)\)>", tout)
                assert m, f"undef of {tout}"
                fields = [f.strip() for f in m.group(1).split(",")]
                self.set(op, [[np.zeros(self.n, elem_dtype(f))
                               for f in fields]])
            elif name == "llvm.insertvalue":
                pos = int(re.search(r"array<i64: (\d+)>", op.props).group(1))
                fields = list(ins[0])
                fields[pos] = ins[1]
                self.set(op, [fields])
            elif name == "memref.extract_aligned_pointer_as_index":
                # The shared window address of dynamic shared memory: 0,
                # so that descriptor addresses are offsets into it.
                assert ins[0] is self.dynamic_shared, \
                    "only the dynamic shared memory's address is modelled"
                self.set(op, [np.zeros(self.n, np.uint64)])
            elif name == "nvvm.barrier":
                # A named barrier (bar.sync id, threads): lockstep, like
                # gpu.barrier; only the plain form is modelled.
                assert not op.results, "barrier reductions are not modelled"
            elif name in ("nvvm.fence.proxy", "nvvm.wgmma.fence.aligned",
                          "nvvm.wgmma.commit.group.sync.aligned",
                          "nvvm.wgmma.wait.group.sync.aligned"):
                # Lockstep: a wgmma completes when it is issued, after every
                # thread's earlier stores.
                pass
            elif name == "llvm.intr.trap":
                assert not mask.any(), "a thread reached llvm.intr.trap"
            elif name == "nvvm.wgmma.mma_async":
                self.set(op, [self.wgmma(op, ins, mask)])
            elif name == "nvvm.prmt":
                assert "permute_mode<default>" in op.props
                self.set(op, [_prmt(*ins)])
            elif name == "nvvm.mma.sync":
                self.set(op, [self.mma_sync(op, ins)])
            elif name == "nvvm.mma.sp.sync":
                self.set(op, [self.mma_sp_sync(op, ins)])
            elif name == "scf.if":
                cond = ins[0]
                then_vals = self.block_ops(op.regions[0][1], mask & cond)
                else_vals = self.block_ops(op.regions[1][1], mask & ~cond) \
                    if len(op.regions) > 1 and op.regions[1][1] else []
                self.set(op, [np.where(cond, t, e).astype(t.dtype)
                              for t, e in zip(then_vals, else_vals)])
            elif name == "scf.for":
                lb, ub, step = ins[:3]
                carried = ins[3:]
                args, body = op.regions[0]
                if np.all(lb == lb[0]) and np.all(ub == ub[0]) and \
                        np.all(step == step[0]):
                    for i in range(int(lb[0]), int(ub[0]), int(step[0])):
                        self.env[args[0][0]] = np.full(self.n, i, np.uint64)
                        for (a, _), v in zip(args[1:], carried):
                            self.env[a] = v
                        carried = self.block_ops(body, mask)
                else:
                    # Each thread its own range: iterate while any active
                    # thread is inside its bounds, keeping the others'
                    # carried values.
                    iv = lb.copy()
                    while True:
                        active = mask & (iv < ub)
                        if not active.any():
                            break
                        self.env[args[0][0]] = iv
                        for (a, _), v in zip(args[1:], carried):
                            self.env[a] = v
                        out = self.block_ops(body, active)
                        carried = [select_threads(active, o, c)
                                   for o, c in zip(out, carried)]
                        iv = iv + step
                self.set(op, carried)
            else:
                raise NotImplementedError(name)


def select_threads(active, new, old):
    """Per thread `new` where `active`, else `old`: arrays of any rank with
    threads first, or the fields of a struct (a list, e.g. a wgmma
    accumulator carried by a loop)."""
    if isinstance(new, list):
        return [select_threads(active, n, o) for n, o in zip(new, old)]
    return np.where(active.reshape((-1,) + (1,) * (new.ndim - 1)),
                    new, old).astype(new.dtype)


def _prmt(a, b, sel):
    """PTX prmt.b32 (default mode) per thread: byte i of the result is
    byte sel[4i..4i+2] of {b, a}, or its sign replicated when sel bit
    4i + 3 is set."""
    n = len(a)
    pool = np.stack([(a >> np.uint32(8 * i)) & np.uint32(0xFF)
                     for i in range(4)] +
                    [(b >> np.uint32(8 * i)) & np.uint32(0xFF)
                     for i in range(4)], axis=1)
    r = np.zeros(n, np.uint32)
    rows = np.arange(n)
    for i in range(4):
        nib = (sel >> np.uint32(4 * i)) & np.uint32(0xF)
        byte = pool[rows, (nib & np.uint32(7)).astype(np.int64)]
        sign = np.where(byte & np.uint32(0x80), np.uint32(0xFF), np.uint32(0))
        byte = np.where(nib & np.uint32(8), sign, byte)
        r |= byte.astype(np.uint32) << np.uint32(8 * i)
    return r


def _bf16_halves(words):
    """(low, high) bf16 halves of i32 words as f64."""
    lo = (words & np.uint32(0xFFFF)).astype(np.uint32) << np.uint32(16)
    hi = words & np.uint32(0xFFFF0000)
    return (lo.view(np.float32).astype(np.float64),
            hi.astype(np.uint32).view(np.float32).astype(np.float64))


def _mma_sync(self, op, ins):
    """D = A B + C of nvvm.mma.sync m16n8k16 bf16 (row.col, f32) per warp,
    from the PTX fragment layout: lane (g = lane / 4, t = lane % 4) holds
    A {row g, k 2t..2t+1}, {g + 8, 2t..}, {g, 2t + 8..}, {g + 8, 2t + 8..},
    B {k 2t..2t+1, col g}, {k 2t + 8..2t + 9, col g} and C/D {g, 2t},
    {g, 2t + 1}, {g + 8, 2t}, {g + 8, 2t + 1}."""
    assert "m = 16, n = 8, k = 16" in op.props and \
        "mma_type<bf16>" in op.props and "mma_layout<row>" in op.props
    assert self.n % 32 == 0
    warps = self.n // 32
    lane = np.arange(32)
    g, t = lane // 4, lane % 4
    A = np.zeros((warps, 16, 16))
    B = np.zeros((warps, 16, 8))
    for r, (row, col) in enumerate([(g, 2 * t), (g + 8, 2 * t),
                                    (g, 2 * t + 8), (g + 8, 2 * t + 8)]):
        lo, hi = _bf16_halves(ins[r].reshape(warps, 32))
        A[:, row, col], A[:, row, col + 1] = lo, hi
    for r, k0 in enumerate([2 * t, 2 * t + 8]):
        lo, hi = _bf16_halves(ins[4 + r].reshape(warps, 32))
        B[:, k0, g], B[:, k0 + 1, g] = lo, hi
    D = A @ B
    out = []
    for r, (row, col) in enumerate([(g, 2 * t), (g, 2 * t + 1),
                                    (g + 8, 2 * t), (g + 8, 2 * t + 1)]):
        c = ins[6 + r].reshape(warps, 32).astype(np.float64)
        out.append((D[:, row, col] + c).astype(np.float32).reshape(-1))
    return out


Launch.mma_sync = _mma_sync


def _mma_sp_sync(self, op, ins):
    """D = A B + C of nvvm.mma.sp.sync m16n8k32 bf16 (row.col, f32, ordered
    metadata, sparsity selector 0) per warp. A is the 16 x 16 compressed
    tile in the dense m16n8k16 A layout; compressed columns 2c, 2c + 1 are
    the kept values of logical group c (k 4c..4c+3). Metadata: lane (g, t)
    with t < 2 holds, in bits 4i..4i+3, the positions (2 bits each, the
    lower first) of group 4t + i of row g, and in bits 16 + 4i.. those of
    row g + 8. B: register r of lane (g, t) holds k = 2t + 8r, 2t + 8r + 1
    of column g. The layout was checked on the H200
    (bench/probes/mma_sp_layout.cu); a pair that is not strictly ascending
    is undefined on the hardware and an error here."""
    assert "m = 16, n = 8, k = 32" in op.props and \
        "mma_type<bf16>" in op.props and "orderedMetadata" in op.props, \
        op.props
    a_regs, b_regs, c_regs = ins[0:4], ins[4:8], ins[8:12]
    meta, selector = ins[12], ins[13]
    assert np.all(selector == 0), "sparsity selector 0 only"
    assert self.n % 32 == 0
    warps = self.n // 32
    lane = np.arange(32)
    g, t = lane // 4, lane % 4
    Ac = np.zeros((warps, 16, 16))
    for r, (row, col) in enumerate([(g, 2 * t), (g + 8, 2 * t),
                                    (g, 2 * t + 8), (g + 8, 2 * t + 8)]):
        lo, hi = _bf16_halves(a_regs[r].reshape(warps, 32))
        Ac[:, row, col], Ac[:, row, col + 1] = lo, hi
    meta = meta.reshape(warps, 32).astype(np.uint32)
    A = np.zeros((warps, 16, 32))
    for w in range(warps):
        for l in range(8):  # lanes t = 0, 1 of each group of 4
            for tt in range(2):
                word = int(meta[w, 4 * l + tt])
                for half, row in ((0, l), (1, l + 8)):
                    for i in range(4):
                        nib = (word >> (16 * half + 4 * i)) & 0xF
                        lo, hi = nib & 3, nib >> 2
                        assert lo < hi, f"mma.sp metadata nibble {nib:#x}"
                        grp = 4 * tt + i
                        A[w, row, 4 * grp + lo] = Ac[w, row, 2 * grp]
                        A[w, row, 4 * grp + hi] = Ac[w, row, 2 * grp + 1]
    B = np.zeros((warps, 32, 8))
    for r in range(4):
        lo, hi = _bf16_halves(b_regs[r].reshape(warps, 32))
        k0 = 2 * t + 8 * r
        B[:, k0, g], B[:, k0 + 1, g] = lo, hi
    D = A @ B
    out = []
    for r, (row, col) in enumerate([(g, 2 * t), (g, 2 * t + 1),
                                    (g + 8, 2 * t), (g + 8, 2 * t + 1)]):
        c = c_regs[r].reshape(warps, 32).astype(np.float64)
        out.append((D[:, row, col] + c).astype(np.float32).reshape(-1))
    return out


Launch.mma_sp_sync = _mma_sp_sync


def _wgmma_operand(desc, rows, k_elems=16):
    """Addresses of the rows x k_elems bf16 operand (one per warp group) a
    wgmma descriptor addresses in dynamic shared memory: K-major, 8-row
    groups `stride` bytes apart, row r of a group one swizzle width after
    row r - 1, element k at 2 k. Swizzle mode 1 (128 bytes): the hardware
    XORs address bits 4..6 with bits 7..9; mode 2 (64 bytes): bits 4..5
    with bits 7..8 (every row's k_elems elements within its width)."""
    desc = desc.astype(np.uint64)
    mode = desc >> np.uint64(62)
    assert np.all(mode == mode[0]) and int(mode[0]) in (1, 2), \
        "128- or 64-byte swizzle only"
    width, bits = (128, 7) if int(mode[0]) == 1 else (64, 3)
    assert np.all(((desc >> np.uint64(49)) & np.uint64(7)) == 0), \
        "base offset 0 only"
    start = ((desc & np.uint64(0x3FFF)) << np.uint64(4)).astype(np.int64)
    stride = (((desc >> np.uint64(32)) & np.uint64(0x3FFF)) <<
              np.uint64(4)).astype(np.int64)
    assert np.all(start % width + 2 * k_elems <= width), \
        "a row's slice crosses its swizzle width"
    r = np.arange(rows)[None, :, None]
    k = np.arange(k_elems)[None, None, :]
    addr = start[:, None, None] + (r // 8) * stride[:, None, None] + \
        (r % 8) * width + 2 * k
    addr = addr ^ (((addr >> 7) & bits) << 4)
    return addr


def _wgmma(self, op, ins, mask):
    """D = A B^T + D of nvvm.wgmma.mma_async m64nNk16 (bf16 -> f32, A row-
    and B col-major, i.e. both K-major in shared memory) per warp group of
    4 consecutive warps, operands from their descriptors (_wgmma_operand),
    computed in f64 with one f32 rounding of D + sum (the tensor cores sum
    in their own order: tests compare with a tolerance). Thread t of the
    group (warp w = t / 32, lane (g, q)) holds D[4 j + e] = row 16 w + g
    (+ 8 for e >= 2), column 8 j + 2 q + (e % 2)."""
    props = op.props
    m = re.search(r"m = (\d+), n = (\d+), k = (\d+)", props)
    M, N, K = (int(x) for x in m.groups())
    assert (M, K) == (64, 16), props
    assert props.count("wgmma_type<bf16>") == 2 and \
        "wgmma_type<f32>" in props, props
    assert "wgmma_scale_out<one>" in props and \
        "wgmma_scale_in<neg>" not in props, props
    assert "mma_layout<row>" in props and "mma_layout<col>" in props, props
    acc, desc_a, desc_b = ins
    assert len(acc) == N // 2
    read = self.warpgroup_operands(desc_a, desc_b, mask)
    A = read(0, 64, 16)           # [groups, 64, 16]
    B = read(1, N, 16)            # [groups, N, 16]
    self.count_wgmma_operand(64, 16, mask)
    self.count_wgmma_operand(N, 16, mask)
    return _warpgroup_result(A @ B.transpose(0, 2, 1), acc, mask)


Launch.wgmma = _wgmma


def _warpgroup_operands(self, desc_a, desc_b, mask):
    """Checks a warp-group MMA's collective form (whole groups of 128
    threads, uniform descriptors) and returns read(which, rows, k_elems):
    the bf16 operand of descriptor `which` (0: A, 1: B) as f64 [groups,
    rows, k_elems] from each group's CTA's dynamic shared memory."""
    assert self.block % 128 == 0 and self.n % 128 == 0
    groups = self.n // 128
    gmask = mask.reshape(groups, 128)
    assert np.all(gmask.all(1) | ~gmask.any(1)), \
        "wgmma is warp-group collective: the whole group or none"
    descs = [d.reshape(groups, 128) for d in (desc_a, desc_b)]
    assert all(np.all(d == d[:, :1]) for d in descs), \
        "a warp group's descriptors must be uniform"
    cta = (np.arange(groups) * 128) // self.block
    smem = self.dynamic_shared.bytes

    def read(which, rows, k_elems):
        addr = _wgmma_operand(descs[which][:, 0], rows, k_elems)
        lo = smem[cta[:, None, None], addr].astype(np.uint32)
        hi = smem[cta[:, None, None], addr + 1].astype(np.uint32)
        bits = (lo | (hi << np.uint32(8))) << np.uint32(16)
        return bits.astype(np.uint32).view(np.float32).astype(np.float64)
    return read


Launch.warpgroup_operands = _warpgroup_operands


def _warpgroup_result(D, acc, mask):
    """D [groups, 64, N] (f64) + the accumulator fields, rounded once to
    f32: thread t of a group (warp w = t / 32, lane (g, q)) holds field
    4 j + e = row 16 w + g (+ 8 for e >= 2), column 8 j + 2 q + (e % 2)."""
    groups = D.shape[0]
    t = np.arange(128)
    w, g, q = t // 32, (t % 32) // 4, t % 4
    out = []
    for j in range(D.shape[2] // 8):
        for e in range(4):
            row = 16 * w + g + (8 if e >= 2 else 0)
            col = 8 * j + 2 * q + (e % 2)
            c = acc[4 * j + e].reshape(groups, 128).astype(np.float64)
            d = (D[:, row, col] + c).astype(np.float32).reshape(-1)
            out.append(np.where(mask, d, acc[4 * j + e]).astype(np.float32))
    return out


def _sparse_operand(meta, mask, sel, kept):
    """The logical [groups, 64, 32] A of a warp group's wgmma.sp m64nNk32
    from its metadata (per warp as mma.sp m16n8k32's: under selector
    `sel` lanes q = 2 sel, 2 sel + 1 of quad g supply it, lane q % 2 = 0
    groups 0..3 and 1 groups 4..7, row g in bits 4 i.., row g + 8 in
    16 + 4 i.., each nibble lo | hi << 2 with lo < hi) and `kept(group,
    supplying thread, row, c)`, the two kept values of logical group c (k
    4 c..4 c + 3) of the row, lower position first."""
    groups = np.asarray(mask).size // 128
    gmask = np.asarray(mask).reshape(groups, 128)
    words = np.asarray(meta).astype(np.uint32).reshape(groups, 128)
    A = np.zeros((groups, 64, 32))
    for gi in range(groups):
        if not gmask[gi].any():
            continue
        for w in range(4):
            for g in range(8):
                for tt in range(2):
                    t = 32 * w + 4 * g + 2 * sel + tt
                    word = int(words[gi, t])
                    for half in range(2):
                        row = 16 * w + g + 8 * half
                        for i in range(4):
                            nib = (word >> (16 * half + 4 * i)) & 0xF
                            lo, hi = nib & 3, nib >> 2
                            assert lo < hi, \
                                f"wgmma.sp metadata nibble {nib:#x}"
                            c = 4 * tt + i
                            A[gi, row, 4 * c + lo], A[gi, row, 4 * c + hi] = \
                                kept(gi, t, row, c)
    return A


_WGMMA_SP = re.compile(
    r'asm_string = "wgmma\.mma_async\.sp\.sync\.aligned\.m64n(\d+)k32\.'
    r'f32\.bf16\.bf16 \{([^}]*)\}, \$(\d+), \$(\d+), \$(\d+), '
    r'0, 1, 1, 1, 0, 0;"')


def _inline_wgmma_sp(self, op, ins, mask):
    """The inline PTX wgmma.mma_async.sp m64nNk32 bf16 -> f32 of
    buildWgmmaSparseBF16: D = A B^T + D per warp group, A 2:4-sparse
    along K. Its packed 64 x 16 values come from descA (compressed column
    2c, 2c + 1: the kept values of logical group c, k 4c..4c+3, by
    ascending position), B's 32 columns from descB; the metadata per warp
    as mma.sp m16n8k32's under selector 0 (warp w of the group for rows
    16 w..16 w + 15: lane (g, t) with t < 2 holds in bits 4i.. the two
    positions of group 4t + i of row g, in bits 16 + 4i.. of row g + 8;
    PTX ISA, sparse wgmma m64nNk32 metadata, the mma.sp m16n8k32 figure).
    Computed in f64, one f32 rounding; D's layout as _wgmma's."""
    m = _WGMMA_SP.search(op.props)
    assert m, f"unmodelled inline asm: {op.props[:200]}"
    N = int(m.group(1))
    regs = N // 2
    assert [r.strip() for r in m.group(2).split(",")] == \
        [f"${i}" for i in range(regs)], "D must be $0..$N/2-1"
    assert [int(m.group(i)) for i in (3, 4, 5)] == \
        [2 * regs, 2 * regs + 1, 2 * regs + 2], "descA, descB, metadata"
    cons = re.search(r'constraints = "([^"]*)"', op.props).group(1)
    assert cons.split(",") == ["=f"] * regs + [str(i) for i in range(regs)] \
        + ["l", "l", "r"], cons
    assert "has_side_effects" in op.props
    acc, desc_a, desc_b, meta = ins[:regs], ins[regs], ins[regs + 1], \
        ins[regs + 2]
    read = self.warpgroup_operands(desc_a, desc_b, mask)
    Ac = read(0, 64, 16)          # [groups, 64, 16] packed
    B = read(1, N, 32)            # [groups, N, 32]
    self.count_wgmma_operand(64, 16, mask)
    self.count_wgmma_operand(N, 32, mask)
    A = _sparse_operand(meta, mask, 0,
                        lambda gi, t, row, c: (Ac[gi, row, 2 * c],
                                               Ac[gi, row, 2 * c + 1]))
    return _warpgroup_result(A @ B.transpose(0, 2, 1), acc, mask)


Launch.inline_wgmma_sp = _inline_wgmma_sp


_WGMMA_RS = re.compile(
    r'asm_string = "wgmma\.mma_async\.sync\.aligned\.m64n(\d+)k16\.'
    r'f32\.bf16\.bf16 \{([^}]*)\}, \{\$(\d+), \$(\d+), \$(\d+), '
    r'\$(\d+)\}, \$(\d+), 1, 1, 1, 0;"')


def _inline_wgmma_rs(self, op, ins, mask):
    """The inline PTX wgmma.mma_async m64nNk16 bf16 -> f32 with A from
    registers (buildWgmmaRegisterABF16): D = A B^T + D per warp group. A's
    four bf16-pair registers per thread in the mma.sync m16n8k16 A layout
    of each warp's 16 rows (warp w of the group: rows 16 w + g (regs 0, 2)
    and 16 w + g + 8 (regs 1, 3), k 2q, 2q + 1 (regs 0, 1) and 2q + 8,
    2q + 9 (regs 2, 3), low half first), B's N x 16 from descB. Computed in
    f64, one f32 rounding; D's layout as _wgmma's."""
    m = _WGMMA_RS.search(op.props)
    N = int(m.group(1))
    regs = N // 2
    assert [r.strip() for r in m.group(2).split(",")] == \
        [f"${i}" for i in range(regs)], "D must be $0..$N/2-1"
    assert [int(m.group(i)) for i in range(3, 8)] == \
        list(range(2 * regs, 2 * regs + 5)), "A registers, then descB"
    cons = re.search(r'constraints = "([^"]*)"', op.props).group(1)
    assert cons.split(",") == ["=f"] * regs + [str(i) for i in range(regs)] \
        + ["r", "r", "r", "r", "l"], cons
    assert "has_side_effects" in op.props
    acc = ins[:regs]
    a_regs = [np.asarray(x).astype(np.uint32) for x in
              ins[regs:regs + 4]]
    desc_b = ins[regs + 4]
    read = self.warpgroup_operands(desc_b, desc_b, mask)
    B = read(1, N, 16)            # [groups, N, 16]
    self.count_wgmma_operand(N, 16, mask)
    groups = B.shape[0]
    t = np.arange(128)
    w, g, q = t // 32, (t % 32) // 4, t % 4
    A = np.zeros((groups, 64, 16))

    def halves(v):
        v = v.reshape(groups, 128)
        lo = ((v & np.uint32(0xFFFF)) << np.uint32(16)).view(np.float32)
        hi = (v & np.uint32(0xFFFF0000)).view(np.float32)
        return lo.astype(np.float64), hi.astype(np.float64)
    for r, (dr, dk) in enumerate([(0, 0), (8, 0), (0, 8), (8, 8)]):
        lo, hi = halves(a_regs[r])
        row, col = 16 * w + g + dr, 2 * q + dk
        A[:, row, col] = lo
        A[:, row, col + 1] = hi
    return _warpgroup_result(A @ B.transpose(0, 2, 1), acc, mask)


Launch.inline_wgmma_rs = _inline_wgmma_rs


_WGMMA_SP_RS = re.compile(
    r'asm_string = "wgmma\.mma_async\.sp\.sync\.aligned\.m64n(\d+)k32\.'
    r'f32\.bf16\.bf16 \{([^}]*)\}, \{\$(\d+), \$(\d+), \$(\d+), '
    r'\$(\d+)\}, \$(\d+), \$(\d+), ([01]), 1, 1, 1, 0;"')


def _inline_wgmma_sp_rs(self, op, ins, mask):
    """The inline PTX wgmma.mma_async.sp m64nNk32 bf16 -> f32 with the
    packed A from registers (buildWgmmaSparseRegisterABF16): D = A B^T + D
    per warp group, A 2:4-sparse along K. A's four registers per thread in
    mma.sp m16n8k32's layout per warp (lane (g, q): registers 0, 1 the
    kept pair of group q of rows g and g + 8, registers 2, 3 of group
    q + 4; lower position in the low half), B's N x 32 from descB, the
    metadata as _inline_wgmma_sp's but supplied by lanes q = 2 s, 2 s + 1
    under selector s (lane q % 2 = 0: groups 0..3, 1: groups 4..7).
    Computed in f64, one f32 rounding; D's layout as _wgmma's."""
    m = _WGMMA_SP_RS.search(op.props)
    N = int(m.group(1))
    regs = N // 2
    sel = int(m.group(9))
    assert [r.strip() for r in m.group(2).split(",")] == \
        [f"${i}" for i in range(regs)], "D must be $0..$N/2-1"
    assert [int(m.group(i)) for i in range(3, 9)] == \
        list(range(2 * regs, 2 * regs + 6)), "A registers, descB, metadata"
    cons = re.search(r'constraints = "([^"]*)"', op.props).group(1)
    assert cons.split(",") == ["=f"] * regs + [str(i) for i in range(regs)] \
        + ["r", "r", "r", "r", "l", "r"], cons
    assert "has_side_effects" in op.props
    acc = ins[:regs]
    a_regs = [np.asarray(x).astype(np.uint32) for x in ins[regs:regs + 4]]
    desc_b, meta = ins[regs + 4], ins[regs + 5]
    read = self.warpgroup_operands(desc_b, desc_b, mask)
    B = read(1, N, 32)            # [groups, N, 32]
    self.count_wgmma_operand(N, 32, mask)
    groups = B.shape[0]
    vals = [np.asarray(r).reshape(groups, 128) for r in a_regs]

    def bf16(bits):
        return float(np.array([int(bits) << 16], dtype=np.uint32)
                     .view(np.float32)[0])

    def kept(gi, t, row, c):
        # Group c of the row: lane q = c % 4 of the row's quad, register
        # (row g or g + 8) + 2 (c // 4).
        reg = (row % 16) // 8 + 2 * (c // 4)
        v = int(vals[reg][gi, t - t % 4 + c % 4])
        return bf16(v & 0xFFFF), bf16(v >> 16)
    A = _sparse_operand(meta, mask, sel, kept)
    return _warpgroup_result(A @ B.transpose(0, 2, 1), acc, mask)


Launch.inline_wgmma_sp_rs = _inline_wgmma_sp_rs


def _segments(op, counts):
    """op.operands split by operandSegmentSizes."""
    sizes = re.search(r"operandSegmentSizes = array<i32: ([\d, ]+)>",
                      op.props).group(1)
    sizes = [int(s) for s in sizes.split(",")]
    assert len(sizes) == counts, (op.name, sizes)
    out, pos = [], 0
    for s in sizes:
        out.append(op.operands[pos:pos + s])
        pos += s
    return out


def _async_copy(self, op, ins, mask):
    """nvgpu.device_async_copy (cp.async): dstElements elements from
    src[srcIndices] to dst[dstIndices]; with srcElements, only that many
    are read and the rest of the destination chunk is zero-filled. Done at
    once (the wait before the reading barrier is a no-op in lockstep)."""
    dst_n, dst_idx, src_n, src_idx, count = _segments(op, 5)
    dst, src = self.val(dst_n[0]), self.val(src_n[0])
    assert dst.dtype == src.dtype, "cp.async copies like elements"
    elements = int(re.search(r"dstElements = (\d+)", op.props).group(1))
    size = dst.dtype.itemsize
    nbytes = elements * size
    assert nbytes in (4, 8, 16), f"cp.async of {nbytes} bytes"
    src_off = self.address(src, src_idx)
    dst_off = self.address(dst, dst_idx)
    if count:
        n_src = self.val(count[0]).astype(np.int64)
        assert np.all(n_src[mask] <= elements), "srcElements > dstElements"
        # A chunk read of nothing may point anywhere.
        src_off = np.where(n_src > 0, src_off, 0)
    data = self.gather(src, src_off, nbytes, mask)
    if count:
        keep = np.arange(nbytes)[None, :] < (n_src * size)[:, None]
        data = np.where(keep, data, 0).astype(np.uint8)
    self.count_shared("cp.async", dst, dst_off, nbytes, mask)
    self.scatter(dst, dst_off, data, mask)
    return np.zeros(self.n, np.uint8)  # the token


def _ldmatrix(self, op, ins, mask):
    """nvgpu.ldmatrix (x4, no transpose, 16-bit elements) per warp: lane
    8j + r gives the address of row r of 8x8 matrix j (8 contiguous
    elements); lane i gets, as row j of the vector<4x2x...> result, the
    elements (i / 4, 2 (i % 4)) and (i / 4, 2 (i % 4) + 1) of matrix j."""
    assert "numTiles = 4" in op.props and "transpose = false" in op.props, \
        op.props
    buf = ins[0]
    _, shape, _ = parse_type(op.types_out[0])
    assert shape == (4, 2) and buf.dtype.itemsize == 2, (shape, buf.dtype)
    assert self.n % 32 == 0
    warp_mask = mask.reshape(-1, 32)
    assert np.all(warp_mask.all(1) | ~warp_mask.any(1)), \
        "ldmatrix is warp-collective: the whole warp or none"
    rows = self.address(buf, op.operands[1:])  # byte address per lane
    # Lanes 8j..8j+7 address matrix j's 8 rows of 16 bytes: one phase each.
    self.count_shared("ld", buf, rows, 16, mask)
    lane = (self.gid % np.uint64(32)).astype(np.int64)
    base = self.gid.astype(np.int64) - lane
    regs = []
    for j in range(4):
        src_lane = base + 8 * j + lane // 4
        off = rows[src_lane] + 4 * (lane % 4)
        regs.append(self.gather(buf, off, 4, mask).view(buf.dtype))
    return np.stack(regs, axis=1)


Launch.async_copy = _async_copy
Launch.ldmatrix = _ldmatrix


def count_ops(op, name):
    """Number of ops called `name` nested in `op`."""
    return sum((o.name == name) + count_ops(o, name)
               for _, body in op.regions for o in body)


def run_kernel(func, grid, block, buffers, shared_bytes=None):
    """Runs `func` (a parsed gpu.func) on `buffers` (Buffer per argument);
    grid and shared_bytes as Launch takes them (a manifest launch's grid
    and shared_bytes)."""
    launch = Launch(func, grid, block, buffers, shared_bytes)
    launch.run()
    return launch
