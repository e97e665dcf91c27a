"""A mutation campaign over the project's test inputs: run fp4-opt on
mutants with a timeout and a memory limit, classify every outcome, attribute
crashes to fp4 or to upstream MLIR, and minimize the fp4 ones.

Outcomes:
  ok          exit 0
  diagnosed   non-zero exit with an `error:` diagnostic (what bad input
              should get)
  crash       a signal, LLVM's crash banner, `LLVM ERROR`, an assertion, a
              sanitizer report (with a sanitized fp4-opt)
  upstream    a crash that stock mlir-opt reproduces on the same input
              (reported, not a failure of this project)
  silent      non-zero exit with no diagnostic at all
  timeout     ran past --timeout
  oom         killed for memory (RLIMIT_AS) or std::bad_alloc
crash, silent, timeout and oom are failures.
"""

import concurrent.futures
import hashlib
import json
import os
import random
import re
import resource
import signal
import subprocess
import tempfile
import time

import mutator

FAILURES = ("crash", "silent", "timeout", "oom")
_CRASH_MARKERS = ("PLEASE submit a bug report", "Stack dump:", "LLVM ERROR:",
                  "UNREACHABLE executed", "Assertion `", "terminate called",
                  # A sanitized fp4-opt (scripts/run_sanitizers.sh).
                  "ERROR: AddressSanitizer", "ERROR: LeakSanitizer",
                  "runtime error:", "UndefinedBehaviorSanitizer")
_OOM_MARKERS = ("std::bad_alloc", "out of memory", "Cannot allocate memory")


# ---------------------------------------------------------------------------
# Seeds: the IR of every test input, one seed per `// -----` chunk
# ---------------------------------------------------------------------------

def _run_line_flags(text):
    """The fp4-opt flags of the file's first RUN command (continuation lines
    ending in a backslash joined), or None when it needs a file (%t) or is
    not an fp4-opt run."""
    run = []
    for line in text.splitlines():
        m = re.match(r"\s*//\s*RUN:\s?(.*)", line)
        if not m:
            if run:
                break
            continue
        part = m.group(1).rstrip()
        run.append(part.rstrip("\\").strip())
        if not part.endswith("\\"):
            break
    command = " ".join(run).split("|")[0]
    if "%t" in command or not command.startswith("fp4-opt %s"):
        return None
    flags = []
    for token in re.findall(r"(?:[^\s\"']|\"[^\"]*\"|'[^']*')+",
                            command[len("fp4-opt %s"):]):
        if token in ("-split-input-file", "-verify-diagnostics", "2>&1") or \
                token.startswith("-o") or token.startswith("-mlir-print") or \
                token.startswith("2>"):
            continue
        flags.append(token.replace('"', ""))
    return flags or None


def load_seeds(root):
    """[(name, ir, own flags or None)] from every .mlir under `root`."""
    seeds = []
    for directory, _, files in sorted(os.walk(root)):
        for name in sorted(files):
            if not name.endswith(".mlir"):
                continue
            path = os.path.join(directory, name)
            with open(path, encoding="utf-8", errors="replace") as f:
                text = f.read()
            flags = _run_line_flags(text)
            for i, chunk in enumerate(re.split(r"\n// -----\n", text)):
                ir = "\n".join(l for l in chunk.splitlines()
                               if not re.match(r"\s*//", l)).strip()
                if "func.func" in ir or "module" in ir:
                    rel = os.path.relpath(path, root)
                    seeds.append((f"{rel}#{i}", ir + "\n", flags))
    return seeds


# ---------------------------------------------------------------------------
# Running one mutant
# ---------------------------------------------------------------------------

def _limits(memory_mb):
    def apply():
        # 0: no address-space limit (ASan reserves terabytes of shadow).
        if memory_mb:
            limit = memory_mb * 1024 * 1024
            resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        os.setsid()  # a timeout kills the whole group
    return apply


def run_tool(tool, path, flags, timeout, memory_mb):
    """(returncode or 'timeout', stderr text, seconds)."""
    start = time.monotonic()
    env = dict(os.environ)
    env.setdefault("LLVM_SYMBOLIZER_PATH", "/usr/lib/llvm-22/bin/llvm-symbolizer")
    proc = subprocess.Popen([tool, path, "-o", os.devnull] + flags,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                            preexec_fn=_limits(memory_mb), env=env)
    try:
        _, err = proc.communicate(timeout=timeout)
        code = proc.returncode
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, signal.SIGKILL)
        _, err = proc.communicate()
        code = "timeout"
    return code, err.decode(errors="replace"), time.monotonic() - start


def classify(code, stderr):
    if code == "timeout":
        return "timeout"
    if any(m in stderr for m in _OOM_MARKERS) or code == -signal.SIGKILL:
        return "oom"
    if (isinstance(code, int) and code < 0) or \
            any(m in stderr for m in _CRASH_MARKERS):
        return "crash"
    if code == 0:
        return "ok"
    # A diagnostic, or the command-line parser's own message
    # (`fp4-opt: Unknown command line argument ...`).
    if re.search(r"(^|\s)error:", stderr) or \
            re.search(r"^[\w.-]+: \S", stderr, re.M):
        return "diagnosed"
    return "silent"


def signature(code, stderr):
    """A short crash key: LLVM's innermost pretty-stack entry (the pass or
    parser that was running) and the first symbolized frame in fp4 code (or
    the first symbolized frame at all); else the first message line."""
    pretty = re.findall(r"^\d+\.\t(.+)$", stderr, re.M)
    pretty = [p for p in pretty if not p.startswith("Program arguments")]
    frames = re.findall(r"^\s*#\d+ 0x[0-9a-f]+ ([^(\s].*?)(?: \(/|$)",
                        stderr, re.M)
    frames = [f for f in frames if not re.search(
        r"PrintStackTrace|SignalHandler|RunSignalHandlers|__restore_rt|"
        r"raise|abort", f)]
    fp4 = [f for f in frames if "fp4" in f]
    parts = []
    if pretty:
        parts.append(pretty[-1].strip())
    if fp4 or frames:
        parts.append((fp4 or frames)[0][:120])
    if parts:
        return " | ".join(parts)[:200]
    for line in stderr.splitlines():
        if any(m in line for m in _CRASH_MARKERS + _OOM_MARKERS) or \
                "error" in line:
            return line.strip()[:160]
    return f"exit {code}"


def _upstream_flags(flags):
    return [f for f in flags if not re.match(r"-+(fp4|convert-fp4)", f)]


def reproduces_upstream(mlir_opt, path, text, flags, timeout, memory_mb):
    """Whether stock mlir-opt crashes on the same input (parse only, and the
    upstream passes of the pipeline)."""
    if not mlir_opt or re.search(r"[!#]fp4\.|\bfp4\.", text):
        return False
    for candidate in ([], _upstream_flags(flags)):
        code, err, _ = run_tool(mlir_opt, path, candidate, timeout, memory_mb)
        if classify(code, err) == "crash":
            return True
    return False


# ---------------------------------------------------------------------------
# Minimization (line-level delta debugging)
# ---------------------------------------------------------------------------

def minimize(tool, text, flags, key, timeout, memory_mb, workdir,
             max_runs=200):
    """The smallest line subset of `text` that still crashes with `key`."""
    lines = text.split("\n")
    runs = 0

    def still_crashes(candidate):
        nonlocal runs
        runs += 1
        path = os.path.join(workdir, "minimize.mlir")
        with open(path, "w") as f:
            f.write("\n".join(candidate))
        code, err, _ = run_tool(tool, path, flags, timeout, memory_mb)
        return classify(code, err) == "crash" and signature(code, err) == key

    n = 2
    while len(lines) >= 2 and runs < max_runs:
        chunk = max(1, len(lines) // n)
        reduced = False
        for start in range(0, len(lines), chunk):
            candidate = lines[:start] + lines[start + chunk:]
            if candidate and still_crashes(candidate):
                lines, n, reduced = candidate, max(n - 1, 2), True
                break
            if runs >= max_runs:
                break
        if not reduced:
            if chunk == 1:
                break
            n = min(len(lines), n * 2)
    return "\n".join(lines)


# ---------------------------------------------------------------------------
# The campaign
# ---------------------------------------------------------------------------

def make_mutants(seeds, count, seed):
    """`count` (id, seed name, text, flags, mutations) tuples, the same for
    the same seed."""
    rng = random.Random(seed)
    mutants = []
    for i in range(count):
        name, ir, own = rng.choice(seeds)
        text, names = mutator.mutate_text(rng, ir)
        if own and rng.random() < 0.3:
            flags = mutator.mutate_pipeline(rng, own)
        else:
            # The NVVM pipeline costs 10-50x a pass run: one mutant in 20.
            index = mutator.NVVM_PIPELINE if rng.random() < 0.05 else \
                rng.randrange(mutator.NVVM_PIPELINE)
            flags = mutator.mutate_pipeline(rng, mutator.PIPELINES[index])
        mutants.append((i, name, text, flags, names))
    return mutants


def run_campaign(args):
    seeds = load_seeds(args.inputs)
    if not seeds:
        raise SystemExit(f"fp4-fuzz: error: no .mlir seeds under {args.inputs}")
    mutants = make_mutants(seeds, args.mutants, args.seed)
    os.makedirs(args.out, exist_ok=True)
    workdir = tempfile.mkdtemp(prefix="fp4-fuzz-")
    start = time.monotonic()

    def one(mutant):
        i, name, text, flags, names = mutant
        path = os.path.join(workdir, f"m{i}.mlir")
        with open(path, "w") as f:
            f.write(text)
        code, err, seconds = run_tool(args.fp4_opt, path, flags, args.timeout,
                                      args.memory_mb)
        outcome = classify(code, err)
        record = {"id": i, "seed": name, "mutations": names, "flags": flags,
                  "outcome": outcome, "seconds": round(seconds, 3)}
        if outcome == "diagnosed":
            first = next((l for l in err.splitlines() if "error:" in l), "")
            record["error"] = re.sub(r"^.*?error: ", "", first)[:100]
        if outcome in FAILURES:
            record["signature"] = signature(code, err)
            record["stderr"] = err[-4000:]
            if outcome == "crash" and reproduces_upstream(
                    args.mlir_opt, path, text, flags, args.timeout,
                    args.memory_mb):
                record["outcome"] = "upstream"
            record["input"] = text
        os.unlink(path)
        return record

    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        records = list(pool.map(one, mutants))
    elapsed = time.monotonic() - start

    counts = {k: 0 for k in ("ok", "diagnosed", "upstream") + FAILURES}
    for r in records:
        counts[r["outcome"]] += 1

    # One minimized reproducer per distinct failure signature.
    findings = {}
    for r in records:
        if r["outcome"] not in FAILURES and r["outcome"] != "upstream":
            continue
        key = (r["outcome"], r.get("signature", ""))
        if key in findings:
            findings[key]["count"] += 1
            continue
        finding = {"outcome": r["outcome"], "signature": key[1], "count": 1,
                   "seed": r["seed"], "mutations": r["mutations"],
                   "flags": r["flags"], "stderr": r["stderr"]}
        text = r["input"]
        if r["outcome"] == "crash" and args.minimize:
            text = minimize(args.fp4_opt, text, r["flags"], key[1],
                            args.timeout, args.memory_mb, workdir)
        digest = hashlib.sha1(text.encode()).hexdigest()[:10]
        repro = os.path.join(args.out, f"{r['outcome']}-{digest}.mlir")
        with open(repro, "w") as f:
            f.write(f"// fp4-fuzz {r['outcome']}: {key[1]}\n"
                    f"// fp4-opt %s {' '.join(repr(x) for x in r['flags'])}\n"
                    + text + "\n")
        finding["reproducer"] = repro
        findings[key] = finding

    diagnosed = {}
    for r in records:
        if "error" in r:
            key = re.sub(r"\d+", "N", r["error"])[:70]
            diagnosed[key] = diagnosed.get(key, 0) + 1
    report = {"seed": args.seed, "mutants": len(records),
              "diagnosed_messages": dict(sorted(diagnosed.items(),
                                                key=lambda kv: -kv[1])),
              "seed_inputs": len(seeds), "seconds": round(elapsed, 1),
              "counts": counts, "findings": list(findings.values()),
              "slowest": sorted(records, key=lambda r: -r["seconds"])[:5]}
    for r in report["slowest"]:
        r.pop("input", None), r.pop("stderr", None)
    with open(os.path.join(args.out, "report.json"), "w") as f:
        json.dump(report, f, indent=1)
    if args.junit:
        write_junit(args.junit, records, findings)
    return report


def write_junit(path, records, findings):
    """One test case per seed input file: it fails when a mutant of it
    crashed, hung, ran out of memory or failed without a diagnostic."""
    from xml.sax.saxutils import escape, quoteattr
    by_file = {}
    for r in records:
        by_file.setdefault(r["seed"].split("#")[0], []).append(r)
    cases, failed = [], 0
    for name in sorted(by_file):
        bad = [r for r in by_file[name] if r["outcome"] in FAILURES]
        body = ""
        if bad:
            failed += 1
            text = "\n".join(f"mutant {r['id']}: {r['outcome']}: "
                             f"{r.get('signature', '')} flags={r['flags']}"
                             for r in bad)
            body = f'<failure message="fp4-opt failed on mutants">' \
                   f"{escape(text)}</failure>"
        cases.append(f'<testcase classname="fuzz" name={quoteattr(name)} '
                     f'time="{sum(r["seconds"] for r in by_file[name]):.2f}">'
                     f"{body}</testcase>")
    with open(path, "w") as f:
        f.write('<?xml version="1.0" encoding="UTF-8"?>\n'
                f'<testsuites><testsuite name="fp4-fuzz" tests="{len(cases)}" '
                f'failures="{failed}">' + "".join(cases) +
                "</testsuite></testsuites>\n")
