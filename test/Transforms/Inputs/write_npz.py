"""Writes a small calibration archive (docs/Calibration.md) for lit tests,
without NumPy (lit runs the system Python): a zip of version-1 .npy members
laid out as np.save writes them.

    write_npz.py OUT.npz KEY=SHAPE[:SCALE[:DTYPE]] ... [--compressed]

SHAPE is dims joined by 'x' (e.g. 2x3x32); the values are
arange(n) * SCALE (default 1/8), row-major; DTYPE is '<f4' (default) or any
other descr, written as 4-byte floats, to test the dtype check.
"""
import struct
import sys
import zipfile


def npy(shape, values, descr):
    dims = ", ".join(str(d) for d in shape) + ("," if len(shape) == 1 else "")
    header = ("{'descr': '%s', 'fortran_order': False, 'shape': (%s), }"
              % (descr, dims))
    pad = (64 - (10 + len(header) + 1) % 64) % 64
    header = header + " " * pad + "\n"
    data = struct.pack("<%df" % len(values), *values)
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) +
            header.encode("latin1") + data)


def main(argv):
    out, specs = argv[1], [a for a in argv[2:] if not a.startswith("--")]
    method = (zipfile.ZIP_DEFLATED if "--compressed" in argv
              else zipfile.ZIP_STORED)
    with zipfile.ZipFile(out, "w", compression=method) as z:
        for spec in specs:
            key, rest = spec.split("=", 1)
            parts = rest.split(":")
            shape = [int(d) for d in parts[0].split("x")] if parts[0] else []
            scale = float(parts[1]) if len(parts) > 1 else 0.125
            descr = parts[2] if len(parts) > 2 else "<f4"
            n = 1
            for d in shape:
                n *= d
            z.writestr(key + ".npy", npy(shape, [i * scale for i in range(n)],
                                         descr))


if __name__ == "__main__":
    main(sys.argv)
