"""Writes the calibration archive of rotate-two-level*.mlir: what np.savez
writes (a stored zip of version-1 .npy float32 members, last axis = K;
docs/Calibration.md), without NumPy since lit runs the system Python."""
import random
import struct
import sys
import zipfile


def npy(rows):
    shape = "%d, %d" % (len(rows), len(rows[0]))
    header = "{'descr': '<f4', 'fortran_order': False, 'shape': (%s), }" % shape
    header += " " * ((64 - (10 + len(header) + 1) % 64) % 64) + "\n"
    values = [v for row in rows for v in row]
    return (b"\x93NUMPY\x01\x00" + struct.pack("<H", len(header)) +
            header.encode("latin1") + struct.pack("<%df" % len(values), *values))


rng = random.Random(0)
# Every row constant across its channels: equal channel energies, so the
# greedy balancing interleaves the channels over the blocks; constant blocks
# quantize to one code (identity) or to one spike (deterministic Hadamard),
# the randomized Hadamard spreads them over many codes.
const_rows = [[c] * 64 for c in (rng.gauss(0, 1) for _ in range(16))]
wide_rows = [[c] * 256 for c in (rng.gauss(0, 1) for _ in range(16))]
# Channel k has magnitude k + 1: strictly increasing energies.
ramp = [[float(k + 1) for k in range(64)] for _ in range(4)]
# Each row holds every E2M1 value (both zeros included) twice: with block
# amax 6 (scale 1) the 16 codes are equally frequent, the maximum entropy of
# 4 bits, which no rotation can beat.
grid = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0]
codes = grid + [-v for v in grid]
flat = []
for _ in range(16):
    row = codes * 2
    rng.shuffle(row)
    flat.append(row)

members = {
    "@interleave/arg0": const_rows,
    "@cross_block/arg0": wide_rows,
    "@ramp/arg0": ramp,
    "layer2.in": const_rows,
    "@mlp/arg0": [row[:32] for row in const_rows],
    "@flat/arg0": flat,
    "short": [[0.0] * 32 for _ in range(4)],
}
with zipfile.ZipFile(sys.argv[1], "w", compression=zipfile.ZIP_STORED) as z:
    for key, rows in members.items():
        z.writestr(key + ".npy", npy(rows))
