#!/usr/bin/env python3
"""Runs the libFuzzer targets for a fixed number of inputs and attributes
what they find, writing one JUnit test case per target.

    libfuzzer_run.py --bin-dir BUILD/bin --corpus DIR --artifacts DIR \
        --junit libfuzzer.xml [--runs attr-type-parser=N,op-parser=N]

Why a fixed input count and not a time limit: a time limit makes the run
depend on the machine's speed (a faster CI machine executes more inputs and
reaches inputs this machine never did), so a green local run said nothing
about CI. With `-seed` and `-runs` the mutation sequence is the same on every
machine; the coverage feedback can still differ slightly between processes
(MLIR hashes pointers), so attribution below is what keeps an upstream bug
from failing the project.

A crash is `upstream` (reported, not a failure) when
  * stock mlir-opt crashes on the input (as it is, or with the lines that
    mention fp4 removed, since stock mlir-opt has no fp4 dialect), or
  * the crash happened while parsing and no frame between the crash and the
    harness's parse call is fp4 code (every frame is in a library under /usr/lib/llvm-22/lib):
    fp4's type, attribute and op parsers and verifiers live in the fuzzer
    binary, so a bug in them shows a frame of it.
An upstream finding ends that seed's run early; the rest of the input budget
runs with the next seed (at most --max-upstream findings per target), so one
known upstream bug does not hide everything after it.
"""

import argparse
import glob
import os
import re
import subprocess
import sys
import tempfile
import time
from xml.sax.saxutils import escape, quoteattr

TARGETS = ("attr-type-parser", "op-parser")
DEFAULT_RUNS = {"attr-type-parser": 400000, "op-parser": 60000}
_CRASH_MARKERS = ("PLEASE submit a bug report", "Stack dump:", "LLVM ERROR:",
                  "UNREACHABLE executed", "Assertion `", "terminate called",
                  "ERROR: AddressSanitizer", "runtime error:")


def stock_crashes(mlir_opt, text):
    """Whether stock mlir-opt crashes parsing `text` (or its generic
    re-print), as given and with the fp4 lines dropped."""
    if not mlir_opt:
        return False
    candidates = [text]
    stripped = "\n".join(l for l in text.split("\n") if "fp4" not in l)
    if stripped != text:
        candidates.append(stripped)
    with tempfile.TemporaryDirectory() as tmp:
        for i, candidate in enumerate(candidates):
            path = os.path.join(tmp, f"input{i}.mlir")
            with open(path, "w", errors="replace") as f:
                f.write(candidate)
            for flags in ([], ["--allow-unregistered-dialect"],
                          ["--mlir-print-op-generic"]):
                try:
                    proc = subprocess.run([mlir_opt, path, "-o", os.devnull]
                                          + flags, capture_output=True,
                                          timeout=60)
                except subprocess.TimeoutExpired:
                    continue
                err = proc.stderr.decode(errors="replace")
                if proc.returncode < 0 or \
                        any(m in err for m in _CRASH_MARKERS):
                    return True
    return False


# Frames of the crash handler itself, on top of the stack when the crash is
# an abort (LLVM ERROR, report_fatal_error, an assertion) rather than a
# sanitizer report: the sanitizer runtime printing the stack, libFuzzer's
# deadly-signal callback, libc's raise/abort. They say nothing about where
# the bug is, so they are skipped before the frames are attributed.
_HANDLER_FRAME = re.compile(r"__sanitizer_|\bfuzzer::|crtstuff\.c|"
                            r"/libc\.so|\bnptl/|\bsignal/|\bstdlib/abort\.c")


def crash_in_upstream_parser(log):
    """Whether the sanitizer's stack shows the crash inside the parser with
    only upstream frames above the harness's parse call (after the crash
    handler's own frames)."""
    frames = re.findall(r"^\s*#(\d+) 0x[0-9a-f]+ in (.*)$|"
                        r"^\s*#(\d+) 0x[0-9a-f]+ +\((.*)\)", log, re.M)
    stack = []
    for a, b, c, d in frames:
        number = int(a or c)
        if number == 0 and stack:
            break  # only the first (crashing) stack
        stack.append(b or d)
    while stack and _HANDLER_FRAME.search(stack[0]) and \
            "LLVMFuzzerTestOneInput" not in stack[0]:
        stack.pop(0)
    for i, frame in enumerate(stack):
        if "LLVMFuzzerTestOneInput" in frame or "parseSourceString<" in frame:
            above = stack[:i]
            return bool(above) and \
                any("mlir::parseSourceString" in f or
                    "mlir::parseAsmSourceFile" in f for f in above) and \
                all("/usr/lib/llvm-22/lib/" in f for f in above)
    return False


def executed(log):
    m = re.search(r"stat::number_of_executed_units:\s*(\d+)", log)
    return int(m.group(1)) if m else 0


def run_target(args, target, budget):
    """(failure message or None, notes, inputs run, seconds)."""
    binary = os.path.join(args.bin_dir, f"fp4fuzz-{target}")
    artifacts = os.path.join(args.artifacts, target)
    os.makedirs(artifacts, exist_ok=True)
    notes, total, seed = [], 0, 1
    start = time.monotonic()
    while True:
        for old in glob.glob(os.path.join(artifacts, "*")):
            os.remove(old)
        cmd = [binary, f"-seed={seed}", f"-runs={budget - total}",
               "-max_len=8192", "-timeout=10", "-rss_limit_mb=4096",
               "-print_final_stats=1", f"-artifact_prefix={artifacts}/",
               os.path.join(args.corpus, target)]
        proc = subprocess.run(cmd, stdout=subprocess.PIPE,
                              stderr=subprocess.STDOUT)
        log = proc.stdout.decode(errors="replace")
        with open(os.path.join(args.artifacts, f"{target}-seed{seed}.log"),
                  "w") as f:
            f.write(log)
        total += executed(log)
        if proc.returncode == 0:
            return None, notes, total, time.monotonic() - start
        found = sorted(glob.glob(os.path.join(artifacts, "*")))
        tail = "\n".join(log.splitlines()[-60:])
        if not found:
            return (f"exit {proc.returncode} without an artifact (seed "
                    f"{seed})\n{tail}", notes, total,
                    time.monotonic() - start)
        with open(found[0], "rb") as f:
            text = f.read().decode(errors="replace")
        upstream = stock_crashes(args.mlir_opt, text) or \
            crash_in_upstream_parser(log)
        if not upstream:
            keep = os.path.join(args.artifacts, f"{target}-finding")
            os.replace(found[0], keep)
            return (f"finding (seed {seed}, input kept in {keep})\n{tail}",
                    notes, total, time.monotonic() - start)
        keep = os.path.join(args.artifacts,
                            f"{target}-upstream-seed{seed}")
        os.replace(found[0], keep)
        first = next((l for l in log.splitlines() if "ERROR:" in l or
                      "SUMMARY:" in l), "crash")
        notes.append(f"upstream (seed {seed}, input {keep}): {first.strip()}")
        print(f"fp4fuzz-{target}: upstream crash with seed {seed} after "
              f"{total} inputs, kept in {keep}", flush=True)
        if len(notes) >= args.max_upstream or total >= budget:
            return None, notes, total, time.monotonic() - start
        seed += 1


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--bin-dir", required=True)
    parser.add_argument("--corpus", required=True)
    parser.add_argument("--artifacts", required=True)
    parser.add_argument("--junit", required=True)
    parser.add_argument("--runs", default="",
                        help="target=N,...: inputs per target")
    parser.add_argument("--mlir-opt", default="/usr/lib/llvm-22/bin/mlir-opt")
    parser.add_argument("--max-upstream", type=int, default=3)
    args = parser.parse_args()
    budgets = dict(DEFAULT_RUNS)
    for item in filter(None, args.runs.split(",")):
        name, _, value = item.partition("=")
        if name not in budgets or not value.isdigit() or int(value) <= 0:
            parser.error(f"--runs: expected target=N with target one of "
                         f"{', '.join(TARGETS)}, got '{item}'")
        budgets[name] = int(value)
    if not os.path.isfile(args.mlir_opt):
        args.mlir_opt = None
    os.makedirs(args.artifacts, exist_ok=True)

    cases, failures = [], 0
    for target in TARGETS:
        failure, notes, total, seconds = run_target(args, target,
                                                    budgets[target])
        print(f"fp4fuzz-{target}: {'FAILED' if failure else 'ok'}, "
              f"{total} inputs in {seconds:.0f} s"
              + (f", {len(notes)} upstream" if notes else ""), flush=True)
        body = ""
        if failure:
            failures += 1
            print(failure)
            body = (f"<failure message={quoteattr(failure.splitlines()[0])}>"
                    f"{escape(failure)}</failure>")
        if notes:
            body += f"<system-out>{escape(chr(10).join(notes))}</system-out>"
        cases.append(f'<testcase classname="libfuzzer" name="fp4fuzz-{target}"'
                     f' time="{seconds:.1f}">{body}</testcase>')
    with open(args.junit, "w") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n<testsuites>'
                f'<testsuite name="libfuzzer" tests="{len(cases)}" '
                f'failures="{failures}">{"".join(cases)}</testsuite>'
                '</testsuites>\n')
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
