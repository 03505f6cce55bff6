#!/usr/bin/env python3
"""Independent .npy reference through NumPy: the test array of tests/mpi/mpi_npy.c.
   npy_check.py check PATH DTYPE   exits 0 if the file holds the test array
   npy_check.py make PATH DTYPE    writes the test array with numpy.save"""
import sys
import numpy as np

DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def reference(code):
    g = np.arange(60, dtype=np.float64)
    seed = 9
    re = np.sin(0.37 * g + 0.1 * seed) + 0.25 * seed
    if code >= 2:
        return (re + 1j * np.cos(0.21 * g - 0.3 * seed)).astype(DTYPES[code]).reshape(4, 3, 5)
    return re.astype(DTYPES[code]).reshape(4, 3, 5)


def main():
    mode, path, code = sys.argv[1], sys.argv[2], int(sys.argv[3])
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
