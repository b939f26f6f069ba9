"""Finds and loads libsparsetc.so.1 and declares the C prototypes.

Search order (the first that loads wins):
  1. the environment variable SPARSETC_LIBRARY (a path; an error if it does not load);
  2. next to this package (a wheel or a copy that bundles the library);
  3. the library directory of the install this package came with (cmake --install writes
     _install_location.py with the path relative to the package);
  4. the dynamic loader's search path (LD_LIBRARY_PATH, the ld.so cache, an RPATH).
"""
import ctypes as C
import os
import threading

from . import _structs as S
from .errors import LibraryNotFoundError, exception_for

SONAME = "libsparsetc.so.1"
ABI_VERSION = 1  # the SONAME number this package was written for

_h = C.c_void_p  # every opaque handle travels as a pointer
_i32, _i64, _u64, _sz, _f64 = C.c_int32, C.c_int64, C.c_uint64, C.c_size_t, C.c_double
_p, _pp, _s = C.c_void_p, C.POINTER(C.c_void_p), C.c_char_p
_pi32, _pi64, _psz = C.POINTER(C.c_int32), C.POINTER(C.c_int64), C.POINTER(C.c_size_t)
_ph = C.POINTER(C.c_void_p)

# name: argument types (every function returns sparsetc_status_t unless listed in _STRING_GETTERS)
_PROTOTYPES = {
    "sparsetc_get_version": [_pi32, _pi32, _pi32],
    "sparsetc_get_abi_version": [_pi32],
    "sparsetc_get_build_info": [_s, _sz],
    "sparsetc_get_device_count": [_pi32],
    "sparsetc_create": [_ph],
    "sparsetc_create_with_backend": [_ph, _i32, _i32],
    "sparsetc_destroy": [_h],
    "sparsetc_get_backend": [_h, _pi32],
    "sparsetc_set_stream": [_h, _p],
    "sparsetc_get_stream": [_h, _pp],
    "sparsetc_set_validation": [_h, _i32],
    "sparsetc_get_validation": [_h, _pi32],
    "sparsetc_set_duplicates": [_h, _i32],
    "sparsetc_set_num_threads": [_h, _i32],
    "sparsetc_set_allocator": [_h, C.POINTER(S.Allocator)],
    "sparsetc_get_memory_stats": [_h, C.POINTER(S.MemoryStats)],
    "sparsetc_reset_peak_memory": [_h],
    "sparsetc_get_last_error": [_h, _s, _sz],
    "sparsetc_set_log_level": [_i32],
    "sparsetc_set_log_callback": [S.LOG_CALLBACK_FN, _p],
    "sparsetc_matrix_create_csr": [_h, _ph, _i64, _i64, _i64, _p, _p, _p, _i32, _i32, _i32, _i32, _i32, _i32],
    "sparsetc_matrix_create_csc": [_h, _ph, _i64, _i64, _i64, _p, _p, _p, _i32, _i32, _i32, _i32, _i32, _i32],
    "sparsetc_matrix_create_coo": [_h, _ph, _i64, _i64, _i64, _p, _p, _p, _i32, _i32, _i32, _i32, _i32],
    "sparsetc_matrix_read_mtx": [_h, _s, _i32, _i32, _ph],
    "sparsetc_matrix_write_mtx": [_h, _h, _s],
    "sparsetc_matrix_generate": [_h, _s, _u64, _i32, _ph],
    "sparsetc_matrix_copy_to": [_h, _h, _i32, _ph],
    "sparsetc_matrix_convert": [_h, _h, _i32, _i32, _i32, _i32, _i32, _ph],
    "sparsetc_matrix_get_info": [_h, C.POINTER(S.MatrixInfo)],
    "sparsetc_matrix_get_arrays": [_h, _pp, _pp, _pp],
    "sparsetc_matrix_set_values": [_h, _h, _p],
    "sparsetc_matrix_check": [_h, _h, _i32],
    "sparsetc_matrix_destroy": [_h],
    "sparsetc_dense_create": [_h, _ph, _i64, _i64, _i64, _p, _i32, _i32, _i32],
    "sparsetc_dense_set_values": [_h, _p],
    "sparsetc_dense_get": [_h, _pi64, _pi64, _pi64, _pp, _pi32, _pi32, _pi32],
    "sparsetc_dense_destroy": [_h],
    "sparsetc_analyze": [_h, _h, _h, C.POINTER(S.Analysis)],
    "sparsetc_spmm_plan_create": [_h, _ph, _i32, _h, _h, _h, _i32, _i32],
    "sparsetc_spmm_workspace_size": [_h, _psz],
    "sparsetc_spmm_execute": [_h, _f64, _h, _f64, _h, _p, _sz],
    "sparsetc_spmm_plan_get_alg": [_h, _pi32, _s, _sz],
    "sparsetc_spmm_plan_destroy": [_h],
    "sparsetc_spmm": [_h, _i32, _f64, _h, _h, _f64, _h, _i32, _i32],
    "sparsetc_spgemm_plan_create": [_h, _ph, _i32, _h, _i32, _h, _i32, _i32, C.POINTER(S.SpgemmOptions)],
    "sparsetc_spgemm_symbolic": [_h, _pi64],
    "sparsetc_spgemm_numeric": [_h, _ph],
    "sparsetc_spgemm_plan_get_estimate": [_h, _pi64, _psz],
    "sparsetc_spgemm_plan_get_alg": [_h, _pi32, _s, _sz],
    "sparsetc_spgemm_plan_destroy": [_h],
    "sparsetc_spgemm": [_h, _i32, _h, _i32, _h, _i32, _i32, _ph],
    "sparsetc_matrix_reorder": [_h, _h, _i32, C.POINTER(S.ReorderOptions), _ph],
    "sparsetc_matrix_get_permutation": [_h, _pi64, _pi64, _pi64],
    "sparsetc_matrix_permute_rows": [_h, _h, _pi64, _ph],
    "sparsetc_matrix_get_reorder_quality": [_h, _h, _i64, _i64, C.POINTER(S.ReorderQuality)],
}
_STRING_GETTERS = {"sparsetc_get_status_name": [_i32], "sparsetc_get_status_string": [_i32]}

_lock = threading.Lock()
_lib = None
_lib_path = None


def _candidates():
    here = os.path.dirname(os.path.abspath(__file__))
    env = os.environ.get("SPARSETC_LIBRARY")
    if env:
        return [(env, True)]
    found = [(os.path.join(here, SONAME), False)]
    try:
        from . import _install_location  # written by cmake --install only
        found.append((os.path.normpath(os.path.join(here, _install_location.LIBDIR, SONAME)), False))
    except ImportError:
        pass
    found.append((SONAME, False))
    return found


def _declare(lib):
    for name, argtypes in _PROTOTYPES.items():
        fn = getattr(lib, name)
        fn.argtypes = argtypes
        fn.restype = C.c_int32
    for name, argtypes in _STRING_GETTERS.items():
        fn = getattr(lib, name)
        fn.argtypes = argtypes
        fn.restype = C.c_char_p


def lib():
    """The loaded library (loaded on first use, then shared by all threads)."""
    global _lib, _lib_path
    if _lib is not None:
        return _lib
    with _lock:
        if _lib is not None:
            return _lib
        tried = []
        for path, must_load in _candidates():
            if os.sep in path and not os.path.exists(path) and not must_load:
                continue
            try:
                loaded = C.CDLL(path)
            except OSError as error:
                if must_load:
                    raise LibraryNotFoundError(f"SPARSETC_LIBRARY={path} does not load: {error}") from None
                tried.append(f"{path} ({error})")
                continue
            _declare(loaded)
            abi = C.c_int32(-1)
            loaded.sparsetc_get_abi_version(C.byref(abi))
            if abi.value != ABI_VERSION:
                raise LibraryNotFoundError(f"{path} has ABI {abi.value}; this package needs ABI {ABI_VERSION}")
            _lib, _lib_path = loaded, path
            return _lib
        raise LibraryNotFoundError(
            f"{SONAME} not found: set SPARSETC_LIBRARY to its path, or put its directory on "
            f"LD_LIBRARY_PATH (tried: {'; '.join(tried) or 'nothing'})")


def library_path():
    """The path (or SONAME) the library was loaded from."""
    lib()
    return _lib_path


def last_error(handle):
    """The message of the last failure on `handle` (None: of this thread without a handle)."""
    buffer = C.create_string_buffer(1024)
    lib().sparsetc_get_last_error(handle, buffer, len(buffer))
    return buffer.value.decode("utf-8", "replace")


def check(status, handle=None):
    """Raises the exception of a failed status, with the message kept by `handle` (or, for a
    call without a handle, by this thread). The message is read at once, on the calling thread,
    before any other library call can replace it."""
    if status != 0:
        name = lib().sparsetc_get_status_name(status).decode()
        raise exception_for(status, name, last_error(handle))


def call(name, *args, handle=None):
    """lib().<name>(*args), raising on failure; `handle` is where the message is kept."""
    check(getattr(lib(), name)(*args), handle)
