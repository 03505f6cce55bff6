"""Linear operators: starlops' sl_op from Python, with pylops' algebra (A @ B, A + B, A - B, 2 * A, A.H, A.T)."""
import ctypes

import numpy as np

from . import _clib as C
from ._clib import check, lib
from .array import Array

FORWARD, ADJOINT = 0, 1
_KINDS = {"forward": 0, "backward": 1, "centered": 2}
_NORMS = {"ortho": 0, "none": 1, "1/n": 2}


def _kind(kind):
    if kind not in _KINDS:
        raise ValueError("starlops: kind must be 'forward', 'backward' or 'centered', not %r" % (kind,))
    return _KINDS[kind]


class Op:
    """A distributed linear operator. op @ x (or op.matvec(x)) applies it to an Array laid out like its domain,
    op.H @ y (or op.rmatvec(y)) its adjoint; both submit tasks and return the result array at once."""

    def __init__(self, handle, parts=()):
        self._h = handle
        self._parts = parts  # the Python objects the C operator refers to (kept alive with it)

    def __del__(self):
        h = getattr(self, "_h", None)
        if h is not None and h.value and lib.sl_initialized():
            lib.sl_op_destroy(ctypes.byref(h))

    @staticmethod
    def _make(fn, *args, parts=()):
        h = ctypes.c_void_p()
        check(fn(ctypes.byref(h), *args))
        return Op(h, parts)

    # ---- description --------------------------------------------------------------------------------
    @property
    def shape(self):
        return (lib.sl_op_nrows(self._h), lib.sl_op_ncols(self._h))

    @property
    def dtype(self):
        return C.NP_DTYPES[lib.sl_op_dtype(self._h)]

    @property
    def name(self):
        return lib.sl_op_name(self._h).decode()

    def __repr__(self):
        return "<starlops.Op %s, %d x %d, %s>" % (self.name, self.shape[0], self.shape[1], self.dtype)

    def domain_array(self):
        """Collective. A new zero array laid out like the domain."""
        h = ctypes.c_void_p()
        check(lib.sl_op_create_domain(self._h, ctypes.byref(h)))
        return Array(None, _handle=h)

    def range_array(self):
        """Collective. A new zero array laid out like the range."""
        h = ctypes.c_void_p()
        check(lib.sl_op_create_range(self._h, ctypes.byref(h)))
        return Array(None, _handle=h)

    # ---- application --------------------------------------------------------------------------------
    def matvec(self, x, out=None):
        out = out if out is not None else self.range_array()
        check(lib.sl_op_apply(self._h, FORWARD, x._h, out._h))
        return out

    def rmatvec(self, y, out=None):
        out = out if out is not None else self.domain_array()
        check(lib.sl_op_apply(self._h, ADJOINT, y._h, out._h))
        return out

    # ---- algebra ------------------------------------------------------------------------------------
    def __matmul__(self, other):
        if isinstance(other, Array):
            return self.matvec(other)
        return Op._make(lib.sl_op_product, self._h, other._h, parts=(self, other))

    def __add__(self, other):
        return Op._make(lib.sl_op_sum, self._h, other._h, parts=(self, other))

    def __sub__(self, other):
        return Op._make(lib.sl_op_diff, self._h, other._h, parts=(self, other))

    def __mul__(self, s):
        if isinstance(s, Array):
            return self.matvec(s)
        return Op._make(lib.sl_op_scaled, self._h, C.cs(s), parts=(self,))

    __rmul__ = __mul__

    def __neg__(self):
        return self * -1.0

    def __pow__(self, k):
        return Op._make(lib.sl_op_power, self._h, int(k), parts=(self,))

    @property
    def H(self):
        return Op._make(lib.sl_op_adjoint, self._h, parts=(self,))

    @property
    def T(self):
        return Op._make(lib.sl_op_transpose, self._h, parts=(self,))

    def conj(self):
        return Op._make(lib.sl_op_conj, self._h, parts=(self,))

    adjoint = property(lambda self: self.H)


# ---- constructors ------------------------------------------------------------------------------------
def Identity(like):
    return Op._make(lib.sl_op_identity, like._h)


def Zero(domain_like, range_like):
    return Op._make(lib.sl_op_zero, domain_like._h, range_like._h)


def Diagonal(d, like=None, axis=None):
    """Diagonal(d): y = d * x for an Array d. Diagonal(d, like, axis) with a NumPy vector d (pylops'
    Diagonal(diag, dims, axis)): d broadcast along axis of arrays laid out like `like`."""
    if axis is None:
        return Op._make(lib.sl_op_diagonal, d._h)
    v = np.ascontiguousarray(d, dtype=like.dtype)
    return Op._make(lib.sl_op_diagonal_axis, like._h, v.ctypes.data_as(ctypes.c_void_p), int(axis))


def _matrix(fn, A, nrhs):
    A = np.ascontiguousarray(np.atleast_2d(A))
    return Op._make(fn, A.ctypes.data_as(ctypes.c_void_p), A.shape[0], A.shape[1], int(nrhs), C.sl_dtype(A.dtype))


def MatrixMult(A_local, nrhs=1):
    """Block-diagonal MatrixMult: this rank's dense block A_local (y_r = A_r x_r); pylops-mpi's
    MPIBlockDiag of MatrixMult."""
    return _matrix(lib.sl_op_matrix, A_local, nrhs)


def BlockDiagMatrices(blocks):
    """pylops-mpi's MPIBlockDiag of a list of MatrixMult per rank: this rank's dense blocks (any sizes, possibly
    none), block diagonal."""
    dt = np.result_type(*blocks) if blocks else np.float64
    bs = [np.ascontiguousarray(np.atleast_2d(b), dtype=dt) for b in blocks]
    ptrs = (ctypes.c_void_p * max(len(bs), 1))(*[b.ctypes.data for b in bs])
    nr = (ctypes.c_int64 * max(len(bs), 1))(*[b.shape[0] for b in bs])
    nc = (ctypes.c_int64 * max(len(bs), 1))(*[b.shape[1] for b in bs])
    return Op._make(lib.sl_op_matrix_blocks, len(bs), ptrs, nr, nc, C.sl_dtype(dt), parts=tuple(bs))


def VStackMatrix(A_local, nrhs=1):
    """VStack of dense row blocks: x replicated, y split over the ranks (this rank's block A_local)."""
    return _matrix(lib.sl_op_vstack_matrix, A_local, nrhs)


def HStackMatrix(A_local, nrhs=1):
    """HStack of dense column blocks: x split over the ranks, y replicated."""
    return _matrix(lib.sl_op_hstack_matrix, A_local, nrhs)


def FirstDerivative(like, axis=0, sampling=1.0, kind="centered", order=3, edge=False):
    return Op._make(lib.sl_op_first_derivative, like._h, int(axis), float(sampling), _kind(kind), int(order), int(edge))


def SecondDerivative(like, axis=0, sampling=1.0, kind="centered", edge=False):
    return Op._make(lib.sl_op_second_derivative, like._h, int(axis), float(sampling), _kind(kind), int(edge))


def Laplacian(like, axes=None, weights=None, sampling=None, kind="centered", edge=False):
    axes = list(range(like.ndim)) if axes is None else list(axes)
    n = len(axes)
    ax = (ctypes.c_int * n)(*axes)
    w = (ctypes.c_double * n)(*(weights if weights is not None else [1.0] * n))
    s = (ctypes.c_double * n)(*(sampling if sampling is not None else [1.0] * n))
    return Op._make(lib.sl_op_laplacian, like._h, n, ax, w, s, _kind(kind), int(edge))


def Gradient(like, sampling=None, kind="centered", edge=False):
    """The VStack of first derivatives along every axis; its range is a stacked Array."""
    s = (ctypes.c_double * like.ndim)(*(sampling if sampling is not None else [1.0] * like.ndim))
    return Op._make(lib.sl_op_gradient, like._h, s, _kind(kind), int(edge))


def FFT(like, axes=None, norm="ortho", real=False, out_axis=-1, nfft=None, ifftshift_before=False, fftshift_after=False):
    """Distributed FFT over axes (default: the last one); nfft (one per axis) pads or truncates the input,
    ifftshift_before / fftshift_after (a bool, or one per axis) apply numpy's shifts, as pylops' FFT."""
    axes = [like.ndim - 1] if axes is None else list(axes)
    n = len(axes)
    ax = (ctypes.c_int * n)(*axes)
    if nfft is None and not ifftshift_before and not fftshift_after:
        return Op._make(lib.sl_op_fft, like._h, n, ax, _NORMS[norm], int(real), int(out_axis))
    per = lambda v: list(v) if isinstance(v, (list, tuple, np.ndarray)) else [v] * n
    nf = (ctypes.c_int64 * n)(*(per(nfft) if nfft is not None else [like.shape[a] for a in axes]))
    ib = (ctypes.c_int * n)(*[int(bool(v)) for v in per(ifftshift_before)])
    fa = (ctypes.c_int * n)(*[int(bool(v)) for v in per(fftshift_after)])
    return Op._make(lib.sl_op_fft_nfft, like._h, n, ax, nf, _NORMS[norm], int(real), ib, fa)


def Roll(like, axis=-1, shift=1):
    """numpy.roll as an operator (pylops' Roll), along any axis, the distributed one too."""
    return Op._make(lib.sl_op_roll, like._h, int(axis), int(shift))


def NonStationaryConvolve1D(like, hs, ih, axis=-1):
    """pylops' NonStationaryConvolve1D: the filters hs (nfilt x hsize, hsize odd) at the regularly spaced
    indices ih, interpolated in between, convolved along axis (not the distributed one)."""
    h = np.ascontiguousarray(np.atleast_2d(hs), dtype=like.dtype)
    idx = np.ascontiguousarray(ih, dtype=np.int64)
    return Op._make(lib.sl_op_nonstationary_convolve1d, like._h, h.ctypes.data_as(ctypes.c_void_p), h.shape[0],
                    h.shape[1], idx.ctypes.data_as(C.c_int64_p), int(axis))


def Restriction(like, iava, axis=-1):
    """pylops' Restriction(dims, iava, axis): keeps the planes iava (global indices) along axis."""
    idx = np.ascontiguousarray(iava, dtype=np.int64)
    return Op._make(lib.sl_op_restriction_axis, like._h, idx.ctypes.data_as(C.c_int64_p), len(idx), int(axis))


_TAPERS = {None: 0, "none": 0, "hanning": 1, "cosine": 2, "cosinesquare": 3}


def _per_window(W, M):
    """The windows' operator W after M(windows), M a callable building any operator whose range is laid out like
    W's domain (it receives an array laid out that way)."""
    return W @ M(W.domain_array())


def Sliding1D(like, M, nwin, nover, axis=-1, tapertype="hanning"):
    """pylops' Sliding1D along axis of the data laid out like `like`, the operator on every window given by M:
    a dense matrix (nwin x nm; the model has the axis replaced by (nwins, nm)); None, the windows themselves
    (the model holds them: (nwins, nwin)); or any operator, as a callable that receives an array laid out like
    the windows and returns an operator whose range is laid out like it (e.g. ``lambda w: FFT(w, axes=[axis +
    1]).H`` for an inverse FFT per window), the model then being that operator's domain. Along the distributed
    axis (which must then be the first) each rank owns the windows that start in its rows; ghost windows and
    rows travel between ranks."""
    if M is None or callable(M):
        W = Op._make(lib.sl_op_sliding1d, like._h, int(axis), None, int(nwin), int(nwin), int(nover), _TAPERS[tapertype])
        return W if M is None else _per_window(W, M)
    m = np.ascontiguousarray(np.atleast_2d(M), dtype=like.dtype)
    return Op._make(lib.sl_op_sliding1d, like._h, int(axis), m.ctypes.data_as(ctypes.c_void_p), m.shape[1], int(nwin),
                    int(nover), _TAPERS[tapertype])


def Patch2D(like, M0, M1, nwin, nover, axes=(-2, -1), tapertype="hanning"):
    """pylops' Patch2D with the separable operator kron(M0, M1) on every patch (M0: nwin[0] x nop0, M1: nwin[1] x
    nop1), patches over two axes of the data laid out like `like` (either may be the distributed one); the model has
    each patch axis replaced by (nwins, nop). Sliding2D: nwin[1] the length of the second axis, nover[1] = 0."""
    m0 = np.ascontiguousarray(np.atleast_2d(M0), dtype=like.dtype)
    m1 = np.ascontiguousarray(np.atleast_2d(M1), dtype=like.dtype)
    ax = (ctypes.c_int * 2)(int(axes[0]), int(axes[1]))
    return Op._make(lib.sl_op_patch2d, like._h, ax, m0.ctypes.data_as(ctypes.c_void_p), m0.shape[1], int(nwin[0]),
                    int(nover[0]), m1.ctypes.data_as(ctypes.c_void_p), m1.shape[1], int(nwin[1]), int(nover[1]),
                    _TAPERS[tapertype])


def Patch2DDense(like, M, nop, nwin, nover, axes=(-2, -1), tapertype="hanning"):
    """pylops' Patch2D with any operator on a patch, patches over two axes of the data laid out like `like` (the
    patch axes may include the distributed one), tapers and model layout as Patch2D. M: the patch operator as a
    dense matrix ((nwin[0] nwin[1]) x (nop[0] nop[1]): row q0 nwin[1] + q1, column j0 nop[1] + j1), e.g. a Radon
    transform's; None, the patches themselves (nop = nwin; the model holds them); or a callable that receives an
    array laid out like the patches and returns an operator whose range is laid out like it (a 2-D FFT over
    the patch axes, say); the model is then that operator's domain."""
    ax = (ctypes.c_int * 2)(int(axes[0]), int(axes[1]))
    if M is None or callable(M):
        W = Op._make(lib.sl_op_patch2d_dense, like._h, ax, None, int(nwin[0]), int(nwin[1]), int(nwin[0]), int(nover[0]),
                     int(nwin[1]), int(nover[1]), _TAPERS[tapertype])
        return W if M is None else _per_window(W, M)
    m = np.ascontiguousarray(M, dtype=like.dtype)
    if m.shape != (nwin[0] * nwin[1], nop[0] * nop[1]):
        raise ValueError("Patch2DDense: M must be (nwin[0] nwin[1]) x (nop[0] nop[1]) = %d x %d, not %s"
                         % (nwin[0] * nwin[1], nop[0] * nop[1], m.shape))
    return Op._make(lib.sl_op_patch2d_dense, like._h, ax, m.ctypes.data_as(ctypes.c_void_p), int(nop[0]), int(nop[1]),
                    int(nwin[0]), int(nover[0]), int(nwin[1]), int(nover[1]), _TAPERS[tapertype])


def RestrictionLocal(like, idx_local):
    """sl_op_restriction: this rank's flat indices into its local block of `like`; the range is 1-D."""
    idx = np.ascontiguousarray(idx_local, dtype=np.int64)
    return Op._make(lib.sl_op_restriction, like._h, idx.ctypes.data_as(C.c_int64_p), len(idx))


def CSR(indptr, indices, data, shape):
    """A sparse block per rank (block diagonal over the ranks), scipy.sparse.csr_matrix's arrays."""
    rp = np.ascontiguousarray(indptr, dtype=np.int64)
    ci = np.ascontiguousarray(indices, dtype=np.int64)
    v = np.ascontiguousarray(data)
    return Op._make(lib.sl_op_csr, int(shape[0]), int(shape[1]), rp.ctypes.data_as(C.c_int64_p), ci.ctypes.data_as(C.c_int64_p),
                    v.ctypes.data_as(ctypes.c_void_p), C.sl_dtype(v.dtype))


def Fredholm1(G_local, nz=1):
    """pylops' Fredholm1 with the slices split over the ranks: G_local (nsl x nx x ny) this rank's slices."""
    G = np.ascontiguousarray(G_local)
    return Op._make(lib.sl_op_fredholm1, G.ctypes.data_as(ctypes.c_void_p), G.shape[0], G.shape[1], G.shape[2], int(nz),
                    C.sl_dtype(G.dtype))


def MPIMatrixMult(A_block, N, K, M, grid, kind="summa"):
    """pylops-mpi's MPIMatrixMult on a pr x pc grid: A_block this rank's block (summa: rows-block i by
    columns-block j of A; block: rows-block i with all K columns)."""
    A = np.ascontiguousarray(A_block)
    fn = lib.sl_op_matmul_summa if kind == "summa" else lib.sl_op_matmul_block
    return Op._make(fn, A.ctypes.data_as(ctypes.c_void_p), int(N), int(K), int(M), int(grid[0]), int(grid[1]), C.sl_dtype(A.dtype))


def summa_block(N, K, M, grid, rank):
    """This rank's extents in SUMMA's layout: (A/Y rows first, count, A columns first, count, X rows first,
    count, X/Y columns first, count)."""
    ext = (ctypes.c_int64 * 8)()
    check(lib.sl_op_summa_block(int(N), int(K), int(M), int(grid[0]), int(grid[1]), int(rank), ext))
    return tuple(ext)


def Redistribute(from_like, to_like):
    """The redistribution between two layouts of the same array as an operator."""
    return Op._make(lib.sl_op_redistribute, from_like._h, to_like._h)


def MDC(G_local, nfmax, ns, nr, nt, nv, dt=1.0, dr=1.0, twosided=False, dtype=np.float64):
    """pylops' MDC with G split along frequency (this rank's G_local slices: nfl x ns x nr, complex)."""
    G = np.ascontiguousarray(G_local)
    fn = lib.sl_op_mdc_twosided if twosided else lib.sl_op_mdc
    return Op._make(fn, G.ctypes.data_as(ctypes.c_void_p), G.shape[0], int(nfmax), int(ns), int(nr), int(nt), int(nv), float(dt),
                    float(dr), C.sl_dtype(dtype))


_BND = {"zero": 0, "periodic": 1, "reflect": 2}


def Halo(dims, grid, halo, boundary="zero", split="even", dtype=np.float64):
    """pylops-mpi's MPIHalo on a process grid (halo: 2 widths per axis, before and after; split "even" or
    "ceil", pylops-mpi's)."""
    nd = len(dims)
    d = (ctypes.c_int64 * nd)(*dims)
    g = (ctypes.c_int * nd)(*grid)
    h = (ctypes.c_int * (2 * nd))(*halo)
    return Op._make(lib.sl_op_halo_split, nd, d, g, h, _BND[boundary], 0 if split == "even" else 1, C.sl_dtype(dtype))


def _directions(like, v, vfield):
    vv = (ctypes.c_double * like.ndim)(*v) if v is not None else None
    vf = (ctypes.c_void_p * like.ndim)(*[a._h for a in vfield]) if vfield is not None else None
    return vv, vf


def FirstDirectionalDerivative(like, v=None, vfield=None, sampling=None, kind="centered", edge=False):
    """pylops' FirstDirectionalDerivative: one direction v, or one per point (vfield: ndim Arrays)."""
    vv, vf = _directions(like, v, vfield)
    s = (ctypes.c_double * like.ndim)(*(sampling if sampling is not None else [1.0] * like.ndim))
    return Op._make(lib.sl_op_first_directional_derivative, like._h, vv, vf, s, _kind(kind), int(edge), parts=(vfield,))


def SecondDirectionalDerivative(like, v=None, vfield=None, sampling=None, edge=False):
    vv, vf = _directions(like, v, vfield)
    s = (ctypes.c_double * like.ndim)(*(sampling if sampling is not None else [1.0] * like.ndim))
    return Op._make(lib.sl_op_second_directional_derivative, like._h, vv, vf, s, int(edge), parts=(vfield,))


def _stack(fn, ops):
    hs = (ctypes.c_void_p * len(ops))(*[o._h for o in ops])
    return Op._make(fn, len(ops), hs, parts=tuple(ops))


def VStack(ops):
    return _stack(lib.sl_op_vstack, ops)


def HStack(ops):
    return _stack(lib.sl_op_hstack, ops)


def BlockDiag(ops):
    return _stack(lib.sl_op_block_diag, ops)


def dottest(op, seed=0):
    """Collective. |v^H (A u) - (A^H v)^H u| / max of their moduli for random u, v (about 1e-15 in float64)."""
    err = ctypes.c_double()
    check(lib.sl_dottest(op._h, int(seed), ctypes.byref(err)))
    return err.value
