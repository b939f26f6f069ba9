"""Enumerations of the C ABI (include/sparsetc/sparsetc_types.h), with the same values.

The library carries every enumeration as int32_t and may add values in later versions, so the
wrappers accept plain integers wherever an enumeration is expected. tests/python/test_constants.py
checks these classes against the C header.
"""
import enum


class Status(enum.IntEnum):
    SUCCESS = 0
    NOT_INITIALIZED = 1
    ALLOC_FAILED = 2
    INVALID_VALUE = 3
    ARCH_MISMATCH = 4
    MAPPING_ERROR = 5
    EXECUTION_FAILED = 6
    INTERNAL_ERROR = 7
    MATRIX_TYPE_NOT_SUPPORTED = 8
    ZERO_PIVOT = 9
    NOT_SUPPORTED = 10
    INSUFFICIENT_RESOURCES = 11
    NULL_POINTER = 100
    DIMENSION_MISMATCH = 101
    INVALID_INDEX = 102
    UNSORTED_INDICES = 103
    DUPLICATE_ENTRY = 104
    INVALID_ROW_OFFSETS = 105
    NAN_OR_INF = 106
    VALUE_OUT_OF_RANGE = 107
    TYPE_MISMATCH = 108
    INVALID_STATE = 109
    WORKSPACE_TOO_SMALL = 110
    CUDA_ERROR = 111
    CUSPARSE_ERROR = 112
    CUBLAS_ERROR = 113
    IO_ERROR = 114
    FILE_FORMAT_ERROR = 115
    NO_DEVICE = 116
    SIZE_OVERFLOW = 117
    UNKNOWN_EXCEPTION = 118


class ValueType(enum.IntEnum):
    F32 = 0
    F64 = 1
    F16 = 2
    BF16 = 14


class IndexType(enum.IntEnum):
    I32 = 2
    I64 = 3


class IndexBase(enum.IntEnum):
    ZERO = 0
    ONE = 1


class Order(enum.IntEnum):
    COL = 1
    ROW = 2


class Operation(enum.IntEnum):
    NON_TRANSPOSE = 0
    TRANSPOSE = 1


class Format(enum.IntEnum):
    CSR = 1
    CSC = 2
    COO = 3


class Memory(enum.IntEnum):
    HOST = 0
    DEVICE = 1


class Ownership(enum.IntEnum):
    COPY = 0
    BORROW = 1


class Backend(enum.IntEnum):
    AUTO = 0
    CPU = 1
    GPU = 2


class Validation(enum.IntEnum):
    NONE = 0
    ARGUMENTS = 1
    STRUCTURE = 2
    VALUES = 3


class Duplicates(enum.IntEnum):
    ERROR = 0
    SUM = 1


class ComputeType(enum.IntEnum):
    DEFAULT = 0
    F32 = 1
    F64 = 2
    TF32 = 3


class SpmmAlg(enum.IntEnum):
    AUTO = 0
    CPU = 1
    CUSPARSE = 2
    BCSR_TC = 3
    CSR = 4
    DCSR = 5
    TILED_DCSR = 6
    VBR_CUBLAS = 7


class SpgemmAlg(enum.IntEnum):
    AUTO = 0
    BINNED_MERGE_PATH = 1
    TSPARSE_TC = 2
    CUSPARSE = 3
    CPU = 4


class TcPrecision(enum.IntEnum):
    DEFAULT = 0
    F16 = 1
    BF16 = 2
    F64 = 3
    CUDA_CORES = 4
    F16_SPLIT = 5
    BF16_SPLIT = 6


class ReorderMethod(enum.IntEnum):
    IDENTITY = 0
    ONE_SA = 1
    SA = 2
    AUTO = 3


def to_enum(cls, value, what):
    """Accepts a member, its name in any case ('auto', 'F32', '32f'), or a plain integer (a
    value a later library may know); returns the integer to pass to C."""
    if isinstance(value, str):
        key = value.strip().upper().replace("-", "_")
        aliases = {"N": "NON_TRANSPOSE", "T": "TRANSPOSE", "32F": "F32", "64F": "F64",
                   "32": "I32", "64": "I64", "C": "ROW", "F": "COL"}
        key = aliases.get(key, key)
        try:
            return int(cls[key])
        except KeyError:
            names = ", ".join(m.name.lower() for m in cls)
            raise ValueError(f"unknown {what} {value!r} (expected one of: {names})") from None
    if isinstance(value, bool) or not isinstance(value, int):
        raise TypeError(f"{what} must be a {cls.__name__}, its name or an int, not {type(value).__name__}")
    return int(value)
