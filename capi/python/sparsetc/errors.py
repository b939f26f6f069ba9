"""Exceptions: one class per status code, each carrying the library's message.

Every class derives from SparsetcError (status, name, message) and from the built-in exception a
Python caller would expect, so `except ValueError` catches bad input and `except MemoryError`
catches an allocation failure.
"""
from ._constants import Status


class SparsetcError(Exception):
    """A failed library call. `status` is the sparsetc_status_t value, `name` its enumerator
    (e.g. 'SPARSETC_STATUS_INVALID_INDEX'), `message` the library's text naming the offender."""

    def __init__(self, status, name, message):
        self.status = int(status)
        self.name = name
        self.message = message
        super().__init__(f"{name}: {message}" if message else name)


class LibraryNotFoundError(OSError):
    """libsparsetc.so.1 could not be loaded (the message lists every place tried)."""


class NotInitializedError(SparsetcError, RuntimeError): pass
class AllocFailedError(SparsetcError, MemoryError): pass
class InvalidValueError(SparsetcError, ValueError): pass
class ArchMismatchError(SparsetcError, RuntimeError): pass
class MappingError(SparsetcError, RuntimeError): pass
class ExecutionFailedError(SparsetcError, RuntimeError): pass
class InternalError(SparsetcError, RuntimeError): pass
class MatrixTypeNotSupportedError(SparsetcError, TypeError): pass
class ZeroPivotError(SparsetcError, ArithmeticError): pass
class NotSupportedError(SparsetcError, NotImplementedError): pass
class InsufficientResourcesError(SparsetcError, RuntimeError): pass
class NullPointerError(SparsetcError, ValueError): pass
class DimensionMismatchError(SparsetcError, ValueError): pass
class InvalidIndexError(SparsetcError, ValueError): pass
class UnsortedIndicesError(SparsetcError, ValueError): pass
class DuplicateEntryError(SparsetcError, ValueError): pass
class InvalidRowOffsetsError(SparsetcError, ValueError): pass
class NanOrInfError(SparsetcError, ValueError): pass
class ValueOutOfRangeError(SparsetcError, OverflowError): pass
class TypeMismatchError(SparsetcError, TypeError): pass
class InvalidStateError(SparsetcError, RuntimeError): pass
class WorkspaceTooSmallError(SparsetcError, ValueError): pass
class CudaError(SparsetcError, RuntimeError): pass
class CusparseError(SparsetcError, RuntimeError): pass
class CublasError(SparsetcError, RuntimeError): pass
class FileIOError(SparsetcError, OSError): pass
class FileFormatError(SparsetcError, ValueError): pass
class NoDeviceError(SparsetcError, RuntimeError): pass
class SizeOverflowError(SparsetcError, OverflowError): pass
class UnknownExceptionError(SparsetcError, RuntimeError): pass


EXCEPTION_OF_STATUS = {
    Status.NOT_INITIALIZED: NotInitializedError,
    Status.ALLOC_FAILED: AllocFailedError,
    Status.INVALID_VALUE: InvalidValueError,
    Status.ARCH_MISMATCH: ArchMismatchError,
    Status.MAPPING_ERROR: MappingError,
    Status.EXECUTION_FAILED: ExecutionFailedError,
    Status.INTERNAL_ERROR: InternalError,
    Status.MATRIX_TYPE_NOT_SUPPORTED: MatrixTypeNotSupportedError,
    Status.ZERO_PIVOT: ZeroPivotError,
    Status.NOT_SUPPORTED: NotSupportedError,
    Status.INSUFFICIENT_RESOURCES: InsufficientResourcesError,
    Status.NULL_POINTER: NullPointerError,
    Status.DIMENSION_MISMATCH: DimensionMismatchError,
    Status.INVALID_INDEX: InvalidIndexError,
    Status.UNSORTED_INDICES: UnsortedIndicesError,
    Status.DUPLICATE_ENTRY: DuplicateEntryError,
    Status.INVALID_ROW_OFFSETS: InvalidRowOffsetsError,
    Status.NAN_OR_INF: NanOrInfError,
    Status.VALUE_OUT_OF_RANGE: ValueOutOfRangeError,
    Status.TYPE_MISMATCH: TypeMismatchError,
    Status.INVALID_STATE: InvalidStateError,
    Status.WORKSPACE_TOO_SMALL: WorkspaceTooSmallError,
    Status.CUDA_ERROR: CudaError,
    Status.CUSPARSE_ERROR: CusparseError,
    Status.CUBLAS_ERROR: CublasError,
    Status.IO_ERROR: FileIOError,
    Status.FILE_FORMAT_ERROR: FileFormatError,
    Status.NO_DEVICE: NoDeviceError,
    Status.SIZE_OVERFLOW: SizeOverflowError,
    Status.UNKNOWN_EXCEPTION: UnknownExceptionError,
}


def exception_for(status, name, message):
    """The exception for a status; a status this package does not know (a newer library) gives
    the base class."""
    return EXCEPTION_OF_STATUS.get(status, SparsetcError)(status, name, message)
