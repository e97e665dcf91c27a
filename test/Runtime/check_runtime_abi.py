#!/usr/bin/env python3
"""Checks libfp4_cuda_runtime.so against the mgpu* calls MLIR generates.

Usage: check_runtime_abi.py --header CudaRuntime.h --library LIB.so A.ll ...

For every `declare ... @mgpu*(...)` in the LLVM IR files: the library must
export the symbol (nm -D), and the prototype in the header must lower to the
same LLVM signature under the x86-64 C ABI (pointers -> ptr, intptr_t /
size_t / [u]int64_t -> i64, [u]int32_t -> i32, [u]int16_t -> i16,
[u]int8_t -> i8). The runtime's definitions include the header, so the
compiler holds them to it. Prints one `ok NAME(ARGS) -> RET` line per
declaration, then a summary; exits 1 on any mismatch.
"""

import argparse
import re
import shutil
import subprocess
import sys

_DECLARE = re.compile(r"^declare\s+(?:\w+\s+)*?(\S+)\s+@(mgpu\w+)\(([^)]*)\)",
                      re.M)
_PROTOTYPE = re.compile(
    r"^\s*([A-Za-z_][\w\s\*]*?[\s\*])(mgpu\w+|fp4Runtime\w+)\s*\(([^)]*)\)\s*;",
    re.M)

_C_TO_LLVM = {
    "void": "void", "intptr_t": "i64", "size_t": "i64", "int64_t": "i64",
    "uint64_t": "i64", "int32_t": "i32", "uint32_t": "i32", "int": "i32",
    "unsigned": "i32", "int16_t": "i16", "uint16_t": "i16", "int8_t": "i8",
    "uint8_t": "i8", "char": "i8",
}


def llvm_type(c_type):
    c_type = " ".join(c_type.replace("const", " ").split())
    if "*" in c_type:
        return "ptr"
    if c_type not in _C_TO_LLVM:
        raise ValueError(f"unknown C type '{c_type}' in the header")
    return _C_TO_LLVM[c_type]


def parse_header(text):
    text = re.sub(r"/\*.*?\*/", "", text, flags=re.S)
    text = re.sub(r"//[^\n]*", "", text)
    prototypes = {}
    for match in _PROTOTYPE.finditer(text):
        ret, name, params = match.groups()
        params = " ".join(params.split())
        args = []
        if params and params != "void":
            for param in params.split(","):
                # Drop the parameter name: the last identifier after the type.
                words = param.strip()
                typ = re.sub(r"\b[A-Za-z_]\w*$", "", words).strip()
                if not typ or typ in ("const",):
                    typ = words
                args.append(llvm_type(typ))
        prototypes[name] = (llvm_type(ret.strip()), args)
    return prototypes


def parse_declarations(paths):
    declared = {}
    for path in paths:
        with open(path) as f:
            text = f.read()
        for ret, name, params in _DECLARE.findall(text):
            # Parameter attributes (noundef, zeroext, ...) are not part of
            # the type; keep the first word of each parameter.
            args = [p.split()[0] for p in params.split(",") if p.strip()]
            signature = (ret, args)
            if name in declared and declared[name] != signature:
                raise SystemExit(f"{name} declared with two signatures: "
                                 f"{declared[name]} and {signature}")
            declared[name] = signature
    return declared


def exported_symbols(library):
    nm = shutil.which("nm") or shutil.which("llvm-nm")
    if nm is None:
        raise SystemExit("neither nm nor llvm-nm is on PATH")
    out = subprocess.run([nm, "-D", "--defined-only", library],
                         capture_output=True, text=True, check=True).stdout
    return {line.split()[-1] for line in out.splitlines() if line.strip()}


def render(name, signature):
    ret, args = signature
    return f"{name}({', '.join(args)}) -> {ret}"


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--header", required=True)
    parser.add_argument("--library", required=True)
    parser.add_argument("ll", nargs="+")
    args = parser.parse_args()

    with open(args.header) as f:
        prototypes = parse_header(f.read())
    declared = parse_declarations(args.ll)
    exported = exported_symbols(args.library)
    if not declared:
        print("error: no mgpu* declarations found in " + ", ".join(args.ll))
        return 1

    failures = []
    for name in sorted(declared):
        signature = declared[name]
        if name not in exported:
            failures.append(f"{render(name, signature)}: not exported by "
                            f"{args.library}")
        elif name not in prototypes:
            failures.append(f"{render(name, signature)}: no prototype in "
                            f"{args.header}")
        elif prototypes[name] != signature:
            failures.append(f"{render(name, signature)}: the header declares "
                            f"{render(name, prototypes[name])}")
        else:
            print(f"ok {render(name, signature)}")
    # The header must not promise what the library lacks either.
    for name in sorted(set(prototypes) - exported):
        failures.append(f"{name}: declared in {args.header} but not exported")
    for failure in failures:
        print(f"error: {failure}")
    if failures:
        return 1
    print(f"all {len(declared)} mgpu* declarations are exported with "
          "matching signatures")
    return 0


if __name__ == "__main__":
    sys.exit(main())
