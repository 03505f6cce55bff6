"""starlops from Python: distributed arrays, linear operators and solvers of the starlops C library (StarPU
task graphs across MPI ranks), for pylops-mpi users. Launch with `mpirun -n P python3 script.py`; importing
the package starts starlops (and MPI unless mpi4py or the program already did), and it stops at exit.

    import numpy as np, starlops as sl
    x = sl.Array.from_numpy(np.arange(12.0).reshape(4, 3))      # rows over the ranks
    D = sl.FirstDerivative(x, axis=0, kind="forward")
    y = D @ x
    print(y.to_numpy(), sl.dottest(D))
"""
import atexit

from ._clib import StarlopsError, lib, lib_path, check
from .array import Array
from .ops import (Op, Identity, Zero, Diagonal, MatrixMult, BlockDiagMatrices, VStackMatrix, HStackMatrix, FirstDerivative,
                  SecondDerivative, Laplacian, Gradient, FFT, VStack, HStack, BlockDiag, NonStationaryConvolve1D, Restriction,
                  Roll, Sliding1D, Patch2D, Patch2DDense, RestrictionLocal, CSR, Fredholm1, MPIMatrixMult, summa_block, Redistribute,
                  MDC, Halo, FirstDirectionalDerivative, SecondDirectionalDerivative, dottest)
from .solvers import SolverInfo, cg, cgls, lsqr, ista, fista, power_iteration
from .prox import Prox, L1, L2, L21, Box, ProximalGradient, ADMML2, PrimalDual

__version__ = lib.sl_version().decode()


def init():
    """Starts starlops (done at import; a no-op when running)."""
    if not lib.sl_initialized():
        check(lib.sl_init(None, None, None))


def finalize():
    """Waits for every task and stops starlops (done at exit; MPI is finalised only if starlops started it)."""
    if lib.sl_initialized():
        check(lib.sl_finalize())


def rank():
    return lib.sl_rank()


def size():
    return lib.sl_size()


def wait():
    """Waits until every submitted task has completed."""
    check(lib.sl_wait())


def workers():
    """(CPU workers, CUDA workers) of this rank."""
    return lib.sl_ncpu_workers(), lib.sl_ncuda_workers()


init()
atexit.register(finalize)
