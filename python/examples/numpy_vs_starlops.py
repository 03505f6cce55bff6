"""NumPy against starlops on two of pylops-mpi's tutorial problems, from Python.

1. Poisson: -Laplace(u) = f on the unit square with u = 0 on the boundary, on an n x n grid whose rows are
   split over the ranks, with CG on A = (I - P) - P L P (L the 2-D Laplacian, P the mask of the interior
   points); NumPy solves the same dense system (built from the 5-point formula) on every rank.
2. Least squares: min ||y - V x||^2 + damp^2 ||x||^2 with V a VStack of dense row blocks (one per rank),
   with LSQR (and its variance estimate) against numpy.linalg on the gathered matrix.

    mpirun -n 2 python3 python/examples/numpy_vs_starlops.py [--n N]

Prints both comparisons on rank 0 and exits non-zero if either differs by more than 1e-8.
"""
import argparse
import sys
import time

import numpy as np

import starlops as sl


def poisson(n):
    h = 1.0 / (n - 1)
    gi, gj = np.meshgrid(np.arange(n) * h, np.arange(n) * h, indexing="ij")
    interior = np.zeros((n, n))
    interior[1:-1, 1:-1] = 1.0
    f = 2.0 * (gi * (1 - gi) + gj * (1 - gj)) * interior  # u = x (1 - x) y (1 - y) solves it exactly
    F = sl.Array.from_numpy(f)  # rows over the ranks
    P = sl.Diagonal(sl.Array.from_numpy(interior))
    L = sl.Laplacian(F, sampling=[h, h])
    A = (sl.Identity(F) - P) - P @ L @ P
    t0 = time.perf_counter()
    u, info = sl.cg(A, F, niter=5 * n, tol=1e-12)
    t_sl = time.perf_counter() - t0
    us = u.to_numpy()
    # NumPy: the same operator as a dense matrix from the formula
    D2 = (np.diag(np.ones(n - 1), -1) - 2 * np.eye(n) + np.diag(np.ones(n - 1), 1)) / h ** 2
    D2[0, :] = D2[-1, :] = 0.0  # pylops' second derivative without edge: the end rows are zero
    Ld = np.kron(D2, np.eye(n)) + np.kron(np.eye(n), D2)
    Pd = np.diag(interior.ravel())
    Ad = (np.eye(n * n) - Pd) - Pd @ Ld @ Pd
    t0 = time.perf_counter()
    un = np.linalg.solve(Ad, f.ravel()).reshape(n, n)
    t_np = time.perf_counter() - t0
    exact = gi * (1 - gi) * gj * (1 - gj)
    diff = np.max(np.abs(us - un)) / np.max(np.abs(un))
    if sl.rank() == 0:
        print("Poisson %d x %d on %d ranks: CG %d iterations (%s), %.3f s; numpy.linalg.solve %.3f s" %
              (n, n, sl.size(), info.iterations, info.reason, t_sl, t_np))
        print("  max |starlops - numpy| / max |numpy| = %.2e; max error against the exact solution %.2e" %
              (diff, np.max(np.abs(us - exact))))
    return diff


def least_squares(damp=0.1):
    rank, size = sl.rank(), sl.size()
    rows, cols = 40, 12
    i = np.arange(rank * rows, (rank + 1) * rows, dtype=np.float64)[:, None]
    j = np.arange(cols, dtype=np.float64)[None, :]
    block = np.sin(0.37 * i * i + 1.3 * i * j + 0.71 * j) + (i == j) * 0.5  # this rank's rows of V
    V = sl.VStackMatrix(block)
    y = V.range_array()
    with y.local_view("w") as loc:
        loc[:] = np.cos(0.1 * i[:, 0])
    x, info, var = sl.lsqr(V, y, niter=200, damp=damp, atol=1e-14, btol=1e-14, calc_var=True)
    # NumPy on the whole matrix: every rank computes its block and the rest from the same formula
    ia = np.arange(size * rows, dtype=np.float64)[:, None]
    Vd = np.sin(0.37 * ia * ia + 1.3 * ia * j + 0.71 * j) + (ia == j) * 0.5
    yd = np.cos(0.1 * ia[:, 0])
    N = Vd.T @ Vd + damp ** 2 * np.eye(cols)
    xn = np.linalg.solve(N, Vd.T @ yd)
    dx = np.max(np.abs(x.to_numpy() - xn)) / np.max(np.abs(xn))
    dv = np.max(np.abs(var.to_numpy() - np.diag(np.linalg.inv(N)))) / np.max(np.diag(np.linalg.inv(N)))
    if rank == 0:
        print("Least squares %d x %d (damp %g) on %d ranks: LSQR %d iterations (%s)" %
              (size * rows, cols, damp, size, info.iterations, info.reason))
        print("  max |starlops - numpy| / max |numpy|: x %.2e, variance estimate %.2e" % (dx, dv))
    return max(dx, dv)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--n", type=int, default=24, help="grid size of the Poisson problem (default 24)")
    args = ap.parse_args()
    worst = max(poisson(args.n), least_squares())
    ok = worst < 1e-8
    if sl.rank() == 0:
        print("numpy_vs_starlops: %s" % ("PASSED" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
