#!/usr/bin/env python3
"""Programmatic dependent launch on the GPU, checked (a device check, run
by bench/device_plan.py): kernels of fp4-gpu-dependent-launch (kernels.json
"dependent": true) launched as programmatic dependent launches must give
the bytes they give launched one after the other.

    python3 bench/pdl_check.py --kernels DIR [--only CASE ...] [--reps N]

For each case directory (DIR/<case> and DIR/recipes/<case>) the kernels run
in manifest order on one stream, buffers shared by name as the plan names
them (a producer's output is its consumer's input), inputs random, scratch
zero: once with every launch plain (the reference), then `reps` times with
the manifest's dependent launches, each repetition restoring the inputs
first, back to back without synchronizing. Every buffer must equal the
reference bit for bit; any difference fails the run (exit 1) naming the
case, the repetition and the buffer. A case without dependent kernels is
an error too (the directory was not built with dependent-launch=true).
"""
import argparse
import os
import sys

import torch

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "python"))
sys.path.insert(0, HERE)

from fp4 import gpu  # noqa: E402
from gpu_bench import TORCH_DTYPE, random_buffer  # noqa: E402

DEV = "cuda"


def case_dirs(kernels, only):
    for sub in ("", "recipes"):
        root = os.path.join(kernels, sub)
        if not os.path.isdir(root):
            continue
        for name in sorted(os.listdir(root)):
            d = os.path.join(root, name)
            if os.path.isfile(os.path.join(d, "kernels.json")) and \
                    (not only or name in only):
                yield name, d


def run_case(name, d, reps, g):
    ks = gpu.load(d)
    kernels = [ks[n] for n in ks.names()]
    if not any(k.dependent for k in kernels):
        return f"{name}: no dependent kernel (built without dependent-launch)"
    # A buffer is a name of one plan; kernels.json lists every plan's
    # launches, so the key also holds the shape and dtype.
    key = lambda a: (a["name"], tuple(a["shape"]), a["dtype"])  # noqa: E731
    initial = {}
    for k in kernels:
        for a in k.spec["args"]:
            if key(a) in initial:
                continue
            initial[key(a)] = (
                torch.zeros(a["shape"], dtype=TORCH_DTYPE[a["dtype"]],
                            device=DEV) if a.get("scratch")
                else random_buffer(a, g))
    buffers = {n: t.clone() for n, t in initial.items()}

    def launch_all(dependent):
        for k in kernels:
            flag = k.dependent
            k.dependent = flag and dependent
            try:
                k(*[buffers[key(a)] for a in k.spec["args"]])
            finally:
                k.dependent = flag

    stream = torch.cuda.Stream()
    with torch.cuda.stream(stream):
        launch_all(False)
        stream.synchronize()
        reference = {n: t.clone() for n, t in buffers.items()}
        results = []
        for _ in range(reps):
            for n, t in buffers.items():
                t.copy_(initial[n])
            launch_all(True)
            results.append({n: t.clone() for n, t in buffers.items()})
        stream.synchronize()
    for rep, got in enumerate(results):
        for n, ref in reference.items():
            a = got[n].view(torch.uint8) if got[n].dtype != torch.uint8 \
                else got[n]
            b = ref.view(torch.uint8) if ref.dtype != torch.uint8 else ref
            if not torch.equal(a, b):
                bad = int((a != b).sum())
                return (f"{name}: repetition {rep}: buffer '{n}' differs "
                        f"from the plain launches in {bad} bytes")
    return None


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kernels", required=True)
    ap.add_argument("--only", nargs="*")
    ap.add_argument("--reps", type=int, default=20)
    args = ap.parse_args()
    g = torch.Generator(device=DEV).manual_seed(17)
    failures, cases = [], 0
    for name, d in case_dirs(args.kernels, args.only):
        cases += 1
        err = run_case(name, d, args.reps, g)
        print(f"{'FAIL' if err else 'ok'} {name}" + (f": {err}" if err else ""),
              flush=True)
        if err:
            failures.append(err)
    if not cases:
        print(f"pdl_check: no case found under {args.kernels}")
        return 1
    print(f"pdl_check: {cases - len(failures)} of {cases} cases equal to "
          "their plain launches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
