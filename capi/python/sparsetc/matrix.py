"""Sparse matrices known to the library.

`Matrix` wraps a sparsetc_matrix_t made from a SciPy, cupyx or PyTorch sparse matrix (borrowing
its arrays, so nothing is copied) or by the library (Matrix Market files, generators, results).
Passing the same Matrix to several calls lets the library keep its analysis and caches.
"""
import ctypes as C

import numpy as np

from . import _arrays, _structs
from ._constants import Format, IndexBase, IndexType, Memory, Ownership, Validation, ValueType, to_enum
from ._library import call
from .handle import Handle, default_handle


def _handle_for(memory, device, handle):
    if handle is not None:
        return handle
    return default_handle(memory == Memory.DEVICE, device)


def _default_kind(memory):
    """The kind of objects a library-made matrix is returned as."""
    if memory == Memory.HOST:
        return "numpy"
    try:
        import cupy  # noqa: F401
        return "cupy"
    except ImportError:
        return "torch"


class Matrix:
    """A sparse matrix in the library. Build one with Matrix(obj) from a SciPy, cupyx or PyTorch
    sparse matrix, or with read_mtx / generate / the results of the operations.

    copy=False (default) borrows the arrays (they are kept alive by this object); copy=True lets
    the library copy them.
    """

    def __init__(self, source, *, handle=None, copy=False, _view=None):
        view = _view if _view is not None else _arrays.sparse_view(source)
        self.handle = _handle_for(view.memory, view.device, handle)
        self.handle._follow_stream(_arrays.current_stream(view.kind, view.device)
                                   if view.memory == Memory.DEVICE else None)
        ptr = C.c_void_p()
        ownership = Ownership.COPY if copy else Ownership.BORROW
        if view.format == Format.COO:
            call("sparsetc_matrix_create_coo", self.handle.ptr, C.byref(ptr), view.rows, view.cols, view.nnz,
                 *view.ptrs, view.index_type, IndexBase.ZERO, view.value_type, view.memory, ownership)
        else:
            name = "sparsetc_matrix_create_csr" if view.format == Format.CSR else "sparsetc_matrix_create_csc"
            call(name, self.handle.ptr, C.byref(ptr), view.rows, view.cols, view.nnz, *view.ptrs,
                 view.offset_type, view.index_type, IndexBase.ZERO, view.value_type, view.memory, ownership)
        self._ptr = ptr
        self._owner = None if copy else view.owner
        self.kind, self.flavor, self.device = view.kind, view.flavor, view.device

    @classmethod
    def _adopt(cls, ptr, handle, kind=None, flavor=None):
        """Wraps a matrix the library made (this object destroys it)."""
        self = cls.__new__(cls)
        self._ptr, self.handle, self._owner = ptr, handle, None
        info = self.info()
        self.device = handle.device if info["memory"] == Memory.DEVICE else -1
        self.kind = kind or _default_kind(info["memory"])
        self.flavor = flavor or {"numpy": "scipy-matrix", "cupy": "cupyx", "torch": "torch"}[self.kind]
        return self

    @classmethod
    def of(cls, obj, handle=None):
        """obj itself when it is a Matrix, else a Matrix borrowing obj's arrays."""
        return obj if isinstance(obj, Matrix) else cls(obj, handle=handle)

    # ---- lifetime
    @property
    def ptr(self):
        if self._ptr is None:
            raise ValueError("the matrix is closed")
        return self._ptr

    def close(self):
        if getattr(self, "_ptr", None) is not None:
            ptr, self._ptr = self._ptr, None
            call("sparsetc_matrix_destroy", ptr)
            self._owner = None

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass

    # ---- description
    def info(self):
        """rows, cols, nnz, format, offset_type, index_type, base, value_type, memory, ownership."""
        info = _structs.MatrixInfo.new()
        call("sparsetc_matrix_get_info", self.ptr, C.byref(info))
        d = info.as_dict()
        d["format"], d["base"], d["memory"] = Format(d["format"]), IndexBase(d["base"]), Memory(d["memory"])
        d["offset_type"], d["index_type"] = IndexType(d["offset_type"]), IndexType(d["index_type"])
        d["value_type"] = ValueType(d["value_type"])
        return d

    @property
    def shape(self):
        info = self.info()
        return info["rows"], info["cols"]

    @property
    def nnz(self):
        return self.info()["nnz"]

    def __repr__(self):
        if self._ptr is None:
            return "<sparsetc.Matrix closed>"
        i = self.info()
        return (f"<sparsetc.Matrix {i['rows']}x{i['cols']} nnz={i['nnz']} {i['format'].name} "
                f"{i['value_type'].name} on {i['memory'].name.lower()}>")

    # ---- values and checks
    def _stream(self):
        info = self.info()
        if info["memory"] == Memory.DEVICE:
            self.handle._follow_stream(_arrays.current_stream(self.kind, self.device))
        return info

    def set_values(self, values):
        """Replaces the values (same pattern; nnz entries, in the order the matrix stores them,
        converted to its value type). Plans made from the matrix see them at their next run."""
        info = self._stream()
        array, ptr = _arrays.values_array(values, info["value_type"], self.kind)
        if array.shape[0] != info["nnz"]:
            raise ValueError(f"expected {info['nnz']} values, got {array.shape[0]}")
        call("sparsetc_matrix_set_values", self.handle.ptr, self.ptr, ptr)
        if self._owner is not None:  # a borrowed matrix now reads the new array
            self._owner = (*self._owner[:2], array)

    def check(self, level="values"):
        """Checks the structure (and, at 'values', NaN/Inf) without changing anything."""
        self._stream()
        call("sparsetc_matrix_check", self.handle.ptr, self.ptr, to_enum(Validation, level, "validation level"))

    # ---- conversions
    def convert(self, format="csr", *, offset_type="i64", index_type="i32", base="zero", value_type=None):
        """A new Matrix in another format, index types, base or value type (same memory space)."""
        info = self._stream()
        ptr = C.c_void_p()
        call("sparsetc_matrix_convert", self.handle.ptr, self.ptr, to_enum(Format, format, "format"),
             to_enum(IndexType, offset_type, "offset type"), to_enum(IndexType, index_type, "index type"),
             to_enum(IndexBase, base, "index base"),
             info["value_type"] if value_type is None else _value_type(value_type), C.byref(ptr))
        return Matrix._adopt(ptr, self.handle, self.kind, self.flavor)

    def to(self, memory, *, handle=None):
        """A copy in 'host' or 'device' memory (a GPU handle is needed for either direction
        involving the device)."""
        target = to_enum(Memory, memory, "memory")
        h = handle or (self.handle if self.handle.backend.name == "GPU" else default_handle(True, 0))
        ptr = C.c_void_p()
        call("sparsetc_matrix_copy_to", h.ptr, self.ptr, target, C.byref(ptr))
        kind = "numpy" if target == Memory.HOST else (self.kind if self.kind != "numpy" else None)
        return Matrix._adopt(ptr, h, kind)

    def export(self, kind=None):
        """A copy as the kind of object it came from (SciPy, cupyx or PyTorch sparse), in its own
        format; one-based matrices are shifted to zero-based."""
        kind = kind or self.kind
        info = self._stream()
        offsets, indices, values = C.c_void_p(), C.c_void_p(), C.c_void_p()
        call("sparsetc_matrix_get_arrays", self.ptr, C.byref(offsets), C.byref(indices), C.byref(values))
        rows, cols, nnz, fmt = info["rows"], info["cols"], info["nnz"], info["format"]
        first = {Format.CSR: rows + 1, Format.CSC: cols + 1, Format.COO: nnz}[fmt]
        memory, device = info["memory"], self.device
        a0 = _arrays.copy_array(kind, memory, device, offsets.value, first, _arrays.index_dtype(info["offset_type"]))
        a1 = _arrays.copy_array(kind, memory, device, indices.value, nnz, _arrays.index_dtype(info["index_type"]))
        if info["value_type"] == ValueType.BF16:
            if kind != "torch":
                raise TypeError("bfloat16 values can only be exported to PyTorch")
            import torch
            a2 = _arrays.copy_array(kind, memory, device, values.value, nnz, np.int16).view(torch.bfloat16)
        else:
            a2 = _arrays.copy_array(kind, memory, device, values.value, nnz, _arrays.value_dtype(info["value_type"]))
        if info["base"] == IndexBase.ONE:  # offsets and indices alike start at 1
            a0, a1 = a0 - 1, a1 - 1
        flavor = self.flavor if kind == self.kind else {"numpy": "scipy-matrix", "cupy": "cupyx", "torch": "torch"}[kind]
        return _arrays.make_sparse(kind, flavor, fmt, (rows, cols), (a0, a1, a2))

    def write_mtx(self, path):
        """Writes a Matrix Market file ('.gz': compressed)."""
        call("sparsetc_matrix_write_mtx", self.handle.ptr, self.ptr, str(path).encode())

    def analyze(self, other=None):
        """Structure statistics (and products of self·other when other is given) as a dict."""
        self._stream()
        result = _structs.Analysis.new()
        other_matrix = None if other is None else Matrix.of(other, self.handle)
        call("sparsetc_analyze", self.handle.ptr, self.ptr, None if other_matrix is None else other_matrix.ptr,
             C.byref(result))
        return result.as_dict()


def _value_type(value):
    if isinstance(value, str) and value.lower() in ("float32", "float64", "float16", "bfloat16"):
        value = {"float32": "f32", "float64": "f64", "float16": "f16", "bfloat16": "bf16"}[value.lower()]
    if isinstance(value, (np.dtype, type)) and not isinstance(value, int):
        return _arrays._NUMPY_VALUE[np.dtype(value)]
    return to_enum(ValueType, value, "value type")


def read_mtx(path, *, dtype="f64", index_type="i32", handle=None, as_matrix=False):
    """Reads a Matrix Market file (.mtx or .mtx.gz) into a SciPy CSR matrix (or a host Matrix)."""
    h = handle or default_handle(False)
    ptr = C.c_void_p()
    call("sparsetc_matrix_read_mtx", h.ptr, str(path).encode(), _value_type(dtype),
         to_enum(IndexType, index_type, "index type"), C.byref(ptr))
    m = Matrix._adopt(ptr, h, "numpy")
    return m if as_matrix else _export_and_close(m)


def generate(spec, *, seed=1, dtype="f64", handle=None, as_matrix=False):
    """A generated matrix ('poisson2d5:64', 'band:1000:3', 'rmat:12:8', ...) as SciPy CSR."""
    h = handle or default_handle(False)
    ptr = C.c_void_p()
    call("sparsetc_matrix_generate", h.ptr, spec.encode(), int(seed), _value_type(dtype), C.byref(ptr))
    m = Matrix._adopt(ptr, h, "numpy")
    return m if as_matrix else _export_and_close(m)


def write_mtx(path, matrix, *, handle=None):
    """Writes a SciPy/cupyx/PyTorch sparse matrix or a Matrix to a Matrix Market file."""
    Matrix.of(matrix, handle).write_mtx(path)


def analyze(A, B=None, *, handle=None):
    """Structure statistics of A (row lengths, bandwidth, block fill, ...), and the products
    of A·B when B is given (A·A for square A without B)."""
    return Matrix.of(A, handle).analyze(B)


def _export_and_close(m):
    try:
        return m.export()
    finally:
        m.close()


__all__ = ["Matrix", "Handle", "read_mtx", "generate", "write_mtx", "analyze"]
