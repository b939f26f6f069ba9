"""Handles: the library context (backend, device, stream, validation level, threads).

A handle must not be used by two threads at once, so the handles this package makes on its own
(`default_handle`) are kept per thread, one per backend and device.
"""
import ctypes as C
import threading

from . import _structs
from ._constants import Backend, Duplicates, Validation, to_enum
from ._library import call, lib


def _stream_pointer(stream):
    """A cudaStream_t as an int from None, an int, a CuPy stream (.ptr) or a PyTorch stream
    (.cuda_stream)."""
    if stream is None:
        return None
    for attribute in ("cuda_stream", "ptr"):
        if hasattr(stream, attribute):
            return int(getattr(stream, attribute)) or None
    return int(stream) or None


class Handle:
    """A sparsetc handle.

    backend: 'auto' (the GPU when usable, else the CPU), 'cpu' or 'gpu'; device: CUDA ordinal.
    Unlike the C default, repeated COO entries are summed (SciPy's rule); pass
    duplicates='error' for the library's default. Unless a stream is set explicitly, device work
    follows the current stream of the framework (CuPy or PyTorch) whose arrays are passed.
    Matrices and plans keep their handle alive; close() destroys it at once.
    """

    def __init__(self, backend="auto", device=0, *, validation=None, num_threads=None, duplicates="sum",
                 stream=None):
        ptr = C.c_void_p()
        call("sparsetc_create_with_backend", C.byref(ptr), to_enum(Backend, backend, "backend"), int(device))
        self._ptr = ptr
        self.device = int(device)
        self.follows_framework_stream = True
        backend_value = C.c_int32()
        call("sparsetc_get_backend", ptr, C.byref(backend_value))
        self.backend = Backend(backend_value.value)
        call("sparsetc_set_duplicates", ptr, to_enum(Duplicates, duplicates, "duplicates policy"))
        if validation is not None:
            self.validation = validation
        if num_threads is not None:
            self.set_num_threads(num_threads)
        if stream is not None:
            self.stream = stream

    # ---- lifetime
    @property
    def ptr(self):
        if self._ptr is None:
            raise ValueError("the handle is closed")
        return self._ptr

    def close(self):
        """Destroys the handle now (its matrices and plans must be closed first)."""
        if getattr(self, "_ptr", None) is not None:
            ptr, self._ptr = self._ptr, None
            call("sparsetc_destroy", ptr)

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def __del__(self):
        try:
            self.close()
        except Exception:  # interpreter shutdown: the library may be gone already
            pass

    def __repr__(self):
        state = "closed" if self._ptr is None else f"{self.backend.name.lower()}, device {self.device}"
        return f"<sparsetc.Handle {state}>"

    # ---- settings
    @property
    def stream(self):
        """The cudaStream_t (an int, 0 for the default stream) device work is ordered on."""
        value = C.c_void_p()
        call("sparsetc_get_stream", self.ptr, C.byref(value))
        return value.value or 0

    @stream.setter
    def stream(self, stream):
        call("sparsetc_set_stream", self.ptr, _stream_pointer(stream))
        self.follows_framework_stream = False

    def _follow_stream(self, stream):
        """Orders the next calls on the framework's current stream (unless a stream was set)."""
        if self.follows_framework_stream and stream is not None:
            call("sparsetc_set_stream", self.ptr, stream or None)

    @property
    def validation(self):
        value = C.c_int32()
        call("sparsetc_get_validation", self.ptr, C.byref(value))
        return Validation(value.value)

    @validation.setter
    def validation(self, level):
        call("sparsetc_set_validation", self.ptr, to_enum(Validation, level, "validation level"))

    def set_num_threads(self, threads):
        """Host threads of the CPU engine's multiplications (0: OpenMP's default)."""
        call("sparsetc_set_num_threads", self.ptr, int(threads))

    def memory_stats(self):
        """Device memory of the handle: current, peak, allocations, live allocations, pool bytes."""
        stats = _structs.MemoryStats.new()
        call("sparsetc_get_memory_stats", self.ptr, C.byref(stats))
        return stats.as_dict()

    def reset_peak_memory(self):
        call("sparsetc_reset_peak_memory", self.ptr)


_local = threading.local()


def default_handle(gpu, device=0):
    """This thread's handle for the CPU backend (gpu False) or for a GPU (gpu True, device)."""
    handles = getattr(_local, "handles", None)
    if handles is None:
        handles = _local.handles = {}
    key = ("gpu", int(device)) if gpu else ("cpu", 0)
    if key not in handles:
        handles[key] = Handle("gpu" if gpu else "cpu", device if gpu else 0)
    return handles[key]


def version():
    """(major, minor, patch) of the loaded library."""
    major, minor, patch = C.c_int32(), C.c_int32(), C.c_int32()
    call("sparsetc_get_version", C.byref(major), C.byref(minor), C.byref(patch))
    return major.value, minor.value, patch.value


def abi_version():
    value = C.c_int32()
    call("sparsetc_get_abi_version", C.byref(value))
    return value.value


def build_info():
    buffer = C.create_string_buffer(512)
    call("sparsetc_get_build_info", buffer, len(buffer))
    return buffer.value.decode()


def device_count():
    """Usable CUDA devices (0 without a GPU or a driver)."""
    value = C.c_int32()
    call("sparsetc_get_device_count", C.byref(value))
    return value.value


def status_name(status):
    return lib().sparsetc_get_status_name(int(status)).decode()


def status_string(status):
    return lib().sparsetc_get_status_string(int(status)).decode()


def set_log_level(level):
    """Process-wide log level: 0 trace … 6 off, or a name ('debug', 'info', 'warn', ...)."""
    names = {"trace": 0, "debug": 1, "info": 2, "warn": 3, "warning": 3, "error": 4, "critical": 5, "off": 6}
    call("sparsetc_set_log_level", names[level.lower()] if isinstance(level, str) else int(level))


_log_callback = None  # the ctypes trampoline must outlive its use by the library


def set_log_callback(function):
    """Sends the library's log lines to function(level, message) instead of standard error;
    None restores standard error."""
    global _log_callback
    if function is None:
        trampoline = C.cast(None, _structs.LOG_CALLBACK_FN)
    else:
        def trampoline_body(_user_data, level, message):
            try:
                function(level, message.decode("utf-8", "replace"))
            except Exception:  # an exception cannot cross into C
                pass
        trampoline = _structs.LOG_CALLBACK_FN(trampoline_body)
    call("sparsetc_set_log_callback", trampoline, None)
    _log_callback = trampoline if function is not None else None
