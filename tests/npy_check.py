#!/usr/bin/env python3
"""Independent .npy reference through NumPy: the test array of tests/mpi/mpi_npy.c.
   npy_check.py check PATH DTYPE   exits 0 if the file holds the test array
   npy_check.py make PATH DTYPE    writes the test array with numpy.save"""
import math
import struct
import sys

try:
    import numpy as np
except ImportError:  # a node without NumPy: a small struct-based .npy reader/writer, still independent of C
    np = None

DESCR = ["<f4", "<f8", "<c8", "<c16"]


def reference(code):
    g = np.arange(60, dtype=np.float64)
    seed = 9
    re = np.sin(0.37 * g + 0.1 * seed) + 0.25 * seed
    dtypes = [np.float32, np.float64, np.complex64, np.complex128]
    if code >= 2:
        return (re + 1j * np.cos(0.21 * g - 0.3 * seed)).astype(dtypes[code]).reshape(4, 3, 5)
    return re.astype(dtypes[code]).reshape(4, 3, 5)


def reference_values(code):
    seed = 9
    vals = []
    for g in range(60):
        re = math.sin(0.37 * g + 0.1 * seed) + 0.25 * seed
        im = math.cos(0.21 * g - 0.3 * seed) if code >= 2 else 0.0
        vals.append((re, im))
    return vals


def plain_main(mode, path, code):
    fmt = "<f" if code in (0, 2) else "<d"
    vals = reference_values(code)
    if mode == "make":
        d = "{'descr': '%s', 'fortran_order': False, 'shape': (4, 3, 5), }" % DESCR[code]
        pad = 64 - (10 + len(d) + 1) % 64
        header = b"\x93NUMPY\x01\x00" + struct.pack("<H", len(d) + pad + 1) + (d + " " * pad + "\n").encode()
        parts = [v for re, im in vals for v in ((re, im) if code >= 2 else (re,))]
        with open(path, "wb") as f:
            f.write(header + struct.pack(fmt[0] + fmt[1] * len(parts), *parts))
        return 0
    data = open(path, "rb").read()
    if data[:6] != b"\x93NUMPY":
        print(f"npy_check: {path}: bad magic")
        return 1
    hl = struct.unpack("<H", data[8:10])[0]
    header = data[10:10 + hl].decode()
    if f"'descr': '{DESCR[code]}'" not in header or "(4, 3, 5)" not in header or "False" not in header:
        print(f"npy_check: {path}: unexpected header {header!r}")
        return 1
    n = 60 * (2 if code >= 2 else 1)
    got = struct.unpack(fmt[0] + fmt[1] * n, data[10 + hl:10 + hl + n * struct.calcsize(fmt)])
    want = [v for re, im in vals for v in ((re, im) if code >= 2 else (re,))]
    rtol = 1e-6 if code in (0, 2) else 1e-14
    bad = [i for i in range(n) if abs(got[i] - want[i]) > rtol * max(1.0, abs(want[i]))]
    if bad:
        print(f"npy_check: {path}: {len(bad)} values differ, first at {bad[0]}: {got[bad[0]]} vs {want[bad[0]]}")
        return 1
    return 0


def main():
    mode, path, code = sys.argv[1], sys.argv[2], int(sys.argv[3])
    if np is None:
        return plain_main(mode, path, code)
    want = reference(code)
    if mode == "make":
        np.save(path, want)
        return 0
    got = np.load(path)
    if got.dtype != want.dtype or got.shape != want.shape:
        print(f"npy_check: {path}: dtype {got.dtype} shape {got.shape}, expected {want.dtype} {want.shape}")
        return 1
    # NumPy's and the C library's sin/cos may differ in the last bit.
    rtol = 1e-6 if code in (0, 2) else 1e-14
    if not np.allclose(got, want, rtol=rtol, atol=rtol):
        print(f"npy_check: {path}: values differ, max |diff| = {np.max(np.abs(got - want))}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
