"""Adapters between array libraries and the C ABI's raw pointers.

Three kinds of objects are understood, each on the host or (CuPy, PyTorch) on a GPU:
  "numpy"  NumPy arrays and SciPy sparse matrices/arrays (host);
  "cupy"   CuPy arrays and cupyx.scipy.sparse matrices (device);
  "torch"  PyTorch tensors, strided or sparse CSR/CSC/COO (host or device).
A view records the pointers, sizes and types the C functions take, the arrays that must stay alive
while the library borrows them, and how to build a result of the same kind.
"""
import ctypes as C

import numpy as np

from ._constants import Format, IndexType, Memory, Order, ValueType

# ----------------------------------------------------------------------------------- type tables

_NUMPY_VALUE = {np.dtype(np.float32): ValueType.F32, np.dtype(np.float64): ValueType.F64,
                np.dtype(np.float16): ValueType.F16}
_NUMPY_INDEX = {np.dtype(np.int32): IndexType.I32, np.dtype(np.int64): IndexType.I64}
_VALUE_NUMPY = {v: k for k, v in _NUMPY_VALUE.items()}
_INDEX_NUMPY = {v: k for k, v in _NUMPY_INDEX.items()}
_VALUE_BYTES = {ValueType.F32: 4, ValueType.F64: 8, ValueType.F16: 2, ValueType.BF16: 2}
_INDEX_BYTES = {IndexType.I32: 4, IndexType.I64: 8}


def _torch():
    import torch
    return torch


def _torch_value_types():
    torch = _torch()
    return {torch.float32: ValueType.F32, torch.float64: ValueType.F64, torch.float16: ValueType.F16,
            torch.bfloat16: ValueType.BF16}


def _torch_index_types():
    torch = _torch()
    return {torch.int32: IndexType.I32, torch.int64: IndexType.I64}


def kind_of(obj):
    """'numpy', 'cupy', 'torch', or None for an object none of them made."""
    module = type(obj).__module__.split(".")[0]
    if module in ("numpy", "scipy"):
        return "numpy"
    if module in ("cupy", "cupyx"):
        return "cupy"
    if module == "torch":
        return "torch"
    return None


def result_value_type(a, b):
    """Value type of C = A·B: the common type, f32 for mixed half types."""
    if a == b:
        return a
    if ValueType.F64 in (a, b):
        return ValueType.F64
    return ValueType.F32


# ----------------------------------------------------------------------------------- dense views

class DenseView:
    """A 2-D array as the C ABI sees it. `owner` is the array the pointer belongs to."""
    __slots__ = ("ptr", "rows", "cols", "ld", "value_type", "order", "memory", "device", "kind", "owner")

    def __init__(self, ptr, rows, cols, ld, value_type, order, memory, device, kind, owner):
        self.ptr, self.rows, self.cols, self.ld = ptr, rows, cols, ld
        self.value_type, self.order, self.memory, self.device = value_type, order, memory, device
        self.kind, self.owner = kind, owner

    def layout(self):
        return (self.rows, self.cols, self.ld, self.value_type, self.order, self.memory, self.device, self.kind)


def _layout(rows, cols, s0, s1, prefer=None):
    """(order, ld) for element strides (s0, s1), or None when the C ABI cannot describe them. An
    empty array has no meaningful strides: it takes the order asked for ('C' or 'F')."""
    if rows == 0 or cols == 0:
        return (Order.COL, max(rows, 1)) if prefer == "F" else (Order.ROW, max(cols, 1))
    if (s1 == 1 or cols <= 1) and (rows <= 1 or s0 >= max(cols, 1)):
        return Order.ROW, (s0 if rows > 1 else max(cols, 1))
    if (s0 == 1 or rows <= 1) and (cols <= 1 or s1 >= max(rows, 1)):
        return Order.COL, (s1 if cols > 1 else max(rows, 1))
    return None


def dense_view(obj, *, copy_ok=True, order=None):
    """View of a 2-D array. A layout the C ABI cannot describe (negative or broadcast strides)
    is copied when copy_ok, else rejected. order ('C' or 'F') forces a layout (copying if needed).
    Integer and boolean arrays are converted to float64 (copy_ok only)."""
    kind = kind_of(obj)
    if kind == "numpy" and isinstance(obj, np.ndarray):
        return _numpy_dense(obj, copy_ok, order)
    if kind == "cupy":
        return _cupy_dense(obj, copy_ok, order)
    if kind == "torch":
        return _torch_dense(obj, copy_ok, order)
    raise TypeError(f"expected a NumPy, CuPy or PyTorch 2-D array, got {type(obj).__name__}")


def _want(layout, order):
    return layout is not None and (order is None or layout[0] == (Order.ROW if order == "C" else Order.COL))


def _numpy_dense(a, copy_ok, order):
    if a.ndim != 2:
        raise ValueError(f"expected a 2-D array, got {a.ndim} dimensions")
    if a.dtype not in _NUMPY_VALUE:
        if not copy_ok or a.dtype.kind not in "biuf":
            raise TypeError(f"unsupported dtype {a.dtype} (float16, float32 or float64)")
        a = a.astype(np.float64)
    s0, s1 = (s // a.itemsize if s % a.itemsize == 0 else 0 for s in a.strides)
    layout = _layout(a.shape[0], a.shape[1], s0, s1, order)
    if not _want(layout, order):
        if not copy_ok:
            raise ValueError("the output array's layout cannot be described by a leading dimension "
                             "(it needs unit stride along rows or columns)")
        a = np.asarray(a, order=order or "C").copy(order=order or "C")
        layout = _layout(a.shape[0], a.shape[1], a.strides[0] // a.itemsize, a.strides[1] // a.itemsize, order)
    return DenseView(a.ctypes.data, a.shape[0], a.shape[1], layout[1], _NUMPY_VALUE[a.dtype], layout[0],
                     Memory.HOST, -1, "numpy", a)


def _cupy_dense(a, copy_ok, order):
    import cupy
    if a.ndim != 2:
        raise ValueError(f"expected a 2-D array, got {a.ndim} dimensions")
    dtype = np.dtype(a.dtype)
    if dtype not in _NUMPY_VALUE:
        if not copy_ok or dtype.kind not in "biuf":
            raise TypeError(f"unsupported dtype {dtype} (float16, float32 or float64)")
        a = a.astype(np.float64)
    s0, s1 = (s // a.itemsize if s % a.itemsize == 0 else 0 for s in a.strides)
    layout = _layout(a.shape[0], a.shape[1], s0, s1, order)
    if not _want(layout, order):
        if not copy_ok:
            raise ValueError("the output array's layout cannot be described by a leading dimension")
        with cupy.cuda.Device(a.device.id):
            a = cupy.array(a, order=order or "C", copy=True)
        layout = _layout(a.shape[0], a.shape[1], a.strides[0] // a.itemsize, a.strides[1] // a.itemsize, order)
    return DenseView(a.data.ptr, a.shape[0], a.shape[1], layout[1], _NUMPY_VALUE[np.dtype(a.dtype)], layout[0],
                     Memory.DEVICE, a.device.id, "cupy", a)


def _torch_device(t):
    if t.device.type == "cuda":
        return Memory.DEVICE, (t.device.index if t.device.index is not None else _torch().cuda.current_device())
    if t.device.type == "cpu":
        return Memory.HOST, -1
    raise TypeError(f"tensors on {t.device.type} are not supported (cpu or cuda)")


def _torch_dense(t, copy_ok, order):
    torch = _torch()
    if t.layout != torch.strided:
        raise TypeError(f"expected a dense (strided) tensor, got layout {t.layout}")
    if t.dim() != 2:
        raise ValueError(f"expected a 2-D tensor, got {t.dim()} dimensions")
    t = t.detach()
    types = _torch_value_types()
    if t.dtype not in types:
        if not copy_ok or t.is_complex():
            raise TypeError(f"unsupported dtype {t.dtype} (float16, bfloat16, float32 or float64)")
        t = t.to(torch.float64)
    memory, device = _torch_device(t)
    layout = _layout(t.shape[0], t.shape[1], *t.stride(), order)
    if not _want(layout, order):
        if not copy_ok:
            raise ValueError("the output tensor's layout cannot be described by a leading dimension")
        t = t.contiguous() if order != "F" else t.t().contiguous().t()
        layout = _layout(t.shape[0], t.shape[1], *t.stride(), order)
    return DenseView(t.data_ptr(), t.shape[0], t.shape[1], layout[1], types[t.dtype], layout[0], memory, device,
                     "torch", t)


def empty_dense(kind, memory, device, rows, cols, value_type, order):
    """A new array of `kind` to receive a result."""
    if kind == "numpy":
        return np.empty((rows, cols), dtype=_VALUE_NUMPY[value_type], order="C" if order == Order.ROW else "F")
    if kind == "cupy":
        import cupy
        with cupy.cuda.Device(device):
            return cupy.empty((rows, cols), dtype=_VALUE_NUMPY[value_type], order="C" if order == Order.ROW else "F")
    torch = _torch()
    dtype = {v: k for k, v in _torch_value_types().items()}[value_type]
    where = torch.device("cuda", device) if memory == Memory.DEVICE else torch.device("cpu")
    if order == Order.ROW:
        return torch.empty((rows, cols), dtype=dtype, device=where)
    return torch.empty((cols, rows), dtype=dtype, device=where).t()


def current_stream(kind, device):
    """The stream the caller's framework works on for `device` (a cudaStream_t as an int)."""
    if kind == "cupy":
        import cupy
        with cupy.cuda.Device(device):
            return cupy.cuda.get_current_stream().ptr
    if kind == "torch":
        return _torch().cuda.current_stream(device).cuda_stream
    return None


# ----------------------------------------------------------------------------------- sparse views

class SparseView:
    """A sparse matrix as the C ABI sees it: format, sizes, the three arrays and their types."""
    __slots__ = ("format", "rows", "cols", "nnz", "ptrs", "offset_type", "index_type", "value_type", "memory",
                 "device", "kind", "flavor", "owner")

    def __init__(self, **fields):
        for name in self.__slots__:
            setattr(self, name, fields.get(name))


def _scipy_sparse():
    import scipy.sparse
    return scipy.sparse


def is_sparse(obj):
    kind = kind_of(obj)
    if kind == "numpy":
        return type(obj).__module__.startswith("scipy.sparse")
    if kind == "cupy":
        return type(obj).__module__.startswith("cupyx.scipy.sparse")
    if kind == "torch":
        torch = _torch()
        return isinstance(obj, torch.Tensor) and obj.layout in (torch.sparse_csr, torch.sparse_csc, torch.sparse_coo)
    return False


def sparse_place(obj):
    """(memory, value type) of a sparse matrix, without touching its arrays."""
    kind = kind_of(obj)
    if kind == "torch":
        memory, _ = _torch_device(obj)
        return memory, _torch_value_types().get(obj.dtype, ValueType.F64)
    if kind in ("numpy", "cupy"):
        return (Memory.HOST if kind == "numpy" else Memory.DEVICE), _NUMPY_VALUE.get(np.dtype(obj.dtype), ValueType.F64)
    raise TypeError(f"expected a SciPy, cupyx or PyTorch sparse matrix, got {type(obj).__name__}")


def _numpy_values(data, module=np):
    dtype = np.dtype(data.dtype)
    if dtype in _NUMPY_VALUE:
        return data
    if dtype.kind not in "biuf":
        raise TypeError(f"unsupported value dtype {dtype} (float16, float32 or float64)")
    return data.astype(module.float64)


def _numpy_index(index, module=np):
    return index if np.dtype(index.dtype) in _NUMPY_INDEX else index.astype(module.int64)


def sparse_view(obj, *, csr_only=False, int32_ok=False, values_as=None):
    """View of a SciPy, cupyx or PyTorch sparse matrix. SciPy and cupyx CSR/CSC with unsorted or
    repeated indices are brought to canonical form on a copy (the library requires it); COO
    keeps its repeats (the handles of this package sum them, as SciPy does).
    For device SpGEMM (whose cuSPARSE path takes only int32 CSR in the compute precision):
    csr_only converts other formats to CSR, int32_ok narrows int64 indices when they fit, and
    values_as converts the values to that value type (device kinds only)."""
    kind = kind_of(obj)
    if kind == "numpy":
        return _scipy_view(obj, csr_only)
    if kind == "cupy":
        return _cupyx_view(obj, csr_only, values_as)
    if kind == "torch":
        return _torch_sparse_view(obj, csr_only, int32_ok, values_as)
    raise TypeError(f"expected a SciPy, cupyx or PyTorch sparse matrix, got {type(obj).__name__}")


def _canonical_compressed(m):
    if not m.has_canonical_format:
        m = m.copy()
        m.sum_duplicates()  # also sorts the indices
    return m


def _flavor_of_scipy(m):
    # csr_array, coo_array, ... (SciPy's array API; sparse.sparray exists only from SciPy 1.11)
    return "scipy-array" if type(m).__name__.endswith("_array") else "scipy-matrix"


def _scipy_view(m, csr_only):
    flavor = _flavor_of_scipy(m)
    fmt = m.format
    if fmt not in ("csr", "csc", "coo") or (csr_only and fmt != "csr"):
        m, fmt = m.tocsr(), "csr"
    rows, cols = m.shape
    if fmt == "coo":
        r, c = _numpy_index(np.ascontiguousarray(m.row)), _numpy_index(np.ascontiguousarray(m.col))
        if r.dtype != c.dtype:
            r, c = r.astype(np.int64), c.astype(np.int64)
        data = _numpy_values(np.ascontiguousarray(m.data))
        arrays, f = (r, c, data), Format.COO
        offset_type = index_type = _NUMPY_INDEX[r.dtype]
    else:
        m = _canonical_compressed(m)
        offsets, indices = _numpy_index(m.indptr), _numpy_index(m.indices)
        data = _numpy_values(m.data)
        arrays, f = (offsets, indices, data), (Format.CSR if fmt == "csr" else Format.CSC)
        offset_type, index_type = _NUMPY_INDEX[offsets.dtype], _NUMPY_INDEX[indices.dtype]
    return SparseView(format=f, rows=rows, cols=cols, nnz=int(data.shape[0]),
                      ptrs=tuple(a.ctypes.data for a in arrays), offset_type=offset_type, index_type=index_type,
                      value_type=_NUMPY_VALUE[data.dtype], memory=Memory.HOST, device=-1, kind="numpy",
                      flavor=flavor, owner=arrays)


def _cupyx_view(m, csr_only, values_as):
    import cupy
    fmt = m.format
    if fmt not in ("csr", "csc", "coo") or (csr_only and fmt != "csr"):
        m, fmt = m.tocsr(), "csr"
    rows, cols = m.shape
    device = m.data.device.id
    if fmt == "coo":
        r, c = _numpy_index(cupy.ascontiguousarray(m.row), cupy), _numpy_index(cupy.ascontiguousarray(m.col), cupy)
        data = _numpy_values(cupy.ascontiguousarray(m.data), cupy)
        arrays, f = (r, c, data), Format.COO
        offset_type = index_type = _NUMPY_INDEX[np.dtype(r.dtype)]
    else:
        m = _canonical_compressed(m)
        data = _numpy_values(m.data, cupy)
        if values_as is not None and np.dtype(data.dtype) != _VALUE_NUMPY[values_as]:
            data = data.astype(_VALUE_NUMPY[values_as])
        arrays = (_numpy_index(m.indptr, cupy), _numpy_index(m.indices, cupy), data)
        f = Format.CSR if fmt == "csr" else Format.CSC
        offset_type, index_type = _NUMPY_INDEX[np.dtype(arrays[0].dtype)], _NUMPY_INDEX[np.dtype(arrays[1].dtype)]
        data = arrays[2]
    return SparseView(format=f, rows=rows, cols=cols, nnz=int(data.shape[0]),
                      ptrs=tuple(a.data.ptr for a in arrays), offset_type=offset_type, index_type=index_type,
                      value_type=_NUMPY_VALUE[np.dtype(data.dtype)], memory=Memory.DEVICE, device=device,
                      kind="cupy", flavor="cupyx", owner=arrays)


def _torch_sparse_view(t, csr_only, int32_ok, values_as):
    torch = _torch()
    t = t.detach()
    if csr_only and t.layout != torch.sparse_csr:
        t = t.to_sparse_csr()
    values_types, index_types = _torch_value_types(), _torch_index_types()
    if t.layout == torch.sparse_coo:
        t = t.coalesce()
        indices = t.indices()
        arrays, f = [indices[0].contiguous(), indices[1].contiguous()], Format.COO
        values = t.values()
    elif t.layout == torch.sparse_csr:
        arrays, f = [t.crow_indices().contiguous(), t.col_indices().contiguous()], Format.CSR
        values = t.values()
    elif t.layout == torch.sparse_csc:
        arrays, f = [t.ccol_indices().contiguous(), t.row_indices().contiguous()], Format.CSC
        values = t.values()
    else:
        raise TypeError(f"unsupported tensor layout {t.layout}")
    if t.dim() != 2 or values.dim() != 1:
        raise ValueError("expected a 2-D sparse tensor without batch or dense dimensions")
    if values.dtype not in values_types:
        if values.is_complex():
            raise TypeError(f"unsupported value dtype {values.dtype}")
        values = values.to(torch.float64)
    if values_as is not None:
        values = values.to({v: k for k, v in values_types.items()}[values_as])
    if int32_ok and max(t.shape[0], t.shape[1], values.shape[0]) < 2**31 - 1:
        arrays = [a.to(torch.int32) for a in arrays]
    arrays.append(values.contiguous())
    memory, device = _torch_device(values)
    return SparseView(format=f, rows=t.shape[0], cols=t.shape[1], nnz=int(values.shape[0]),
                      ptrs=tuple(a.data_ptr() for a in arrays), offset_type=index_types[arrays[0].dtype],
                      index_type=index_types[arrays[1].dtype], value_type=values_types[arrays[2].dtype],
                      memory=memory, device=device, kind="torch", flavor="torch", owner=tuple(arrays))


def values_array(obj, value_type, kind):
    """A 1-D contiguous array of values in `value_type` from a NumPy/CuPy/PyTorch array: what
    sparsetc_matrix_set_values reads. Returns (array, pointer)."""
    if kind == "torch" or kind_of(obj) == "torch":
        torch = _torch()
        dtype = {v: k for k, v in _torch_value_types().items()}[value_type]
        t = torch.as_tensor(obj).detach().reshape(-1).to(dtype).contiguous()
        return t, t.data_ptr()
    if kind_of(obj) == "cupy":
        import cupy
        a = cupy.ascontiguousarray(obj.reshape(-1), dtype=_VALUE_NUMPY[value_type])
        return a, a.data.ptr
    a = np.ascontiguousarray(np.asarray(obj).reshape(-1), dtype=_VALUE_NUMPY[value_type])
    return a, a.ctypes.data


# ----------------------------------------------------------------------------------- results

class _CudaArrayView:
    """A borrowed 1-D device array, handed to CuPy or PyTorch through __cuda_array_interface__.
    The copy that follows runs on the framework's current stream, which is the handle's stream,
    so it is ordered after the library's work and before the library frees the memory."""

    def __init__(self, ptr, n, typestr):
        self.__cuda_array_interface__ = {"shape": (n,), "typestr": typestr, "data": (ptr, False),
                                         "version": 3, "strides": None, "stream": None}


def copy_array(kind, memory, device, ptr, n, dtype):
    """A new 1-D array of `kind` holding a copy of n elements of numpy dtype `dtype` at ptr."""
    dtype = np.dtype(dtype)
    if memory == Memory.HOST:
        host = (np.ctypeslib.as_array(C.cast(ptr, C.POINTER(np.ctypeslib.as_ctypes_type(dtype))), shape=(n,)).copy()
                if n else np.empty(0, dtype))
        if kind == "torch":
            return _torch().from_numpy(host)
        return host
    view = _CudaArrayView(ptr, n, dtype.str)
    if kind == "cupy":
        import cupy
        with cupy.cuda.Device(device):
            return cupy.empty(0, dtype) if n == 0 else cupy.asarray(view).copy()
    torch = _torch()
    where = torch.device("cuda", device)
    tdtype = getattr(torch, dtype.name)
    if n == 0:
        return torch.empty(0, dtype=tdtype, device=where)
    return torch.as_tensor(view, device=where).clone()


def make_sparse(kind, flavor, fmt, shape, arrays):
    """A sparse matrix of the caller's kind from (offsets or rows, indices, values), zero-based."""
    a0, a1, values = arrays
    if kind == "numpy":
        sparse = _scipy_sparse()
        array_api = flavor == "scipy-array"
        if fmt == Format.COO:
            make = sparse.coo_array if array_api else sparse.coo_matrix
            return make((values, (a0, a1)), shape=shape)
        make = {Format.CSR: (sparse.csr_array if array_api else sparse.csr_matrix),
                Format.CSC: (sparse.csc_array if array_api else sparse.csc_matrix)}[fmt]
        return make((values, a1, a0), shape=shape)
    if kind == "cupy":
        import cupyx.scipy.sparse as cs
        if fmt == Format.COO:
            return cs.coo_matrix((values, (a0, a1)), shape=shape)
        return {Format.CSR: cs.csr_matrix, Format.CSC: cs.csc_matrix}[fmt]((values, a1, a0), shape=shape)
    torch = _torch()
    if fmt == Format.COO:
        return torch.sparse_coo_tensor(torch.stack([a0.to(torch.int64), a1.to(torch.int64)]), values, shape)
    if a0.dtype != a1.dtype:
        a0, a1 = a0.to(torch.int64), a1.to(torch.int64)
    if fmt == Format.CSR:
        return torch.sparse_csr_tensor(a0, a1, values, shape)
    return torch.sparse_csc_tensor(a0, a1, values, shape)


def index_dtype(index_type):
    return _INDEX_NUMPY[index_type]


def value_dtype(value_type):
    if value_type not in _VALUE_NUMPY:
        raise TypeError(f"value type {value_type} has no NumPy dtype")
    return _VALUE_NUMPY[value_type]
