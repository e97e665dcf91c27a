#!/usr/bin/env python3
"""Static report of recipe bench kernels (no GPU): compiles the
bench/gpu_recipes.py bench cases whose names contain one of the given
substrings for a chip with extra pipeline options, assembles them with
ptxas -v and prints, per kernel: variant, registers, spills, shared memory,
the PTX instructions of its main loop's body (one iteration; 0: no loop)
and, where cuobjdump is found, the function's static SASS instruction
count (for the loop-free prep and quantize kernels, the instructions each
thread issues: the counts behind docs/Performance.md's session-13 table;
cuobjdump is in the CUDA toolkit or the nvidia-cuda-cuobjdump wheel:
--cuobjdump PATH). With --nvdisasm (the CUDA toolkit's, or the
nvidia-cuda-nvdisasm wheel's nvidia/cu13/bin/nvdisasm) also the SASS of
each kernel's main loop (its largest backward branch): instructions, those
of the ALU pipe (logic, permutes, integer and f16 compares, shifts,
selects) and of the FMA pipe (IMAD, FP32 and packed 16-bit arithmetic),
and the most frequent opcodes: the counts behind docs/Performance.md's
session-20 and -21 tables. --ptx FILE ... reports already built PTX (e.g.
a folder of bench/build_gpu_kernels.py) instead of compiling cases.

    python3 bench/kernel_report.py [--chip sm_90a] [--options "..."]
        [--cuobjdump PATH] [--nvdisasm PATH] full_m4096 outlier_k2_m4096 ...
    python3 bench/kernel_report.py --nvdisasm PATH --ptx \
        .dev/kernels/recipes/bench_full_m16_n14336_k4096/fp4_kernels.ptx
"""
import argparse
import collections
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)

from fp4 import gpu  # noqa: E402
import gpu_recipes  # noqa: E402
from build_gpu_kernels import ptxas_report  # noqa: E402


def sass_counts(cubin, cuobjdump):
    """{function: (instructions, Counter of opcodes)} of a cubin."""
    text = subprocess.run([cuobjdump, "-sass", cubin], capture_output=True,
                          text=True, check=True).stdout
    out = {}
    for part in re.split(r"\s+Function : ", text)[1:]:
        name = part.split()[0]
        ops = collections.Counter()
        for line in part.splitlines():
            m = re.match(r"\s+/\*[0-9a-f]+\*/\s+(@!?U?P\w+\s+)?([A-Z0-9]+)",
                         line)
            if m:
                ops[m.group(2)] += 1
        out[name] = (sum(ops.values()), ops)
    return out


# SASS opcodes by the pipe that executes them on sm_90 (ncu's
# sm__inst_executed_pipe_*; HSETP2 counts on the ALU pipe: session 21's
# f16x2 compare left the FMA pipe's fp16 share unchanged).
ALU_OPS = {"PRMT", "ISETP", "HSETP2", "LOP3", "SEL", "SHF", "IADD3", "FSEL",
           "FSETP", "LEA", "FMNMX", "IMNMX", "VIMNMX", "PLOP3", "P2R", "R2P",
           "FLO", "POPC", "BREV", "SGXT", "MOV", "IABS", "VIADD", "HMNMX2",
           "BMSK"}
FMA_OPS = {"FFMA", "FMUL", "FADD", "IMAD", "IMUL", "HFMA2", "HMUL2", "HADD2",
           "IDP"}


def sass_loop_counts(cubin, nvdisasm):
    """sass_loops of nvdisasm's listing of a cubin."""
    return sass_loops(subprocess.run([nvdisasm, "-c", cubin],
                                     capture_output=True, text=True,
                                     check=True).stdout)


def sass_loops(text):
    """{function: (instructions, ALU-pipe, FMA-pipe, Counter of opcodes)}
    of each function's largest loop (the longest span between a label and
    a backward branch to it) in an nvdisasm -c listing."""
    out = {}
    for part in re.split(r"\n\.text\.", text)[1:]:
        name = part.split(":")[0].strip()
        ops, labels, best = [], {}, (0, 0)
        for line in part.splitlines():
            m = re.match(r"^\s*(\.L_x_\d+):", line)
            if m:
                labels[m.group(1)] = len(ops)
                continue
            m = re.search(r"/\*[0-9a-f]{4,}\*/\s+(@!?U?P\w+\s+)?"
                          r"([A-Z][A-Z0-9_]*)[^;]*;", line)
            if not m:
                continue
            ops.append(m.group(2))
            t = re.search(r"BRA\W.*?(\.L_x_\d+)", line)
            # (len(ops) - start > 1: not the BRA-to-itself that ends a
            # function.)
            if (t and t.group(1) in labels and
                    len(ops) - labels[t.group(1)] > 1):
                start = labels[t.group(1)]
                best = max(best, (len(ops) - start, start), key=lambda b: b[0])
        length, start = best
        body = collections.Counter(ops[start:start + length])
        out[name] = (length, sum(n for o, n in body.items() if o in ALU_OPS),
                     sum(n for o, n in body.items() if o in FMA_OPS), body)
    return out


def ptx_loop_counts(ptx):
    """{entry: PTX instructions of its largest loop body} (the longest
    span between a label and a backward branch to it: a decode or prefill
    kernel's main loop), 0 for a loop-free kernel."""
    out = {}
    # Split at the entries (a body's inline-asm blocks have lines "}" too).
    parts = re.split(r"\.entry (\w+)\(", open(ptx).read())
    for name, body in zip(parts[1::2], parts[2::2]):
        lines = [l.strip() for l in body.split("\n")]
        labels, best = {}, (0, 0)
        for i, line in enumerate(lines):
            m = re.match(r"^(\$L__BB\d+_\d+):", line)
            if m:
                labels[m.group(1)] = i
            m = re.search(r"bra(?:\.uni)?\s+(\$L__BB\d+_\d+);", line)
            if m and labels.get(m.group(1), i) < i:
                best = max(best, (i - labels[m.group(1)], labels[m.group(1)]),
                           key=lambda b: b[0])
        length, start = best
        out[name] = sum(1 for l in lines[start:start + length + 1]
                        if l and not l.startswith(("//", ".", "{", "}"))
                        and not l.endswith(":"))
    return out


def assemble(ptx, cubin, args):
    subprocess.run([args.ptxas, f"-arch={args.chip}", ptx, "-o", cubin],
                   check=True)


def report_loops(label, cubin, nvdisasm):
    """The main-loop SASS of every kernel of one cubin (--nvdisasm)."""
    for name, (n, alu, fma, ops) in sass_loop_counts(cubin, nvdisasm).items():
        top = " ".join(f"{o} {c}" for o, c in ops.most_common(8))
        print(f"  {label}: {name}: main loop {n} SASS instructions, ALU pipe "
              f"{alu}, FMA pipe {fma}; {top}")


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cases", nargs="*", help="substrings of bench case names")
    ap.add_argument("--ptx", nargs="*", default=[],
                    help="report these PTX files instead of compiling cases")
    ap.add_argument("--nvdisasm", default=shutil.which("nvdisasm"),
                    help="also the SASS of each kernel's main loop")
    ap.add_argument("--chip", default="sm_90a")
    ap.add_argument("--options", default="")
    ap.add_argument("--ptxas", default="/usr/local/cuda/bin/ptxas")
    ap.add_argument("--cuobjdump", default=shutil.which("cuobjdump"))
    ap.add_argument("--keep", help="directory to keep the kernels in")
    args = ap.parse_args()
    if not args.cases and not args.ptx:
        ap.error("name bench cases or give --ptx files")
    if args.ptx and not args.nvdisasm:
        ap.error("--ptx reports the main-loop SASS: it needs --nvdisasm")
    work = args.keep or tempfile.mkdtemp(prefix="fp4-kernel-report-")
    for i, ptx in enumerate(args.ptx):
        cubin = os.path.join(work, f"ptx{i}.cubin")
        assemble(ptx, cubin, args)
        report_loops(ptx, cubin, args.nvdisasm)
    for case in gpu_recipes.BENCH_CASES:
        if not any(s in case["name"] for s in args.cases):
            continue
        d = os.path.join(work, case["name"])
        gpu.compile(gpu_recipes.bench_mlir(case), chip=args.chip, out_dir=d,
                    options=("format=isa " + args.options).strip())
        ptx = os.path.join(d, "fp4_kernels.ptx")
        regs = {f: (r, sp, sm) for f, r, sp, sm in
                ptxas_report(ptx, args.ptxas, args.chip)}
        loops = ptx_loop_counts(ptx)
        sass = {}
        cubin = os.path.join(d, "fp4_kernels.cubin")
        if args.cuobjdump or args.nvdisasm:
            assemble(ptx, cubin, args)
        if args.cuobjdump:
            sass = sass_counts(cubin, args.cuobjdump)
        for k in json.load(open(os.path.join(d, "kernels.json")))["kernels"]:
            r, spill, smem = regs.get(k["name"], (-1, "?", 0))
            count = sass.get(k["name"], (None,))[0]
            print(f"{case['name']:40s} {k['variant']:50s} regs {r:3d} "
                  f"spill {spill:5s} smem {smem + k['shared_bytes']:6d} "
                  f"loop PTX {loops.get(k['name'], 0):4d}"
                  + (f" SASS {count}" if count is not None else ""))
        if args.nvdisasm:
            report_loops(case["name"], cubin, args.nvdisasm)
    if not args.keep:
        shutil.rmtree(work)


if __name__ == "__main__":
    main()
