"""sparsetc: sparse matrix multiplication (SpMM, SpGEMM) on NVIDIA tensor cores, from Python.

A pure-Python layer over the C ABI of libsparsetc.so.1 (ctypes; no compiled extension). Host
operands are NumPy arrays and SciPy sparse matrices (run on the library's CPU backend); device
operands are CuPy arrays / cupyx sparse matrices and PyTorch tensors, passed by pointer and
ordered on the framework's current stream. Results come back as the same kind of object.

    import sparsetc
    C = sparsetc.spmm(A, B)          # A: scipy.sparse CSR, B: numpy array -> numpy array
    S = sparsetc.spgemm(A, A)        # -> scipy.sparse CSR
    plan = sparsetc.SpgemmPlan(A, A) # reuse the pattern of C across value updates

Failures raise a subclass of sparsetc.SparsetcError carrying the library's message.
"""
from ._constants import (Backend, ComputeType, Duplicates, Format, IndexBase, IndexType, Memory, Operation, Order,
                         Ownership, ReorderMethod, SpgemmAlg, SpmmAlg, Status, TcPrecision, Validation, ValueType)
from ._library import ABI_VERSION, library_path
from .errors import *  # noqa: F401,F403 - the exception classes are part of the API
from .errors import SparsetcError, LibraryNotFoundError, EXCEPTION_OF_STATUS
from .handle import (Handle, abi_version, build_info, default_handle, device_count, set_log_callback,
                     set_log_level, status_name, status_string, version)
from .matrix import Matrix, analyze, generate, read_mtx, write_mtx
from .ops import SpgemmPlan, SpmmPlan, spgemm, spmm

__version__ = "0.1.0"
