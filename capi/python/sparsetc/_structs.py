"""ctypes mirrors of the option and report structures of sparsetc_types.h. Each starts with
size_t struct_size, which new() sets, so the library writes only the fields this package knows."""
import ctypes as C


class _Sized(C.Structure):
    @classmethod
    def new(cls, **fields):
        value = cls(**fields)
        value.struct_size = C.sizeof(cls)
        return value

    def as_dict(self):
        return {name: getattr(self, name) for name, _ in self._fields_ if name != "struct_size"}


class MatrixInfo(_Sized):
    _fields_ = [("struct_size", C.c_size_t), ("rows", C.c_int64), ("cols", C.c_int64), ("nnz", C.c_int64),
                ("format", C.c_int32), ("offset_type", C.c_int32), ("index_type", C.c_int32),
                ("base", C.c_int32), ("value_type", C.c_int32), ("memory", C.c_int32), ("ownership", C.c_int32)]


class Analysis(_Sized):
    _fields_ = [("struct_size", C.c_size_t), ("rows", C.c_int64), ("cols", C.c_int64), ("nnz", C.c_int64),
                ("empty_rows", C.c_int64), ("row_length_min", C.c_int64), ("row_length_max", C.c_int64),
                ("row_length_mean", C.c_double), ("row_length_std", C.c_double), ("density", C.c_double),
                ("products", C.c_int64), ("bandwidth", C.c_int64),
                ("blocks_16x8", C.c_int64), ("blocks_16x16", C.c_int64), ("blocks_8x8", C.c_int64),
                ("fill_16x8", C.c_double), ("fill_16x16", C.c_double), ("fill_8x8", C.c_double),
                ("tile_density_median", C.c_double), ("tile_density_mean", C.c_double),
                ("tile_density_std", C.c_double), ("strip_width", C.c_int64), ("nonempty_rows", C.c_int64),
                ("nonempty_rows_per_strip_mean", C.c_double), ("h_norm", C.c_double), ("ssf", C.c_double)]


class SpgemmOptions(_Sized):
    _fields_ = [("struct_size", C.c_size_t), ("drop_tolerance", C.c_double), ("memory_budget", C.c_size_t),
                ("tc_precision", C.c_int32)]


ALLOCATE_FN = C.CFUNCTYPE(C.c_int32, C.c_void_p, C.POINTER(C.c_void_p), C.c_size_t, C.c_void_p)
DEALLOCATE_FN = C.CFUNCTYPE(None, C.c_void_p, C.c_void_p, C.c_size_t, C.c_void_p)
LOG_CALLBACK_FN = C.CFUNCTYPE(None, C.c_void_p, C.c_int32, C.c_char_p)


class Allocator(_Sized):
    _fields_ = [("struct_size", C.c_size_t), ("user_data", C.c_void_p),
                ("allocate", ALLOCATE_FN), ("deallocate", DEALLOCATE_FN)]


class MemoryStats(_Sized):
    _fields_ = [("struct_size", C.c_size_t), ("current_bytes", C.c_int64), ("peak_bytes", C.c_int64),
                ("allocations", C.c_int64), ("live_allocations", C.c_int64), ("pool_reserved_bytes", C.c_int64)]


class ReorderOptions(_Sized):
    _fields_ = [("struct_size", C.c_size_t), ("tau", C.c_double), ("block_width", C.c_int64),
                ("block_height", C.c_int64), ("max_group_height", C.c_int64), ("pad_groups", C.c_int32),
                ("reserved", C.c_int32), ("auto_min_reduction", C.c_double)]


class ReorderQuality(_Sized):
    _fields_ = [("struct_size", C.c_size_t), ("block_height", C.c_int64), ("block_width", C.c_int64),
                ("blocks", C.c_int64), ("in_block_density", C.c_double), ("block_rows", C.c_int64),
                ("blocks_per_block_row_mean", C.c_double), ("blocks_per_block_row_std", C.c_double),
                ("blocks_per_block_row_max", C.c_int64), ("groups", C.c_int64), ("mean_group_height", C.c_double),
                ("vbr_blocks", C.c_int64), ("vbr_in_block_density", C.c_double),
                ("vbr_mean_block_height", C.c_double)]
