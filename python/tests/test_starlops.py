"""The Python interface under mpirun (1 and 2 ranks in make check): arrays to and from NumPy, wrapped buffers,
.npy files, reductions, operators and their algebra against dense NumPy matrices built from the formulas, dot
tests, the solvers against numpy.linalg, and errors. MPI is started by mpi4py (imported first), as in a
pylops-mpi script."""
import os

from mpi4py import MPI  # noqa: F401  (MPI started by mpi4py, then starlops joins it)
import numpy as np
import pytest

import starlops as sl

COMM = MPI.COMM_WORLD
P, R = COMM.Get_size(), COMM.Get_rank()
DTYPES = [np.float32, np.float64, np.complex64, np.complex128]


def tol(dt):
    return 1e-5 if np.dtype(dt) in (np.dtype(np.float32), np.dtype(np.complex64)) else 1e-12


def values(shape, dt, seed=0):
    n = int(np.prod(shape))
    g = np.arange(n, dtype=np.float64)
    v = np.sin(0.37 * g + seed) + 0.25 * seed
    if np.iscomplexobj(np.empty(0, dt)):
        v = v + 1j * np.cos(0.21 * g - seed)
    return v.reshape(shape).astype(dt)


@pytest.mark.parametrize("dt", DTYPES)
def test_roundtrip_uneven(dt):
    g = values((7, 5), dt, 1)
    for axis in (0, 1):
        a = sl.Array.from_numpy(g, axis=axis)
        assert a.shape == (7, 5) and a.dtype == np.dtype(dt) and a.axis == axis
        np.testing.assert_array_equal(a.to_numpy(), g)
        lo = a.local_offset
        loc = a.local
        np.testing.assert_array_equal(loc, np.take(g, range(lo, lo + loc.shape[axis]), axis=axis))


def test_rank_owning_nothing():
    g = values((6,), np.float64)
    n = 6 if R == 0 else 0  # every row on rank 0
    a = sl.Array.from_numpy(g, local_n=n)
    assert a.local_shape == (n,)
    np.testing.assert_array_equal(a.to_numpy(), g)
    assert abs(a.norm() - np.linalg.norm(g)) < 1e-12


def test_wrap_is_not_a_copy():
    n = 4 + R  # uneven blocks
    block = np.full(n, 1.0 + R)
    a = sl.Array.wrap(block, (sum(4 + r for r in range(P)),))
    a.axpby(0.0, a.copy(), 3.0)  # a = 3 a, computed in block itself
    sl.wait()
    with a.local_view("r") as v:
        np.testing.assert_array_equal(v, 3.0 * (1.0 + R))
    np.testing.assert_array_equal(block, 3.0 * (1.0 + R))


def test_sync_and_device_wrap_refused_without_gpu():
    block = np.full(3, 2.0)
    a = sl.Array.wrap(block, (3 * P,))
    a.fill(5.0)
    a.sync()
    np.testing.assert_array_equal(block, 5.0)
    if sl.workers()[1] == 0:  # no CUDA worker: wrapping device memory is refused on every rank

        class FakeDevice:
            __cuda_array_interface__ = {"shape": (3,), "typestr": "<f8", "data": (0, False), "version": 3}

        with pytest.raises(sl.StarlopsError) as e:
            sl.Array.wrap_cupy(FakeDevice(), (3 * P,))
        assert e.value.code == -6 and "CUDA worker" in str(e.value)


def test_npy_files():
    path = COMM.bcast(os.path.join("/tmp", "starlops-pytest-%d.npy" % os.getpid()) if R == 0 else None)
    g = values((9, 4), np.complex128, 2)
    a = sl.Array.from_numpy(g, axis=1)
    a.save_npy(path)
    COMM.Barrier()
    if R == 0:
        np.testing.assert_array_equal(np.load(path), g)
    b = sl.Array.load_npy(path)
    np.testing.assert_array_equal(b.to_numpy(), g)
    COMM.Barrier()
    if R == 0:
        os.remove(path)


@pytest.mark.parametrize("dt", DTYPES)
def test_reductions_and_arithmetic(dt):
    gx, gy = values((11,), dt, 1), values((11,), dt, 2)
    x, y = sl.Array.from_numpy(gx), sl.Array.from_numpy(gy)
    assert abs(x.dot(y) - np.sum(gx * gy)) <= tol(dt) * 20
    assert abs(x.vdot(y) - np.vdot(gx, gy)) <= tol(dt) * 20
    assert abs(x.norm() - np.linalg.norm(gx)) <= tol(dt) * 10
    assert abs(x.norm(1) - np.sum(np.abs(gx))) <= tol(dt) * 20
    assert abs(x.norm(np.inf) - np.max(np.abs(gx))) <= tol(dt) * 2
    np.testing.assert_allclose((2.0 * x - y).to_numpy(), 2.0 * gx - gy, rtol=tol(dt), atol=tol(dt))
    np.testing.assert_allclose((x * y).to_numpy(), gx * gy, rtol=tol(dt), atol=tol(dt))


def matrix(rows, cols, seed, row0=0):
    """A full-rank test matrix from a formula (rows row0 .. row0 + rows - 1 of a global one)."""
    i = np.arange(row0, row0 + rows, dtype=np.float64)[:, None]
    j = np.arange(cols, dtype=np.float64)[None, :]
    return np.sin(0.37 * i * i + 1.3 * i * j + 0.71 * j + 0.1 * seed) + (i == j) * 0.5


def first_derivative_forward(n):
    D = np.zeros((n, n))
    for i in range(n - 1):
        D[i, i], D[i, i + 1] = -1.0, 1.0
    return D


@pytest.mark.parametrize("dt", [np.float64, np.complex128])
def test_operators_and_algebra(dt):
    n0, n1 = 9, 4
    g = values((n0, n1), dt, 3)
    x = sl.Array.from_numpy(g)
    D0 = sl.FirstDerivative(x, axis=0, kind="forward")
    Dd = np.kron(first_derivative_forward(n0), np.eye(n1))  # the dense operator from the formula
    np.testing.assert_allclose((D0 @ x).to_numpy().ravel(), Dd @ g.ravel(), atol=1e-12)
    np.testing.assert_allclose(D0.rmatvec(x).to_numpy().ravel(), Dd.T @ g.ravel(), atol=1e-12)
    d = values((n0, n1), dt, 4)
    Dg = sl.Diagonal(sl.Array.from_numpy(d))
    A = 2.0 * D0.H @ Dg + D0.H @ D0 - sl.Identity(x)
    Ad = 2.0 * Dd.T @ np.diag(d.ravel()) + Dd.T @ Dd - np.eye(n0 * n1)
    np.testing.assert_allclose((A @ x).to_numpy().ravel(), Ad @ g.ravel(), atol=1e-11)
    np.testing.assert_allclose((A.H @ x).to_numpy().ravel(), Ad.conj().T @ g.ravel(), atol=1e-11)
    assert A.shape == (n0 * n1, n0 * n1)
    fft = sl.FFT(x, axes=[0, 1]) if np.iscomplexobj(g) else sl.FFT(x, axes=[1], real=True)
    for op in (D0, Dg, A, sl.Laplacian(x), sl.Gradient(x, kind="forward"), fft):
        assert sl.dottest(op) < 1e-13, op
    G = sl.Gradient(x, kind="forward")
    parts = (G @ x).to_numpy()
    assert len(parts) == 2
    np.testing.assert_allclose(parts[0].ravel(), Dd @ g.ravel(), atol=1e-12)


def test_nonstationary_convolve1d():
    n0, n1 = 6, 11
    g = values((n0, n1), np.float64, 2)
    x = sl.Array.from_numpy(g)  # rows over the ranks: convolve along axis 1
    hs = np.array([[1.0, 2.0, 0.5], [-1.0, 0.5, 3.0], [0.25, 1.0, -2.0]])
    ih = [2, 5, 8]
    op = sl.NonStationaryConvolve1D(x, hs, ih, axis=1)
    M = np.zeros((n1, n1))  # pylops' definition: column ix holds the interpolated filter centred on row ix
    for ix in range(n1):
        t = (ix - ih[0]) / 3.0
        i0 = int(np.floor(t))
        h = hs[0] if i0 < 0 else hs[-1] if i0 >= len(ih) - 1 else (1 - (t - i0)) * hs[i0] + (t - i0) * hs[i0 + 1]
        for j in range(3):
            if 0 <= ix + j - 1 < n1:
                M[ix + j - 1, ix] = h[j]
    np.testing.assert_allclose((op @ x).to_numpy(), g @ M.T, atol=1e-12)
    np.testing.assert_allclose(op.rmatvec(x).to_numpy(), g @ M, atol=1e-12)
    assert sl.dottest(op) < 1e-13


def test_restriction_along_axes():
    g = values((10, 6), np.complex128, 3)
    x = sl.Array.from_numpy(g)
    keep = [1, 4, 5, 9]
    R0 = sl.Restriction(x, keep, axis=0)  # the distributed axis
    np.testing.assert_array_equal((R0 @ x).to_numpy(), g[keep])
    R1 = sl.Restriction(x, [5, 0, 0], axis=1)  # any order, a repeat
    np.testing.assert_array_equal((R1 @ x).to_numpy(), g[:, [5, 0, 0]])
    back = np.zeros_like(g)
    np.add.at(back, (slice(None), [5, 0, 0]), g[:, [5, 0, 0]])
    np.testing.assert_allclose(R1.rmatvec(R1 @ x).to_numpy(), back)
    assert sl.dottest(R0) < 1e-13 and sl.dottest(R1) < 1e-13


def test_fft_options_and_roll():
    g = values((10, 6), np.complex128, 4)
    x = sl.Array.from_numpy(g)
    F = sl.FFT(x, axes=[0], nfft=[16], ifftshift_before=True, fftshift_after=True)
    ref = np.fft.fftshift(np.fft.fft(np.fft.ifftshift(g, axes=0), n=16, axis=0, norm="ortho"), axes=0)
    np.testing.assert_allclose((F @ x).to_numpy(), ref, atol=1e-12)
    assert sl.dottest(F) < 1e-13
    for axis, shift in ((0, 3), (1, -2)):
        np.testing.assert_array_equal((sl.Roll(x, axis, shift) @ x).to_numpy(), np.roll(g, shift, axis=axis))


def test_proximal_operators_and_solvers():
    g = values((12, 5), np.float64, 1)
    x = sl.Array.from_numpy(g)
    l1 = sl.L1(0.3)
    np.testing.assert_allclose(l1.prox(x, 0.5).to_numpy(), np.sign(g) * np.maximum(np.abs(g) - 0.15, 0), atol=1e-14)
    np.testing.assert_allclose(l1.proxdual(x, 0.5).to_numpy(), np.clip(g, -0.3, 0.3), atol=1e-14)
    assert abs(l1(x) - 0.3 * np.abs(g).sum()) < 1e-12
    box = sl.Box(-0.2, 0.4)
    np.testing.assert_allclose(box.prox(x, 1.0).to_numpy(), np.clip(g, -0.2, 0.4))
    pre = l1.precomposition(2.0, 0.1)
    np.testing.assert_allclose(pre.prox(x, 0.5).to_numpy(),
                               (np.sign(2 * g + 0.1) * np.maximum(np.abs(2 * g + 0.1) - 4 * 0.15, 0) - 0.1) / 2, atol=1e-14)
    # TV denoising with PrimalDual against a few iterations written with NumPy
    b = sl.Array.from_numpy(g)
    G = sl.Gradient(b, kind="forward")
    f, tv = sl.L2(b=b), sl.L21(0.2)
    xs = b.empty_like()
    tau = mu = 0.95 / np.sqrt(8.0)
    xs, info = sl.PrimalDual(f, tv, G, xs, niter=6, tau=tau, mu=mu, cost=True)
    n0, n1 = g.shape

    def grad(u):
        g0, g1 = np.zeros_like(u), np.zeros_like(u)
        g0[:-1] = u[1:] - u[:-1]
        g1[:, :-1] = u[:, 1:] - u[:, :-1]
        return g0, g1

    def grad_h(y0, y1):
        u = np.zeros_like(y0)
        u[:-1] -= y0[:-1]
        u[1:] += y0[:-1]
        u[:, :-1] -= y1[:, :-1]
        u[:, 1:] += y1[:, :-1]
        return u

    xr, xh = np.zeros_like(g), np.zeros_like(g)
    y0, y1 = np.zeros_like(g), np.zeros_like(g)
    for _ in range(6):  # gfirst, theta 1
        a0, a1 = grad(xh)
        y0, y1 = y0 + mu * a0, y1 + mu * a1
        nrm = np.maximum(np.sqrt(y0 ** 2 + y1 ** 2) / 0.2, 1.0)
        y0, y1 = y0 / nrm, y1 / nrm
        xo = xr
        xr = (xr - tau * grad_h(y0, y1) + tau * g) / (1 + tau)
        xh = 2 * xr - xo
    np.testing.assert_allclose(xs.to_numpy(), xr, atol=1e-12)
    assert info.iterations == 6 and np.isfinite(info.cost[1:7]).all()
    # lasso by ProximalGradient (FISTA) and by ADMM: the same minimiser of a diagonal problem
    d = sl.Array.from_numpy(1.0 + 0.5 * np.abs(values((12, 5), np.float64, 7)))
    D = sl.Diagonal(d)
    dd = d.to_numpy()
    xp, _ = sl.ProximalGradient(sl.L2(D, b), sl.L1(0.1), b.empty_like(), niter=300, acceleration="fista")
    ref = np.sign(g / dd) * np.maximum(np.abs(g / dd) - 0.1 / dd ** 2, 0)
    np.testing.assert_allclose(xp.to_numpy(), ref, atol=1e-9)
    xb, ib = sl.ProximalGradient(sl.L2(D, b), sl.L1(0.1), b.empty_like(), niter=300, acceleration="fista", backtracking=True)
    np.testing.assert_allclose(xb.to_numpy(), ref, atol=1e-6)  # smaller steps: slower to converge
    assert ib.alpha < 1.0  # halved from 1 at least once (||D||^2 > 1)
    xa, _ = sl.ADMML2(sl.L1(0.1), D, b, None, b.empty_like(), niter=300, tau=1.0, inner_niter=20)
    np.testing.assert_allclose(xa.to_numpy(), ref, atol=1e-7)


def test_sliding1d():
    d = sl.Array.from_numpy(np.zeros((5, 23)))  # traces over the ranks, windows along time
    M = np.cos(np.add.outer(0.3 * np.arange(8), 0.7 * np.arange(6)))
    S = sl.Sliding1D(d, M, nwin=8, nover=0, axis=1, tapertype=None)
    assert S.shape == (5 * 23, 5 * 2 * 6)  # (data, model)
    m = sl.Array.from_numpy(values((5, 2, 6), np.float64, 2))
    y = (S @ m).to_numpy()
    ref = np.zeros((5, 23))
    for w in range(2):
        ref[:, 8 * w:8 * w + 8] = m.to_numpy()[:, w] @ M.T
    np.testing.assert_allclose(y, ref, atol=1e-12)
    assert sl.dottest(S) < 1e-13


def test_sliding1d_distributed_axis():
    d = sl.Array.from_numpy(np.zeros(37))  # one long trace over the ranks, windows across their boundaries
    M = np.cos(np.add.outer(0.3 * np.arange(9), 0.7 * np.arange(4)))
    S = sl.Sliding1D(d, M, nwin=9, nover=3, axis=0, tapertype=None)
    nwins = (37 - 9) // 6 + 1
    assert S.shape == (37, nwins * 4)
    # the model is split by the windows' starts: take its local extents from the operator's domain
    m = sl.Array.from_numpy(values((nwins, 4), np.float64, 3), local_n=S.domain_array().local_shape[0])
    y = (S @ m).to_numpy()
    ref = np.zeros(37)
    for w in range(nwins):
        ref[6 * w:6 * w + 9] += M @ m.to_numpy()[w]
    np.testing.assert_allclose(y, ref, atol=1e-12)
    assert sl.dottest(sl.Sliding1D(d, M, nwin=9, nover=3, axis=0, tapertype="hanning")) < 1e-13


def test_l21_along_an_axis():
    # groups along axis 1 (local) and axis 0 (the distributed one: lines across ranks)
    xn = values((13, 3), np.float64, 9)
    x = sl.Array.from_numpy(xn)
    for axis in (1, 0):
        f = sl.L21(0.4, like=x, axis=axis)
        g = np.linalg.norm(xn, axis=axis, keepdims=True)
        ref = xn * np.maximum(1 - 0.6 * 0.4 / g, 0)
        np.testing.assert_allclose(f.prox(x, 0.6).to_numpy(), ref, atol=1e-12)
        assert abs(f(x) - 0.4 * g.sum()) < 1e-10 * (1 + g.sum())
    # a distributed 1-D array: one group, the whole vector
    vn = values((2 + P,), np.float64, 5)
    v = sl.Array.from_numpy(vn)
    nv = np.linalg.norm(vn)
    f = sl.L21(0.3 * nv, like=v, axis=0)
    np.testing.assert_allclose(f.prox(v, 2.0).to_numpy(), vn * (1 - 0.6), atol=1e-12)
    np.testing.assert_allclose(f.prox(v, 4.0).to_numpy(), 0 * vn, atol=1e-12)
    assert abs(f(v) - 0.3 * nv * nv) < 1e-12 * (1 + nv * nv)


def test_sliding1d_any_operator():
    # an inverse FFT per window (the windows' operator after FFT^H along the window axis), against the dense
    # inverse DFT per window; the windows themselves (M = None) against the identity matrix
    d = sl.Array.from_numpy(np.zeros((5, 23), dtype=np.complex128))
    q = np.arange(8)
    Finv = np.exp(2j * np.pi * np.outer(q, q) / 8) / np.sqrt(8)
    for axis, like in ((1, d), (0, sl.Array.from_numpy(np.zeros((37, 3), dtype=np.complex128)))):
        S = sl.Sliding1D(like, lambda w: sl.FFT(w, axes=[axis + 1]).H, nwin=8, nover=2, axis=axis)
        D = sl.Sliding1D(like, Finv, nwin=8, nover=2, axis=axis)
        m = D.domain_array()
        m.fill_random(3)
        np.testing.assert_allclose((S @ m).to_numpy(), (D @ m).to_numpy(), atol=1e-12)
        y = D.range_array()
        y.fill_random(4)
        np.testing.assert_allclose((S.H @ y).to_numpy(), (D.H @ y).to_numpy(), atol=1e-12)
        assert sl.dottest(S) < 1e-13
        Wn = sl.Sliding1D(like, None, nwin=8, nover=2, axis=axis, tapertype="cosine")
        E = sl.Sliding1D(like, np.eye(8), nwin=8, nover=2, axis=axis, tapertype="cosine")
        np.testing.assert_allclose((Wn @ m).to_numpy(), (E @ m).to_numpy(), atol=1e-12)


def test_patch2d():
    d = sl.Array.from_numpy(np.zeros((3, 12, 10)))  # slices over the ranks, patches over the last two axes
    M0 = np.cos(np.add.outer(0.3 * np.arange(6), 0.7 * np.arange(4)))
    M1 = np.sin(np.add.outer(0.2 * np.arange(5), 0.5 * np.arange(3)) + 0.1)
    S = sl.Patch2D(d, M0, M1, nwin=(6, 5), nover=(0, 0), tapertype=None)
    assert S.shape == (3 * 12 * 10, 3 * 2 * 4 * 2 * 3)
    m = sl.Array.from_numpy(values((3, 2, 4, 2, 3), np.float64, 4))
    y = (S @ m).to_numpy()
    mm, ref = m.to_numpy(), np.zeros((3, 12, 10))
    for w0 in range(2):
        for w1 in range(2):
            ref[:, 6 * w0:6 * w0 + 6, 5 * w1:5 * w1 + 5] = np.einsum("qj,rk,ajk->aqr", M0, M1, mm[:, w0, :, w1, :])
    np.testing.assert_allclose(y, ref, atol=1e-12)
    assert sl.dottest(sl.Patch2D(d, M0, M1, nwin=(6, 5), nover=(3, 2), tapertype="hanning")) < 1e-13


def test_patch2d_dense():
    d = sl.Array.from_numpy(np.zeros((3, 12, 10)))
    M0 = np.cos(np.add.outer(0.3 * np.arange(6), 0.7 * np.arange(4)))
    M1 = np.sin(np.add.outer(0.2 * np.arange(5), 0.5 * np.arange(3)) + 0.1)
    # the Kronecker product gives the separable operator
    K = sl.Patch2DDense(d, np.kron(M0, M1), nop=(4, 3), nwin=(6, 5), nover=(3, 2))
    S = sl.Patch2D(d, M0, M1, nwin=(6, 5), nover=(3, 2))
    m = K.domain_array()
    m.fill_random(7)
    np.testing.assert_allclose((K @ m).to_numpy(), (S @ m).to_numpy(), atol=1e-12)
    # a matrix that is not one: against the definition, no overlap
    M = np.cos(np.add.outer(0.11 * np.arange(30), 0.37 * np.arange(12)))
    D = sl.Patch2DDense(d, M, nop=(4, 3), nwin=(6, 5), nover=(0, 0), tapertype=None)
    x = sl.Array.from_numpy(values((3, 2, 4, 2, 3), np.float64, 4))
    y, xx, ref = (D @ x).to_numpy(), x.to_numpy(), np.zeros((3, 12, 10))
    for w0 in range(2):
        for w1 in range(2):
            p = np.einsum("qj,aj->aq", M, xx[:, w0, :, w1, :].reshape(3, 12))
            ref[:, 6 * w0:6 * w0 + 6, 5 * w1:5 * w1 + 5] = p.reshape(3, 6, 5)
    np.testing.assert_allclose(y, ref, atol=1e-12)
    assert sl.dottest(D) < 1e-13
    # an image split over the ranks, patches over both axes: the distributed one exchanges ghost patches and rows
    im = sl.Array.from_numpy(np.zeros((23, 10)))
    K2 = sl.Patch2DDense(im, np.kron(M0, M1), nop=(4, 3), nwin=(6, 5), nover=(3, 2), axes=(0, 1))
    S2 = sl.Patch2D(im, M0, M1, nwin=(6, 5), nover=(3, 2), axes=(0, 1))
    m2 = K2.domain_array()
    m2.fill_random(5)
    np.testing.assert_allclose((K2 @ m2).to_numpy(), (S2 @ m2).to_numpy(), atol=1e-12)
    assert sl.dottest(K2) < 1e-13
    # a 2-D inverse FFT per patch (over the patch axes 1 and 3 of the patches' array), against its dense matrix
    imc = sl.Array.from_numpy(np.zeros((23, 10), dtype=np.complex128))
    q0, q1 = np.arange(6), np.arange(5)
    F2 = np.kron(np.exp(2j * np.pi * np.outer(q0, q0) / 6), np.exp(2j * np.pi * np.outer(q1, q1) / 5)) / np.sqrt(30)
    P = sl.Patch2DDense(imc, lambda w: sl.FFT(w, axes=[1, 3]).H, nop=None, nwin=(6, 5), nover=(3, 2), axes=(0, 1))
    Q = sl.Patch2DDense(imc, F2, nop=(6, 5), nwin=(6, 5), nover=(3, 2), axes=(0, 1))
    mc = Q.domain_array()
    mc.fill_random(6)
    np.testing.assert_allclose((P @ mc).to_numpy(), (Q @ mc).to_numpy(), atol=1e-12)
    assert sl.dottest(P) < 1e-13


def test_more_constructors():
    # Fredholm1: this rank's slices; CSR: this rank's sparse block; both block diagonal over the ranks
    G = values((2 + R, 3, 4), np.complex128, 5 + R)
    F = sl.Fredholm1(G, nz=2)
    assert F.shape == (sum(2 + r for r in range(P)) * 3 * 2, sum(2 + r for r in range(P)) * 4 * 2)
    m = F.domain_array().fill_random(3)
    ml = m.local
    np.testing.assert_allclose((F @ m).local, np.einsum("kxy,kyz->kxz", G, ml), atol=1e-12)
    ip, ix, dv = np.array([0, 2, 3]), np.array([0, 2, 1]), np.array([1.0, -2.0, 0.5])
    S = sl.CSR(ip, ix, dv, (2, 3))
    x = S.domain_array().fill(1.0)
    np.testing.assert_allclose((S @ x).local, [-1.0, 0.5])
    # several dense blocks per rank (MPIBlockDiag of MatrixMults)
    mine = [values((2 + b, 3), np.float64, 10 * R + b) for b in range(1 + R % 2)]
    BD = sl.BlockDiagMatrices(mine)
    xb = BD.domain_array().fill(1.0)
    np.testing.assert_allclose((BD @ xb).local, np.concatenate([b.sum(axis=1) for b in mine]), atol=1e-12)
    # SUMMA on a 1 x P grid against the dense product
    N, K, M = 5, 4, 3
    Ad = values((N, K), np.float64, 8)
    e = sl.summa_block(N, K, M, (1, P), R)
    op = sl.MPIMatrixMult(Ad[e[0]:e[0] + e[1], e[2]:e[2] + e[3]], N, K, M, (1, P))
    assert sl.dottest(op) < 1e-13
    # directional derivative, Halo, Redistribute: dot tests (their values are checked by the C tests)
    like = sl.Array.from_numpy(values((6, 5), np.float64, 1))
    for o in (sl.FirstDirectionalDerivative(like, v=[0.6, 0.8]), sl.SecondDirectionalDerivative(like, v=[1.0, 0.0]),
              sl.Halo((7, 4), (P, 1), (1, 1, 0, 0)), sl.Redistribute(like, sl.Array((6, 5), axis=1))):
        assert sl.dottest(o) < 1e-13, o


def test_matrix_blocks():
    rows, cols = 3 + R, 2 + R  # a different block on every rank
    blk = matrix(rows, cols, 5 + R)
    A = sl.MatrixMult(blk)
    x = A.domain_array().fill(1.0)
    y = (A @ x).to_numpy()
    blocks = COMM.allgather(blk)
    np.testing.assert_allclose(y, np.concatenate([b @ np.ones(b.shape[1]) for b in blocks]), atol=1e-12)


def test_cg_and_lsqr_against_numpy():
    n = 24
    g = values((n,), np.float64, 1)
    x = sl.Array.from_numpy(g)
    L = sl.SecondDerivative(x, kind="centered")
    A = sl.Identity(x) + L.H @ L  # SPD
    Ld = np.zeros((n, n))
    for i in range(1, n - 1):  # pylops' SecondDerivative without edge: the end rows are zero
        Ld[i, i - 1:i + 2] = [1.0, -2.0, 1.0]
    Ad = np.eye(n) + Ld.T @ Ld
    b = sl.Array.from_numpy(g)
    xs, info = sl.cg(A, b, niter=200, tol=1e-13)
    assert info.reason == "tolerance reached", info
    np.testing.assert_allclose(xs.to_numpy(), np.linalg.solve(Ad, g), rtol=1e-10, atol=1e-10)
    xd, _ = sl.cg(A, b, niter=200, tol=1e-13, damp=0.5)
    np.testing.assert_allclose(xd.to_numpy(), np.linalg.solve(Ad + 0.25 * np.eye(n), g), rtol=1e-10, atol=1e-10)
    # least squares with a VStack of dense row blocks: LSQR (with its variance estimate) and CGLS
    rows, cols = 10 + R, 6
    off = sum(10 + r for r in range(R))
    blk = matrix(rows, cols, 7, off)
    V = sl.VStackMatrix(blk)
    Vd = np.concatenate(COMM.allgather(blk))
    yv = values((Vd.shape[0],), np.float64, 2)
    y = V.range_array()
    with y.local_view("w") as loc:
        loc[:] = yv[off:off + rows]
    xl, info, var = sl.lsqr(V, y, niter=100, atol=1e-14, btol=1e-14, damp=0.3, calc_var=True, cost=True)
    N = Vd.T @ Vd + 0.09 * np.eye(cols)
    np.testing.assert_allclose(xl.to_numpy(), np.linalg.solve(N, Vd.T @ yv), rtol=1e-9)
    np.testing.assert_allclose(var.to_numpy(), np.diag(np.linalg.inv(N)), rtol=1e-8)
    assert info.cost is not None and np.isfinite(info.cost[:info.iterations + 1]).all()
    xc, _ = sl.cgls(V, y, niter=100, tol=1e-14, damp=0.3)
    np.testing.assert_allclose(xc.to_numpy(), xl.to_numpy(), rtol=1e-8)


def test_callback_and_options():
    g = values((16,), np.float64, 1)
    x = sl.Array.from_numpy(g)
    L = sl.SecondDerivative(x)
    A = sl.Identity(x) + L.H @ L
    seen = []

    def cb(it, xk):
        seen.append(it)
        return it == 3

    _, info = sl.cg(A, sl.Array.from_numpy(g), callback=cb, tol=0)
    assert seen == [1, 2, 3] and info.reason == "stopped by the callback"
    with pytest.raises(TypeError):
        sl.cg(A, x, not_an_option=1)


def test_errors_name_the_argument():
    x = sl.Array.from_numpy(values((8,), np.float64))
    y = sl.Array.from_numpy(values((9,), np.float64))
    with pytest.raises(sl.StarlopsError) as e:
        x.axpby(1.0, y, 1.0)
    assert e.value.code == -2 and "dims" in str(e.value)
    with pytest.raises(sl.StarlopsError) as e:
        sl.FirstDerivative(x, axis=3)
    assert "axis" in str(e.value)
    with pytest.raises(TypeError):
        sl.Array((4,), np.int32)
