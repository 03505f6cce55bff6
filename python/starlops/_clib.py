"""The C library through ctypes: loading, the public structs mirrored (checked against sl_abi_size), the
prototypes, and the error check that turns a status code into StarlopsError."""
import ctypes
import ctypes.util
import os

import numpy as np

_here = os.path.dirname(os.path.abspath(__file__))


def _candidates():
    env = os.environ.get("STARLOPS_LIB")
    if env:
        yield env
    for build in (os.environ.get("STARLOPS_BUILD"), os.path.join(_here, "..", "..", "build")):
        if build:
            yield os.path.join(build, "lib", "libstarlops.so")
    # installed: PREFIX/lib/python3/dist-packages/starlops -> PREFIX/lib
    yield os.path.join(_here, "..", "..", "..", "libstarlops.so")
    found = ctypes.util.find_library("starlops")
    if found:
        yield found
    yield "libstarlops.so.0"


def _load():
    # MPI's plugins resolve symbols of libmpi: load it (and starlops) with RTLD_GLOBAL, as mpi4py does
    for mpi in ("libmpi.so.40", "libmpi.so"):
        try:
            ctypes.CDLL(mpi, mode=ctypes.RTLD_GLOBAL)
            break
        except OSError:
            pass
    errors = []
    for path in _candidates():
        try:
            return ctypes.CDLL(path, mode=ctypes.RTLD_GLOBAL), path
        except OSError as e:
            errors.append("%s: %s" % (path, e))
    raise ImportError("starlops: cannot load libstarlops.so (set STARLOPS_LIB to its path): " + "; ".join(errors))


lib, lib_path = _load()


class StarlopsError(RuntimeError):
    """A starlops call failed; .code is the SL_E_... status, the message names the bad argument."""

    def __init__(self, code, message):
        super().__init__(message)
        self.code = code


c_void_pp = ctypes.POINTER(ctypes.c_void_p)
c_int64_p = ctypes.POINTER(ctypes.c_int64)


class cscalar(ctypes.Structure):
    _fields_ = [("re", ctypes.c_double), ("im", ctypes.c_double)]


class dist_t(ctypes.Structure):
    _fields_ = [("partition", ctypes.c_int), ("axis", ctypes.c_int), ("local_n", c_int64_p),
                ("mask", ctypes.POINTER(ctypes.c_int)), ("ghost_lo", ctypes.c_int), ("ghost_hi", ctypes.c_int)]


CALLBACK = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int, ctypes.c_void_p, ctypes.c_void_p)


class solver_options_t(ctypes.Structure):
    _fields_ = [("niter", ctypes.c_int), ("tol", ctypes.c_double), ("tol_rule", ctypes.c_int),
                ("check_every", ctypes.c_int), ("x0", ctypes.c_void_p), ("show", ctypes.c_int),
                ("out", ctypes.c_void_p), ("callback", CALLBACK), ("user", ctypes.c_void_p),
                ("cost", ctypes.POINTER(ctypes.c_double)), ("damp", ctypes.c_double), ("atol", ctypes.c_double),
                ("btol", ctypes.c_double), ("conlim", ctypes.c_double), ("var", ctypes.c_void_p),
                ("pipelined", ctypes.c_int), ("eps", ctypes.c_double), ("thresh", ctypes.c_int),
                ("alpha", ctypes.c_double), ("power_niter", ctypes.c_int), ("perc", ctypes.c_double),
                ("decay", ctypes.POINTER(ctypes.c_double)), ("tau", ctypes.c_double), ("mu", ctypes.c_double),
                ("theta", ctypes.c_double), ("gamma", ctypes.c_double), ("gfirst", ctypes.c_int),
                ("epsg", ctypes.c_double), ("accel", ctypes.c_int), ("inner_niter", ctypes.c_int),
                ("backtrack", ctypes.c_int), ("beta", ctypes.c_double)]


class solver_info_t(ctypes.Structure):
    _fields_ = [("iterations", ctypes.c_int), ("stop", ctypes.c_int), ("r0norm", ctypes.c_double),
                ("rnorm", ctypes.c_double), ("r2norm", ctypes.c_double), ("anorm", ctypes.c_double),
                ("acond", ctypes.c_double), ("arnorm", ctypes.c_double), ("xnorm", ctypes.c_double),
                ("alpha", ctypes.c_double), ("host_syncs", ctypes.c_int), ("seconds", ctypes.c_double)]


def _proto(name, restype, *argtypes):
    f = getattr(lib, name)
    f.restype = restype
    f.argtypes = list(argtypes)
    return f


_proto("sl_abi_size", ctypes.c_size_t, ctypes.c_char_p)
_proto("sl_version", ctypes.c_char_p)
for _name, _struct in (("sl_dist", dist_t), ("sl_cscalar", cscalar), ("sl_solver_options", solver_options_t),
                       ("sl_solver_info", solver_info_t)):
    if lib.sl_abi_size(_name.encode()) != ctypes.sizeof(_struct):
        raise ImportError("starlops: %s is %d bytes in %s but %d in the Python mirror: the package and the library "
                          "differ in version" % (_name, lib.sl_abi_size(_name.encode()), lib_path, ctypes.sizeof(_struct)))

V, I, D, P = ctypes.c_void_p, ctypes.c_int, ctypes.c_double, ctypes.c_void_p
_proto("sl_strerror", ctypes.c_char_p, I)
_proto("sl_last_error", ctypes.c_char_p)
_proto("sl_init", I, V, V, V)
_proto("sl_finalize", I)
_proto("sl_initialized", I)
_proto("sl_wait", I)
_proto("sl_rank", I)
_proto("sl_size", I)
_proto("sl_ncpu_workers", I)
_proto("sl_ncuda_workers", I)
_proto("sl_comm_backend_name", ctypes.c_char_p)
# arrays
_proto("sl_array_create", I, c_void_pp, I, c_int64_p, I, ctypes.POINTER(dist_t))
_proto("sl_array_wrap", I, c_void_pp, V, I, c_int64_p, I, ctypes.POINTER(dist_t))
_proto("sl_array_create_like", I, c_void_pp, P)
_proto("sl_array_wrap_device", I, c_void_pp, V, I, I, c_int64_p, I, ctypes.POINTER(dist_t))
_proto("sl_array_sync", I, P)
_proto("sl_array_destroy", I, c_void_pp)
_proto("sl_array_ndim", I, P)
_proto("sl_array_dtype", I, P)
_proto("sl_array_dims", c_int64_p, P)
_proto("sl_array_local_dims", c_int64_p, P)
_proto("sl_array_local_offset", ctypes.c_int64, P)
_proto("sl_array_partition", I, P)
_proto("sl_array_axis", I, P)
_proto("sl_array_acquire", I, P, I, c_void_pp)
_proto("sl_array_release", I, P)
_proto("sl_array_gather", I, P, I, V)
_proto("sl_array_scatter", I, P, I, V)
_proto("sl_array_stack", I, c_void_pp, I, c_void_pp)
_proto("sl_array_stack_nparts", I, P)
_proto("sl_array_stack_part", P, P, I)
_proto("sl_array_save_npy", I, P, ctypes.c_char_p)
_proto("sl_array_load_npy", I, c_void_pp, ctypes.c_char_p, ctypes.POINTER(dist_t))
_proto("sl_array_fill", I, P, cscalar)
_proto("sl_array_copy", I, P, P)
_proto("sl_array_scale", I, P, cscalar)
_proto("sl_array_axpby", I, P, cscalar, P, cscalar)
_proto("sl_array_multiply", I, P, P, P)
_proto("sl_array_conj", I, P, P)
_proto("sl_array_fill_random", I, P, ctypes.c_uint)
# scalars and reductions
_proto("sl_scalar_create", I, c_void_pp, I)
_proto("sl_scalar_destroy", I, c_void_pp)
_proto("sl_scalar_get_c", I, P, ctypes.POINTER(cscalar))
_proto("sl_array_dot", I, P, P, P)
_proto("sl_array_vdot", I, P, P, P)
_proto("sl_array_sum", I, P, P)
_proto("sl_array_norm", I, P, D, P)
# operators
_proto("sl_op_apply", I, P, I, P, P)
_proto("sl_op_create_domain", I, P, c_void_pp)
_proto("sl_op_create_range", I, P, c_void_pp)
_proto("sl_op_nrows", ctypes.c_int64, P)
_proto("sl_op_ncols", ctypes.c_int64, P)
_proto("sl_op_dtype", I, P)
_proto("sl_op_name", ctypes.c_char_p, P)
_proto("sl_op_domain", P, P)
_proto("sl_op_range", P, P)
_proto("sl_op_destroy", I, c_void_pp)
_proto("sl_op_identity", I, c_void_pp, P)
_proto("sl_op_zero", I, c_void_pp, P, P)
_proto("sl_op_diagonal", I, c_void_pp, P)
_proto("sl_op_diagonal_axis", I, c_void_pp, P, V, I)
_proto("sl_op_matrix", I, c_void_pp, V, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, I)
_proto("sl_op_vstack_matrix", I, c_void_pp, V, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, I)
_proto("sl_op_hstack_matrix", I, c_void_pp, V, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, I)
_proto("sl_op_first_derivative", I, c_void_pp, P, I, D, I, I, I)
_proto("sl_op_second_derivative", I, c_void_pp, P, I, D, I, I)
_proto("sl_op_laplacian", I, c_void_pp, P, I, ctypes.POINTER(I), ctypes.POINTER(D), ctypes.POINTER(D), I, I)
_proto("sl_op_gradient", I, c_void_pp, P, ctypes.POINTER(D), I, I)
_proto("sl_op_fft", I, c_void_pp, P, I, ctypes.POINTER(I), I, I, I)
_proto("sl_op_nonstationary_convolve1d", I, c_void_pp, P, V, ctypes.c_int64, ctypes.c_int64, c_int64_p, I)
_proto("sl_op_restriction_axis", I, c_void_pp, P, c_int64_p, ctypes.c_int64, I)
_proto("sl_op_roll", I, c_void_pp, P, I, ctypes.c_int64)
_proto("sl_op_fft_nfft", I, c_void_pp, P, I, ctypes.POINTER(I), c_int64_p, I, I, ctypes.POINTER(I), ctypes.POINTER(I))
_proto("sl_op_sliding1d", I, c_void_pp, P, I, V, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, I)
_proto("sl_op_patch2d", I, c_void_pp, P, ctypes.POINTER(ctypes.c_int), V, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, V,
       ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, I)
_proto("sl_op_patch2d_dense", I, c_void_pp, P, ctypes.POINTER(ctypes.c_int), V, ctypes.c_int64, ctypes.c_int64,
       ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64, I)
i64 = ctypes.c_int64
_proto("sl_op_restriction", I, c_void_pp, P, c_int64_p, i64)
_proto("sl_op_csr", I, c_void_pp, i64, i64, c_int64_p, c_int64_p, V, I)
_proto("sl_op_fredholm1", I, c_void_pp, V, i64, i64, i64, i64, I)
_proto("sl_op_matmul_summa", I, c_void_pp, V, i64, i64, i64, I, I, I)
_proto("sl_op_matmul_block", I, c_void_pp, V, i64, i64, i64, I, I, I)
_proto("sl_op_summa_block", I, i64, i64, i64, I, I, I, c_int64_p)
_proto("sl_op_redistribute", I, c_void_pp, P, P)
_proto("sl_op_mdc", I, c_void_pp, V, i64, i64, i64, i64, i64, i64, D, D, I)
_proto("sl_op_mdc_twosided", I, c_void_pp, V, i64, i64, i64, i64, i64, i64, D, D, I)
_proto("sl_op_halo_split", I, c_void_pp, I, c_int64_p, ctypes.POINTER(I), ctypes.POINTER(I), I, I, I)
_proto("sl_op_halo_block_split", I, I, c_int64_p, ctypes.POINTER(I), I, I, c_int64_p, c_int64_p)
_proto("sl_op_first_directional_derivative", I, c_void_pp, P, ctypes.POINTER(D), c_void_pp, ctypes.POINTER(D), I, I)
_proto("sl_op_second_directional_derivative", I, c_void_pp, P, ctypes.POINTER(D), c_void_pp, ctypes.POINTER(D), I)
_proto("sl_op_matrix_blocks", I, c_void_pp, I, c_void_pp, c_int64_p, c_int64_p, I)
_proto("sl_op_vstack", I, c_void_pp, I, c_void_pp)
_proto("sl_op_hstack", I, c_void_pp, I, c_void_pp)
_proto("sl_op_block_diag", I, c_void_pp, I, c_void_pp)
_proto("sl_op_sum", I, c_void_pp, P, P)
_proto("sl_op_diff", I, c_void_pp, P, P)
_proto("sl_op_product", I, c_void_pp, P, P)
_proto("sl_op_scaled", I, c_void_pp, P, cscalar)
_proto("sl_op_adjoint", I, c_void_pp, P)
_proto("sl_op_transpose", I, c_void_pp, P)
_proto("sl_op_conj", I, c_void_pp, P)
_proto("sl_op_power", I, c_void_pp, P, I)
_proto("sl_dottest", I, P, ctypes.c_uint, ctypes.POINTER(D))
# solvers
_proto("sl_solver_options_default", None, ctypes.POINTER(solver_options_t))
_proto("sl_stop_reason_name", ctypes.c_char_p, I)
for _s in ("cg", "cgls", "lsqr", "ista", "fista"):
    _proto("sl_solve_" + _s, I, P, P, P, ctypes.POINTER(solver_options_t), ctypes.POINTER(solver_info_t))
_proto("sl_power_iteration", I, P, I, D, ctypes.c_uint, ctypes.POINTER(cscalar), ctypes.POINTER(I))


def check(rc):
    """Raises StarlopsError for a nonzero status (the message is the library's, the same on every rank)."""
    if rc != 0:
        raise StarlopsError(rc, "%s: %s" % (lib.sl_strerror(rc).decode(), lib.sl_last_error().decode()))
    return rc


DTYPES = {np.dtype(np.float32): 0, np.dtype(np.float64): 1, np.dtype(np.complex64): 2, np.dtype(np.complex128): 3}
NP_DTYPES = {v: k for k, v in DTYPES.items()}


def sl_dtype(dtype):
    dt = np.dtype(dtype)
    if dt not in DTYPES:
        raise TypeError("starlops: dtype %s is not one of float32, float64, complex64, complex128" % dt)
    return DTYPES[dt]


def cs(value):
    """A Python or NumPy number as an sl_cscalar."""
    z = complex(value)
    return cscalar(z.real, z.imag)

# proximal layer
_proto("sl_prox_l1", I, c_void_pp, D)
_proto("sl_prox_l2", I, c_void_pp, P, P, D, I)
_proto("sl_prox_l21", I, c_void_pp, D)
_proto("sl_prox_l21_axis", I, c_void_pp, P, I, D)
_proto("sl_prox_box", I, c_void_pp, D, D)
_proto("sl_prox_precompose", I, c_void_pp, P, D, D)
_proto("sl_prox_postcompose", I, c_void_pp, P, D, D)
_proto("sl_prox_apply", I, P, D, P, P)
_proto("sl_prox_apply_dual", I, P, D, P, P)
_proto("sl_prox_value", I, P, P, P)
_proto("sl_prox_gradient", I, P, P, P)
_proto("sl_prox_name", ctypes.c_char_p, P)
_proto("sl_prox_destroy", I, c_void_pp)
_proto("sl_solve_proximal_gradient", I, P, P, P, ctypes.POINTER(solver_options_t), ctypes.POINTER(solver_info_t))
_proto("sl_solve_admm_l2", I, P, P, P, P, P, ctypes.POINTER(solver_options_t), ctypes.POINTER(solver_info_t))
_proto("sl_solve_primal_dual", I, P, P, P, P, ctypes.POINTER(solver_options_t), ctypes.POINTER(solver_info_t))
