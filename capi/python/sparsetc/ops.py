"""SpMM (C = alpha op(A) B + beta C) and SpGEMM (C = op(A) op(B)), one-shot and through plans.

Operands may be NumPy/SciPy (CPU backend), CuPy/cupyx or PyTorch (host or GPU); results are of the
kind of the dense operand (SpMM) or of A (SpGEMM). Device work runs on the framework's current
stream and is asynchronous like the framework's own operations.
"""
import ctypes as C

from . import _arrays, _structs
from ._constants import ComputeType, Memory, Operation, Order, SpgemmAlg, SpmmAlg, ValueType, to_enum
from ._library import call
from .matrix import Matrix, _handle_for, _value_type


def _operation(op):
    return to_enum(Operation, op, "operation")


def _dense_descriptor(handle, view, with_values=True):
    ptr = C.c_void_p()
    call("sparsetc_dense_create", handle.ptr, C.byref(ptr), view.rows, view.cols, view.ld,
         view.ptr if with_values else None, view.value_type, view.order, view.memory)
    return ptr


class _Dense:
    """A dense descriptor that is destroyed with this object."""

    def __init__(self, handle, view, with_values=True):
        self.ptr = _dense_descriptor(handle, view, with_values)

    def close(self):
        if self.ptr is not None:
            ptr, self.ptr = self.ptr, None
            call("sparsetc_dense_destroy", ptr)

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def _as_2d(B):
    """B as 2-D (a vector becomes one column) and whether the result goes back to 1-D."""
    if getattr(B, "ndim", 2) == 1:
        return B.reshape(-1, 1), True
    return B, False


def _check_same_place(A, b_view):
    info = A.info()
    if info["memory"] != b_view.memory or (b_view.memory == Memory.DEVICE and A.device != b_view.device):
        where = lambda memory, device: "host" if memory == Memory.HOST else f"GPU {device}"  # noqa: E731
        raise ValueError(f"A is on {where(info['memory'], A.device)} but the dense operand on "
                         f"{where(b_view.memory, b_view.device)}")
    return info


def _follow(handle, view):
    if view.memory == Memory.DEVICE:
        handle._follow_stream(_arrays.current_stream(view.kind, view.device))


def _contiguous_ld(rows, cols, order):
    return max(cols if order == Order.ROW else rows, 1)


# ==================================================================================== SpMM

def spmm(A, B, *, alpha=1.0, beta=0.0, out=None, op_a="n", compute="default", alg="auto", handle=None):
    """C = alpha op(A) B + beta C.

    A: SciPy/cupyx/PyTorch sparse matrix or Matrix; B: NumPy/CuPy/PyTorch array (2-D, or 1-D for
    a matrix-vector product), row- or column-major (strided views of either are used in place).
    out: the result array to write (it is read only when beta != 0); without it a new array of
    B's kind, device and order is returned, with the common value type of A and B.
    """
    if beta != 0 and out is None:
        raise ValueError("beta != 0 needs out (the C that is scaled and added to)")
    B2, vector = _as_2d(B)
    A_matrix = Matrix.of(A, handle)
    b = _arrays.dense_view(B2)
    info = _check_same_place(A_matrix, b)
    h = A_matrix.handle
    rows = info["rows"] if _operation(op_a) == Operation.NON_TRANSPOSE else info["cols"]
    if out is None:
        out2 = _arrays.empty_dense(b.kind, b.memory, b.device, rows, b.cols,
                                   _arrays.result_value_type(info["value_type"], b.value_type), b.order)
        result = out2.reshape(-1) if vector else out2
    else:
        result = out
        out2, _ = _as_2d(out)
    c = _arrays.dense_view(out2, copy_ok=False)
    _follow(h, b)
    db, dc = _Dense(h, b), _Dense(h, c)
    try:
        call("sparsetc_spmm", h.ptr, _operation(op_a), float(alpha), A_matrix.ptr, db.ptr, float(beta), dc.ptr,
             to_enum(ComputeType, compute, "compute type"), to_enum(SpmmAlg, alg, "SpMM algorithm"))
    finally:
        db.close()
        dc.close()
    return result


class SpmmPlan:
    """A reusable SpMM: the analysis and conversions of A happen once, at creation.

        plan = SpmmPlan(A, B_example)         # shape, dtype, order and place of B
        C = plan(B)                           # C = A B, a new array
        plan(B2, out=C, alpha=2, beta=1)      # C = 2 A B2 + C
        plan.set_values(new_values_of_A)      # same pattern, new values

    B at execution may differ from the example in contents and strides (it is copied into the
    planned contiguous layout when its strides differ); shape, dtype and place must match.
    out_dtype, out_order ('C' or 'F'): the result's value type and layout (default: the common
    type of A and B, B's order).
    """

    def __init__(self, A, B, *, op_a="n", out_dtype=None, out_order=None, compute="default", alg="auto",
                 handle=None):
        self.A = Matrix.of(A, handle)
        self.handle = h = self.A.handle
        B2, self._vector = _as_2d(B)
        b = _arrays.dense_view(B2)
        info = _check_same_place(self.A, b)
        self._op = _operation(op_a)
        rows = info["rows"] if self._op == Operation.NON_TRANSPOSE else info["cols"]
        c_type = (_arrays.result_value_type(info["value_type"], b.value_type) if out_dtype is None
                  else _value_type(out_dtype))
        c_order = b.order if out_order is None else (Order.ROW if out_order.upper() == "C" else Order.COL)
        self._b_layout = _arrays.DenseView(None, b.rows, b.cols, _contiguous_ld(b.rows, b.cols, b.order),
                                           b.value_type, b.order, b.memory, b.device, b.kind, None)
        self._c_layout = _arrays.DenseView(None, rows, b.cols, _contiguous_ld(rows, b.cols, c_order), c_type,
                                           c_order, b.memory, b.device, b.kind, None)
        _follow(h, b)
        self._db = _Dense(h, self._b_layout, with_values=False)
        self._dc = _Dense(h, self._c_layout, with_values=False)
        ptr = C.c_void_p()
        call("sparsetc_spmm_plan_create", h.ptr, C.byref(ptr), self._op, self.A.ptr, self._db.ptr, self._dc.ptr,
             to_enum(ComputeType, compute, "compute type"), to_enum(SpmmAlg, alg, "SpMM algorithm"))
        self._ptr = ptr

    def _fit(self, array, planned, what, copy_ok):
        array2, _ = _as_2d(array)
        v = _arrays.dense_view(array2, copy_ok=copy_ok, order="C" if planned.order == Order.ROW else "F")
        if (v.rows, v.cols, v.value_type, v.memory, v.device, v.kind) != (
                planned.rows, planned.cols, planned.value_type, planned.memory, planned.device, planned.kind):
            raise ValueError(f"{what} is {v.rows}x{v.cols} {ValueType(v.value_type).name} on "
                             f"{'host' if v.memory == Memory.HOST else 'GPU %d' % v.device} ({v.kind}); the plan "
                             f"expects {planned.rows}x{planned.cols} {ValueType(planned.value_type).name} on "
                             f"{'host' if planned.memory == Memory.HOST else 'GPU %d' % planned.device} "
                             f"({planned.kind})")
        if v.ld != planned.ld:
            if not copy_ok:
                raise ValueError(f"{what} must be contiguous in the planned order")
            order = "C" if planned.order == Order.ROW else "F"
            v = _arrays.dense_view(_copy_contiguous(v.owner, order), copy_ok=False)
        return v

    def __call__(self, B, *, out=None, alpha=1.0, beta=0.0):
        if beta != 0 and out is None:
            raise ValueError("beta != 0 needs out (the C that is scaled and added to)")
        b = self._fit(B, self._b_layout, "B", True)
        c_layout = self._c_layout
        result = out if out is not None else _arrays.empty_dense(c_layout.kind, c_layout.memory, c_layout.device,
                                                                 c_layout.rows, c_layout.cols,
                                                                 c_layout.value_type, c_layout.order)
        c = self._fit(result, c_layout, "out", False)
        _follow(self.handle, b)
        call("sparsetc_dense_set_values", self._db.ptr, b.ptr)
        call("sparsetc_dense_set_values", self._dc.ptr, c.ptr)
        call("sparsetc_spmm_execute", self.ptr, float(alpha), self._db.ptr, float(beta), self._dc.ptr, None, 0)
        if self._vector and out is None:
            return result.reshape(-1)
        return result

    def set_values(self, values):
        """New values of A (same pattern); the next execution uses them."""
        self.A.set_values(values)

    @property
    def ptr(self):
        if self._ptr is None:
            raise ValueError("the plan is closed")
        return self._ptr

    @property
    def alg(self):
        """(algorithm, reason) the plan runs."""
        return _get_alg("sparsetc_spmm_plan_get_alg", self.ptr, SpmmAlg)

    @property
    def workspace_size(self):
        size = C.c_size_t()
        call("sparsetc_spmm_workspace_size", self.ptr, C.byref(size))
        return size.value

    def close(self):
        if getattr(self, "_ptr", None) is not None:
            ptr, self._ptr = self._ptr, None
            call("sparsetc_spmm_plan_destroy", ptr)
            self._db.close()
            self._dc.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def _copy_contiguous(array, order):
    kind = _arrays.kind_of(array)
    if kind == "torch":
        return array.contiguous() if order == "C" else array.t().contiguous().t()
    if kind == "cupy":
        import cupy
        with cupy.cuda.Device(array.device.id):
            return cupy.array(array, order=order, copy=True)
    import numpy as np
    return np.array(array, order=order, copy=True)


def _get_alg(function, plan, enum):
    value = C.c_int32()
    reason = C.create_string_buffer(256)
    call(function, plan, C.byref(value), reason, len(reason))
    try:
        alg = enum(value.value)
    except ValueError:  # a newer library's algorithm
        alg = value.value
    return alg, reason.value.decode()


# ==================================================================================== SpGEMM

def _compute_value_type(compute, a_type, b_type):
    compute = to_enum(ComputeType, compute, "compute type")
    if compute == ComputeType.F64 or (compute == ComputeType.DEFAULT and ValueType.F64 in (a_type, b_type)):
        return ValueType.F64
    return ValueType.F32


def _spgemm_operand(obj, handle, device_values):
    """A Matrix for a SpGEMM operand. Framework objects on a GPU go in as int32 CSR in the compute
    precision (the form the device path takes) when they fit."""
    if isinstance(obj, Matrix):
        return obj
    if device_values is not None:
        view = _arrays.sparse_view(obj, csr_only=True, int32_ok=True, values_as=device_values)
    else:
        view = _arrays.sparse_view(obj)
    return Matrix(obj, handle=handle, _view=view)


def _sparse_place(obj):
    if isinstance(obj, Matrix):
        info = obj.info()
        return info["memory"], info["value_type"]
    return _arrays.sparse_place(obj)


class SpgemmPlan:
    """A reusable SpGEMM C = op(A) op(B) (B defaults to A): the pattern of C is computed once,
    each call computes the values from the current values of A and B.

        plan = SpgemmPlan(A, B)
        C = plan()                      # a new matrix of A's kind (SciPy CSR, cupyx CSR, torch CSR)
        plan.set_values(A=A2)           # A2: same pattern as A (or its values array)
        C2 = plan()

    drop_tolerance: entries with |c| <= tolerance are removed; memory_budget: bytes of temporary
    memory the device algorithm may take (larger work is split into row panels).
    """

    def __init__(self, A, B=None, *, op_a="n", op_b="n", compute="default", alg="auto", drop_tolerance=None,
                 memory_budget=None, handle=None):
        same = B is None or B is A
        a_memory, a_type = _sparse_place(A)
        b_type = a_type if same else _sparse_place(B)[1]
        device_values = _compute_value_type(compute, a_type, b_type) if a_memory == Memory.DEVICE else None
        self._device_values = device_values
        self.A = _spgemm_operand(A, handle, device_values)
        self.handle = h = self.A.handle
        self.B = self.A if same else _spgemm_operand(B, h, device_values)
        self.A._stream()
        options = None
        if drop_tolerance is not None or memory_budget is not None:
            options = _structs.SpgemmOptions.new(
                drop_tolerance=-1.0 if drop_tolerance is None else float(drop_tolerance),
                memory_budget=0 if memory_budget is None else int(memory_budget))
        ptr = C.c_void_p()
        call("sparsetc_spgemm_plan_create", h.ptr, C.byref(ptr), _operation(op_a), self.A.ptr, _operation(op_b),
             self.B.ptr, to_enum(ComputeType, compute, "compute type"), to_enum(SpgemmAlg, alg, "SpGEMM algorithm"),
             None if options is None else C.byref(options))
        self._ptr = ptr
        self._nnz = None
        self._c = None

    @property
    def ptr(self):
        if self._ptr is None:
            raise ValueError("the plan is closed")
        return self._ptr

    @property
    def nnz(self):
        """nnz(C) (runs the symbolic phase once; a synchronisation point on the GPU)."""
        if self._nnz is None:
            self.A._stream()
            value = C.c_int64()
            call("sparsetc_spgemm_symbolic", self.ptr, C.byref(value))
            self._nnz = value.value
        return self._nnz

    def compute(self, *, as_matrix=False):
        """Computes C from the current values of A and B. Returns a copy of A's kind, or, with
        as_matrix, the plan's own Matrix (overwritten by the next call)."""
        self.nnz  # noqa: B018 - symbolic first
        self.A._stream()
        c = C.c_void_p(None if self._c is None else self._c.ptr.value)
        call("sparsetc_spgemm_numeric", self.ptr, C.byref(c))
        if self._c is None:
            self._c = Matrix._adopt(c, self.handle, self.A.kind, self.A.flavor)
            self._c.device = self.A.device
        return self._c if as_matrix else self._c.export()

    __call__ = compute

    def set_values(self, A=None, B=None):
        """New values for A and/or B: arrays in the stored order, or sparse matrices with the same
        pattern (normalised as at creation)."""
        for new, matrix in ((A, self.A), (B, self.B)):
            if new is None:
                continue
            if _arrays.is_sparse(new):
                if self._device_values is not None:
                    view = _arrays.sparse_view(new, csr_only=True, int32_ok=True, values_as=self._device_values)
                else:
                    view = _arrays.sparse_view(new)
                if view.nnz != matrix.nnz:
                    raise ValueError(f"the new matrix has {view.nnz} entries, the planned one {matrix.nnz}")
                new = view.owner[2]
            matrix.set_values(new)

    @property
    def alg(self):
        """(algorithm, reason) the plan runs."""
        return _get_alg("sparsetc_spgemm_plan_get_alg", self.ptr, SpgemmAlg)

    @property
    def estimate(self):
        """(products, bytes of working memory): products is -1 where the algorithm does not count."""
        products, memory = C.c_int64(), C.c_size_t()
        call("sparsetc_spgemm_plan_get_estimate", self.ptr, C.byref(products), C.byref(memory))
        return products.value, memory.value

    def close(self):
        if getattr(self, "_ptr", None) is not None:
            ptr, self._ptr = self._ptr, None
            call("sparsetc_spgemm_plan_destroy", ptr)
            if self._c is not None:
                self._c.close()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:
            pass


def spgemm(A, B=None, *, op_a="n", op_b="n", compute="default", alg="auto", drop_tolerance=None,
           memory_budget=None, handle=None):
    """C = op(A) op(B) (B defaults to A) as a new sparse matrix of A's kind: SciPy CSR (csr_array
    for SciPy arrays), cupyx CSR or PyTorch sparse CSR."""
    with SpgemmPlan(A, B, op_a=op_a, op_b=op_b, compute=compute, alg=alg, drop_tolerance=drop_tolerance,
                    memory_budget=memory_budget, handle=handle) as plan:
        return plan()
