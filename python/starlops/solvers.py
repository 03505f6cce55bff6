"""The solvers: CG, CGLS, LSQR, ISTA, FISTA and power iteration, with the options of sl_solver_options as
keyword arguments and the info of sl_solver_info as a SolverInfo."""
import collections
import ctypes

import numpy as np

from . import _clib as C
from ._clib import check, lib

SolverInfo = collections.namedtuple(
    "SolverInfo", "iterations stop reason r0norm rnorm r2norm anorm acond arnorm xnorm alpha host_syncs seconds cost")

_RULES = {"relative": 0, "absolute": 1, "squared": 2}
_THRESH = {"soft": 0, "hard": 1, "half": 2}
_KEYS = {"niter", "tol", "tol_rule", "check_every", "x0", "show", "damp", "atol", "btol", "conlim", "pipelined",
         "eps", "thresh", "alpha", "power_niter", "perc", "decay", "callback", "calc_var", "cost"}


def _solve(fn, name, A, y, x=None, **kw):
    bad = set(kw) - _KEYS
    if bad:
        raise TypeError("starlops.%s: unknown option(s) %s" % (name, ", ".join(sorted(bad))))
    o = C.solver_options_t()
    lib.sl_solver_options_default(ctypes.byref(o))
    keep = []
    for k, v in kw.items():
        if v is None:
            continue
        if k == "x0":
            o.x0 = v._h
        elif k == "tol_rule":
            o.tol_rule = _RULES[v] if isinstance(v, str) else int(v)
        elif k == "thresh":
            o.thresh = _THRESH[v] if isinstance(v, str) else int(v)
        elif k == "decay":
            arr = np.ascontiguousarray(v, dtype=np.float64)
            keep.append(arr)
            o.decay = arr.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
        elif k in ("callback", "calc_var", "cost"):
            continue
        else:
            setattr(o, k, float(v) if isinstance(getattr(o, k), float) else int(v))
    x = x if x is not None else A.domain_array()
    if kw.get("callback") is not None:  # callback(iteration, x) -> True to stop
        def tramp(it, xh, user, f=kw["callback"], xa=x):
            return 1 if f(it, xa) else 0
        cb = C.CALLBACK(tramp)
        keep.append(cb)
        o.callback = cb
    cost = np.full(o.niter + 1, np.nan) if kw.get("cost") else None
    if cost is not None:
        o.cost = cost.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
    var = x.empty_like() if kw.get("calc_var") else None
    if var is not None:
        o.var = var._h
    info = C.solver_info_t()
    check(fn(A._h, y._h, x._h, ctypes.byref(o), ctypes.byref(info)))
    si = SolverInfo(info.iterations, info.stop, lib.sl_stop_reason_name(info.stop).decode(), info.r0norm, info.rnorm,
                    info.r2norm, info.anorm, info.acond, info.arnorm, info.xnorm, info.alpha, info.host_syncs,
                    info.seconds, cost)
    return (x, si, var) if var is not None else (x, si)


def cg(A, y, x=None, **options):
    """Conjugate gradients for A x = y (A Hermitian positive definite); damp solves (A + damp^2 I) x = y.
    Returns (x, info)."""
    return _solve(lib.sl_solve_cg, "cg", A, y, x, **options)


def cgls(A, y, x=None, **options):
    """CGLS: min ||y - A x||^2 + damp^2 ||x||^2. Returns (x, info)."""
    return _solve(lib.sl_solve_cgls, "cgls", A, y, x, **options)


def lsqr(A, y, x=None, **options):
    """LSQR (scipy's rules: atol, btol, conlim, damp); calc_var=True also returns the variance estimate:
    (x, info, var)."""
    return _solve(lib.sl_solve_lsqr, "lsqr", A, y, x, **options)


def ista(A, y, x=None, **options):
    """ISTA for 1/2 ||y - A x||^2 + eps ||x||_1 (thresh "soft", "hard", "half"; decay; perc). Returns (x, info)."""
    return _solve(lib.sl_solve_ista, "ista", A, y, x, **options)


def fista(A, y, x=None, **options):
    """FISTA: ISTA with Nesterov's momentum. Returns (x, info)."""
    return _solve(lib.sl_solve_fista, "fista", A, y, x, **options)


def power_iteration(A, niter=30, tol=1e-5, seed=0):
    """The largest-modulus eigenvalue estimate of a square A and the iterations it took."""
    eig = C.cscalar()
    iters = ctypes.c_int()
    check(lib.sl_power_iteration(A._h, int(niter), float(tol), int(seed), ctypes.byref(eig), ctypes.byref(iters)))
    return complex(eig.re, eig.im), iters.value
