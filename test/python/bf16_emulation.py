"""numpy emulation of the bf16 bit-level arithmetic the GPU kernels use
(E2M1 -> bf16 pair construction and exact bf16x2 multiplies; see
lib/Conversion/FP4ToGPU/BF16PairDequant.h), shared by the decode and
prefill layout tests so both check the kernels against one model."""

import numpy as np

E2M1 = np.array([0, .5, 1, 1.5, 2, 3, 4, 6, -0., -.5, -1, -1.5, -2, -3, -4, -6])


def bf16_to_f64(bits):
    """bf16 bit patterns (uint) -> float64 (exact)."""
    b = np.asarray(bits, dtype=np.uint32) & 0xFFFF
    return (b << 16).view(np.float32).astype(np.float64)


def f64_to_bf16_exact(x):
    """float64 values that must be exact in bf16 (or +-inf / nan) -> bits."""
    x = np.asarray(x, dtype=np.float64)
    f = x.astype(np.float32)
    bits = f.view(np.uint32)
    finite = np.isfinite(f)
    assert np.all(f[finite].astype(np.float64) == x[finite]), "not exact in f32"
    assert np.all((bits[finite] & 0xFFFF) == 0), "not exact in bf16"
    return (bits >> 16).astype(np.uint32)


def mul_bf16x2(x, y):
    """mul.rn.bf16x2 on i32 patterns, asserting that each product is exact
    (every product the kernels form is: see BF16PairDequant.h); overflow
    past the bf16/f32 range becomes +-inf, as in the f32 reference."""
    x = np.asarray(x, dtype=np.uint32)
    y = np.asarray(y, dtype=np.uint32)
    out = np.zeros(np.broadcast(x, y).shape, dtype=np.uint32)
    for shift in (0, 16):
        a = bf16_to_f64(x >> np.uint32(shift))
        b = bf16_to_f64(y >> np.uint32(shift))
        with np.errstate(over="ignore", invalid="ignore"):
            p = a * b
        big = np.isfinite(p) & (np.abs(p) >= 2.0 ** 128)
        p = np.where(big, np.copysign(np.inf, p), p)
        out = out | (f64_to_bf16_exact(p) << np.uint32(shift))
    return out
