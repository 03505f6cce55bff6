"""Distributed arrays: starlops' sl_array from Python, to and from NumPy."""
import contextlib
import ctypes

import numpy as np

from . import _clib as C
from ._clib import check, lib

SCATTER, BROADCAST = 0, 1
READ, WRITE, READ_WRITE = 1, 2, 3


def _host(a):
    """A C-contiguous NumPy array from a NumPy array or from a device array exposing __cuda_array_interface__
    (CuPy: copied to the host with cupy.asnumpy)."""
    if hasattr(a, "__cuda_array_interface__"):
        import cupy
        return np.ascontiguousarray(cupy.asnumpy(a))
    return np.ascontiguousarray(a)


def _dist(partition, axis, local_n=None):
    d = C.dist_t()
    d.partition = SCATTER if partition in ("scatter", SCATTER) else BROADCAST
    d.axis = int(axis)
    keep = None
    if local_n is not None:
        keep = ctypes.c_int64(int(local_n))
        d.local_n = ctypes.pointer(keep)
    return d, keep


class Array:
    """A distributed N-D array (pylops-mpi's DistributedArray): blocks along one axis over the ranks
    (partition "scatter") or a full copy on every rank ("broadcast"). Vector operations are tasks: they
    return at once, and reading the values (to_numpy, local, norm) waits for them."""

    def __init__(self, shape, dtype=np.float64, partition="scatter", axis=0, local_n=None, _handle=None, _keep=None):
        self._keep = _keep  # a wrapped NumPy buffer (or the parts of a stack) kept alive with the array
        if _handle is not None:
            self._h = _handle
            return
        shape = tuple(int(s) for s in np.atleast_1d(shape))
        dims = (ctypes.c_int64 * len(shape))(*shape)
        d, _n = _dist(partition, axis, local_n)
        h = ctypes.c_void_p()
        check(lib.sl_array_create(ctypes.byref(h), len(shape), dims, C.sl_dtype(dtype), ctypes.byref(d)))
        self._h = h

    # ---- construction ------------------------------------------------------------------------------
    @classmethod
    def from_numpy(cls, global_array, partition="scatter", axis=0, local_n=None):
        """Collective. An array holding global_array, which every rank passes whole (no data moves); a CuPy
        array is accepted (copied through the host)."""
        g = _host(global_array)
        a = cls(g.shape, g.dtype, partition, axis, local_n)
        check(lib.sl_array_scatter(a._h, -1, g.ctypes.data_as(ctypes.c_void_p)))
        return a

    @classmethod
    def wrap(cls, local_block, global_shape, axis=0, partition="scatter"):
        """Collective. An array whose local block IS local_block (C-contiguous; no copy): starlops computes in
        that buffer, which the array keeps alive."""
        if not isinstance(local_block, np.ndarray) or not local_block.flags["C_CONTIGUOUS"]:
            raise ValueError("starlops.Array.wrap: local_block must be a C-contiguous numpy array")
        shape = tuple(int(s) for s in global_shape)
        dims = (ctypes.c_int64 * len(shape))(*shape)
        d, _n = _dist(partition, axis, local_block.shape[axis] if partition in ("scatter", SCATTER) else None)
        h = ctypes.c_void_p()
        check(lib.sl_array_wrap(ctypes.byref(h), local_block.ctypes.data_as(ctypes.c_void_p), len(shape), dims,
                                C.sl_dtype(local_block.dtype), ctypes.byref(d)))
        return cls(None, _handle=h, _keep=local_block)

    @classmethod
    def wrap_cupy(cls, local_block, global_shape, axis=0, partition="scatter"):
        """Collective. An array whose local block IS the CuPy (or any __cuda_array_interface__) array local_block
        on its GPU (C-contiguous; no copy): tasks on that GPU compute in it; call sync() before reading it."""
        cai = local_block.__cuda_array_interface__
        if cai.get("strides") not in (None, ()):
            itemsize = np.dtype(cai["typestr"]).itemsize
            want = tuple(int(np.prod(cai["shape"][i + 1:])) * itemsize for i in range(len(cai["shape"])))
            if tuple(cai["strides"]) != want:
                raise ValueError("starlops.Array.wrap_cupy: local_block must be C-contiguous")
        shape = tuple(int(s) for s in global_shape)
        dims = (ctypes.c_int64 * len(shape))(*shape)
        d, _n = _dist(partition, axis, cai["shape"][axis] if partition in ("scatter", SCATTER) else None)
        device = getattr(getattr(local_block, "device", None), "id", 0)
        h = ctypes.c_void_p()
        check(lib.sl_array_wrap_device(ctypes.byref(h), ctypes.c_void_p(cai["data"][0]), int(device), len(shape), dims,
                                       C.sl_dtype(np.dtype(cai["typestr"])), ctypes.byref(d)))
        return cls(None, _handle=h, _keep=local_block)

    def sync(self):
        """Waits for the array's tasks and brings its values into the buffer it wraps (NumPy or CuPy)."""
        check(lib.sl_array_sync(self._h))
        return self

    @classmethod
    def load_npy(cls, path, partition="scatter", axis=0):
        """Collective. Reads a .npy file written on any number of ranks."""
        d, _n = _dist(partition, axis)
        h = ctypes.c_void_p()
        check(lib.sl_array_load_npy(ctypes.byref(h), str(path).encode(), ctypes.byref(d)))
        return cls(None, _handle=h)

    @classmethod
    def stack(cls, parts):
        """A stacked array of the given arrays (pylops-mpi's StackedDistributedArray); the parts become its own."""
        hs = (ctypes.c_void_p * len(parts))(*[p._h for p in parts])
        h = ctypes.c_void_p()
        check(lib.sl_array_stack(ctypes.byref(h), len(parts), hs))
        for p in parts:  # the stack owns them now
            p._h = ctypes.c_void_p()
        return cls(None, _handle=h)

    def empty_like(self):
        """Collective. A new zero array laid out like this one."""
        h = ctypes.c_void_p()
        check(lib.sl_array_create_like(ctypes.byref(h), self._h))
        return Array(None, _handle=h)

    def copy(self):
        out = self.empty_like()
        check(lib.sl_array_copy(out._h, self._h))
        return out

    def __del__(self):
        h = getattr(self, "_h", None)
        if h is not None and h.value and getattr(self, "_borrowed", False) is False and lib.sl_initialized():
            lib.sl_array_destroy(ctypes.byref(h))

    # ---- layout -------------------------------------------------------------------------------------
    @property
    def nparts(self):
        return lib.sl_array_stack_nparts(self._h)

    @property
    def parts(self):
        """The parts of a stacked array (views owned by the stack)."""
        out = []
        for i in range(self.nparts):
            a = Array(None, _handle=ctypes.c_void_p(lib.sl_array_stack_part(self._h, i)), _keep=self)
            a._borrowed = True
            out.append(a)
        return out

    @property
    def ndim(self):
        return lib.sl_array_ndim(self._h)

    @property
    def shape(self):
        p = lib.sl_array_dims(self._h)
        return tuple(p[i] for i in range(self.ndim))

    @property
    def local_shape(self):
        p = lib.sl_array_local_dims(self._h)
        return tuple(p[i] for i in range(self.ndim))

    @property
    def dtype(self):
        return C.NP_DTYPES[lib.sl_array_dtype(self._h)]

    @property
    def axis(self):
        return lib.sl_array_axis(self._h)

    @property
    def partition(self):
        return "scatter" if lib.sl_array_partition(self._h) == SCATTER else "broadcast"

    @property
    def local_offset(self):
        return lib.sl_array_local_offset(self._h)

    def __repr__(self):
        return "starlops.Array(shape=%s, dtype=%s, %s along axis %d, local %s)" % (
            self.shape, self.dtype, self.partition, self.axis, self.local_shape)

    # ---- data -------------------------------------------------------------------------------------
    def to_numpy(self, root=-1):
        """Collective. The global array on every rank (root -1) or on rank root (None elsewhere); a stacked
        array gives the list of its parts."""
        if self.nparts:
            return [p.to_numpy(root) for p in self.parts]
        out = np.empty(self.shape, self.dtype) if root in (-1, lib.sl_rank()) else None
        check(lib.sl_array_gather(self._h, root, out.ctypes.data_as(ctypes.c_void_p) if out is not None else None))
        return out

    asarray = to_numpy

    def to_cupy(self):
        """Collective. The global array as a CuPy array on every rank (gathered on the host, then copied)."""
        import cupy
        return cupy.asarray(self.to_numpy())

    @contextlib.contextmanager
    def local_view(self, mode="r"):
        """Waits for the array's tasks and yields this rank's block as a numpy array without a copy (mode "r",
        "w" or "rw"); the block goes back to starlops when the with-block ends."""
        m = {"r": READ, "w": WRITE, "rw": READ_WRITE}[mode]
        p = ctypes.c_void_p()
        check(lib.sl_array_acquire(self._h, m, ctypes.byref(p)))
        try:
            shape = self.local_shape
            n = int(np.prod(shape))
            if not p.value or n == 0:
                yield np.empty(shape, self.dtype)
            else:
                buf = (ctypes.c_char * (n * self.dtype.itemsize)).from_address(p.value)
                yield np.frombuffer(buf, dtype=self.dtype).reshape(shape)
        finally:
            check(lib.sl_array_release(self._h))

    @property
    def local(self):
        """A copy of this rank's block."""
        with self.local_view("r") as v:
            return v.copy()

    def save_npy(self, path):
        """Collective. Writes the global array as a .npy file (MPI-IO)."""
        check(lib.sl_array_save_npy(self._h, str(path).encode()))

    # ---- vector operations (tasks) ---------------------------------------------------------------
    def fill(self, value):
        check(lib.sl_array_fill(self._h, C.cs(value)))
        return self

    def fill_random(self, seed=0):
        check(lib.sl_array_fill_random(self._h, int(seed)))
        return self

    def axpby(self, alpha, x, beta):
        """self = alpha x + beta self."""
        check(lib.sl_array_axpby(self._h, C.cs(alpha), x._h, C.cs(beta)))
        return self

    def __add__(self, other):
        return self.copy().axpby(1.0, other, 1.0)

    def __sub__(self, other):
        return self.copy().axpby(-1.0, other, 1.0)

    def __mul__(self, other):
        out = self.copy()
        if isinstance(other, Array):
            check(lib.sl_array_multiply(out._h, self._h, other._h))
        else:
            check(lib.sl_array_scale(out._h, C.cs(other)))
        return out

    __rmul__ = __mul__

    def __neg__(self):
        return self * -1.0

    def conj(self):
        out = self.empty_like()
        check(lib.sl_array_conj(out._h, self._h))
        return out

    # ---- reductions (collective, wait) -------------------------------------------------------------
    def _reduce(self, fn, *args):
        s = ctypes.c_void_p()
        check(lib.sl_scalar_create(ctypes.byref(s), 1))
        try:
            check(fn(*args, s))
            v = C.cscalar()
            check(lib.sl_scalar_get_c(s, ctypes.byref(v)))
        finally:
            lib.sl_scalar_destroy(ctypes.byref(s))
        return complex(v.re, v.im) if np.iscomplexobj(np.empty(0, self.dtype)) else v.re

    def dot(self, other):
        """sum x_i y_i"""
        return self._reduce(lib.sl_array_dot, self._h, other._h)

    def vdot(self, other):
        """sum conj(x_i) y_i"""
        return self._reduce(lib.sl_array_vdot, self._h, other._h)

    def sum(self):
        return self._reduce(lib.sl_array_sum, self._h)

    def norm(self, ord=2):
        """||x||_ord (2, 1, any p > 0, np.inf, -np.inf, 0)."""
        v = self._reduce(lib.sl_array_norm, self._h, float(ord))
        return float(v.real if isinstance(v, complex) else v)
