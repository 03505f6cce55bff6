"""Proximal operators (pyproximal's names) and the proximal solvers, over starlops' sl_prox."""
import ctypes

from . import _clib as C
from ._clib import check, lib
from .array import Array


class Prox:
    """A convex function f: prox(x, tau) = prox_(tau f)(x), proxdual(x, tau) = prox_(tau f*)(x), f(x), grad(x);
    each returns a new Array (tasks); f(x) waits for its reduction."""

    def __init__(self, handle, parts=()):
        self._h = handle
        self._parts = parts

    @staticmethod
    def _make(fn, *args, parts=()):
        h = ctypes.c_void_p()
        check(fn(ctypes.byref(h), *args))
        return Prox(h, parts)

    def __del__(self):
        h = getattr(self, "_h", None)
        if h is not None and h.value and lib.sl_initialized():
            lib.sl_prox_destroy(ctypes.byref(h))

    @property
    def name(self):
        return lib.sl_prox_name(self._h).decode()

    def __repr__(self):
        return "<starlops.Prox %s>" % self.name

    def prox(self, x, tau):
        out = x.empty_like()
        check(lib.sl_prox_apply(self._h, float(tau), x._h, out._h))
        return out

    def proxdual(self, x, tau):
        out = x.empty_like()
        check(lib.sl_prox_apply_dual(self._h, float(tau), x._h, out._h))
        return out

    def grad(self, x):
        out = x.empty_like()
        check(lib.sl_prox_gradient(self._h, x._h, out._h))
        return out

    def __call__(self, x):
        s = ctypes.c_void_p()
        check(lib.sl_scalar_create(ctypes.byref(s), 1))
        try:
            check(lib.sl_prox_value(self._h, x._h, s))
            v = C.cscalar()
            check(lib.sl_scalar_get_c(s, ctypes.byref(v)))
        finally:
            lib.sl_scalar_destroy(ctypes.byref(s))
        return v.re

    def precomposition(self, a, b=0.0):
        """g(x) = f(a x + b)."""
        return Prox._make(lib.sl_prox_precompose, self._h, float(a), float(b), parts=(self,))

    def postcomposition(self, a, b=0.0):
        """g(x) = a f(x) + b."""
        return Prox._make(lib.sl_prox_postcompose, self._h, float(a), float(b), parts=(self,))


def L1(sigma=1.0):
    return Prox._make(lib.sl_prox_l1, float(sigma))


def L2(Op=None, b=None, sigma=1.0, niter=10):
    """sigma / 2 ||Op x - b||^2 (Op None: the identity; b None: zero); with Op the prox runs niter CG steps."""
    return Prox._make(lib.sl_prox_l2, Op._h if Op is not None else None, b._h if b is not None else None, float(sigma),
                      int(niter), parts=(Op, b))


def L21(sigma=1.0, like=None, axis=None):
    """sigma sum_j ||x_j||_2 over the groups of a stacked Array (a Gradient's range); with `like` (a plain Array)
    and `axis`, the groups are the lines along that axis of arrays laid out like `like` (pyproximal's L21 on an
    array of ndim lines), the distributed axis included; a 1-D array is one group (sigma ||x||_2)."""
    if like is None:
        return Prox._make(lib.sl_prox_l21, float(sigma))
    return Prox._make(lib.sl_prox_l21_axis, like._h, int(axis), float(sigma))


def Box(lower=-float("inf"), upper=float("inf")):
    return Prox._make(lib.sl_prox_box, float(lower), float(upper))


_ACCEL = {None: 0, "none": 0, "fista": 1, "vandenberghe": 2}


def _options(niter, tol, show, cost, **kw):
    o = C.solver_options_t()
    lib.sl_solver_options_default(ctypes.byref(o))
    o.niter, o.tol, o.show = int(niter), float(tol), int(bool(show))
    for k, v in kw.items():
        if v is not None:
            setattr(o, k, float(v) if isinstance(getattr(o, k), float) else int(v))
    return o


def _run(fn, args, x, o, cost):
    import numpy as np
    from .solvers import SolverInfo
    hist = np.full(o.niter + 1, np.nan) if cost else None
    if hist is not None:
        o.cost = hist.ctypes.data_as(ctypes.POINTER(ctypes.c_double))
    info = C.solver_info_t()
    check(fn(*args, ctypes.byref(o), ctypes.byref(info)))
    return x, SolverInfo(info.iterations, info.stop, lib.sl_stop_reason_name(info.stop).decode(), info.r0norm, info.rnorm,
                         info.r2norm, info.anorm, info.acond, info.arnorm, info.xnorm, info.alpha, info.host_syncs,
                         info.seconds, hist)


def ProximalGradient(proxf, proxg, x, x0=None, niter=10, tau=0.0, epsg=1.0, acceleration=None, tol=0.0, show=False,
                     cost=False, backtracking=False, beta=0.5, niterback=10):
    """pyproximal's ProximalGradient: a constant step (tau 0: 1 / Lipschitz constant), or backtracking (from tau,
    else 1, times beta, niterback tries); x receives the solution, starting from x0 (None: zero). Returns
    (x, info)."""
    o = _options(niter, tol, show, cost, tau=tau, epsg=epsg, accel=_ACCEL[acceleration], backtrack=int(bool(backtracking)),
                 beta=beta, inner_niter=niterback)
    o.x0 = x0._h if x0 is not None else None
    return _run(lib.sl_solve_proximal_gradient, (proxf._h, proxg._h, x._h), x, o, cost)


def ADMML2(proxg, Op, b, A, x, x0=None, niter=10, tau=1.0, inner_niter=10, tol=0.0, show=False, cost=False):
    """pyproximal's ADMML2: min 1/2 ||Op x - b||^2 + g(A x) (A None: identity). Returns (x, info)."""
    o = _options(niter, tol, show, cost, tau=tau, inner_niter=inner_niter)
    o.x0 = x0._h if x0 is not None else None
    return _run(lib.sl_solve_admm_l2, (proxg._h, Op._h, b._h, A._h if A is not None else None, x._h), x, o, cost)


def PrimalDual(proxf, proxg, A, x, x0=None, niter=10, tau=0.0, mu=0.0, theta=1.0, gfirst=True, gamma=0.0, tol=0.0,
               show=False, cost=False):
    """pyproximal's PrimalDual (Chambolle-Pock) for min f(x) + g(A x); tau and mu 0: 0.95 / ||A||. Returns (x, info)."""
    o = _options(niter, tol, show, cost, tau=tau, mu=mu, theta=theta, gfirst=int(bool(gfirst)), gamma=gamma)
    o.x0 = x0._h if x0 is not None else None
    return _run(lib.sl_solve_primal_dual, (proxf._h, proxg._h, A._h, x._h), x, o, cost)
