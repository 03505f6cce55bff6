"""CuPy arrays as starlops arrays without a copy (on a node with a GPU per rank or ranks sharing one):
each rank wraps its rows of a CuPy array, a Laplacian and a vector update run on the GPU in those buffers,
and the results are checked against the same operations on NumPy arrays.

    mpirun -n 2 python3 python/examples/cupy_zero_copy.py

Prints PASSED on rank 0 and exits non-zero otherwise."""
import sys

import cupy
import numpy as np

import starlops as sl


def main():
    n0, n1 = 64, 48
    g = np.random.default_rng(0).standard_normal((n0, n1))
    rank, size = sl.rank(), sl.size()
    rows = n0 // size + (rank < n0 % size)
    first = rank * (n0 // size) + min(rank, n0 % size)
    xd = cupy.asarray(g[first:first + rows])  # this rank's rows, on its GPU
    yd = cupy.zeros_like(xd)
    x = sl.Array.wrap_cupy(xd, (n0, n1))
    y = sl.Array.wrap_cupy(yd, (n0, n1))
    L = sl.Laplacian(x)
    L.matvec(x, out=y)  # computed in yd
    y.sync()
    ref = (L @ sl.Array.from_numpy(g)).to_numpy()[first:first + rows]
    ok = np.allclose(cupy.asnumpy(yd), ref, atol=1e-12)
    x.axpby(0.0, x.copy(), 3.0)  # x = 3 x, in xd
    x.sync()
    ok = ok and np.allclose(cupy.asnumpy(xd), 3.0 * g[first:first + rows])
    ok = sl.Array.from_numpy(np.array([0.0 if ok else 1.0] * size)).norm(np.inf) == 0.0  # every rank's verdict
    if rank == 0:
        print("cupy_zero_copy: %d ranks, %s CUDA worker(s) per rank: %s" % (size, sl.workers()[1], "PASSED" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
