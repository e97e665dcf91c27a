#!/usr/bin/env python3
"""Seed corpora for the libFuzzer targets, from the project's test inputs.

  make_corpus.py TEST_DIR OUT_DIR

OUT_DIR/op-parser: one file per `// -----` chunk of every .mlir test (RUN
and CHECK lines dropped). OUT_DIR/attr-type-parser: every distinct fp4
attribute (#fp4.mxfp4<...>) and type (!fp4.tensor<...>) spelled in them.
"""

import hashlib
import os
import re
import sys


def balanced_prefix(text, start):
    """text[start:end] for the `#fp4.x<...>` / `!fp4.x<...>` at start."""
    m = re.match(r"[#!]fp4\.\w+", text[start:])
    end = start + m.end()
    if end < len(text) and text[end] == "<":
        depth = 0
        for i in range(end, len(text)):
            depth += {"<": 1, ">": -1}.get(text[i], 0)
            if depth == 0:
                return text[start:i + 1]
        return None
    return text[start:end]


def main(test_dir, out_dir):
    ops = os.path.join(out_dir, "op-parser")
    attrs = os.path.join(out_dir, "attr-type-parser")
    os.makedirs(ops, exist_ok=True)
    os.makedirs(attrs, exist_ok=True)
    seen_ops, seen_attrs = set(), set()
    for directory, _, files in sorted(os.walk(test_dir)):
        for name in sorted(f for f in files if f.endswith(".mlir")):
            with open(os.path.join(directory, name), encoding="utf-8",
                      errors="replace") as f:
                text = f.read()
            for chunk in re.split(r"\n// -----\n", text):
                ir = "\n".join(l for l in chunk.splitlines()
                               if not re.match(r"\s*//", l)).strip() + "\n"
                if len(ir) > 1 and len(ir) < 8192:
                    seen_ops.add(ir)
            for m in re.finditer(r"[#!]fp4\.\w+", text):
                spelled = balanced_prefix(text, m.start())
                if spelled and len(spelled) < 512:
                    seen_attrs.add(spelled)
    for directory, items in ((ops, seen_ops), (attrs, seen_attrs)):
        for item in sorted(items):
            digest = hashlib.sha1(item.encode()).hexdigest()
            with open(os.path.join(directory, digest), "w") as f:
                f.write(item)
    print(f"make_corpus: {len(seen_ops)} op-parser seeds, "
          f"{len(seen_attrs)} attr-type-parser seeds in {out_dir}")


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit(__doc__)
    main(sys.argv[1], sys.argv[2])
