"""NVML's errors as typed exceptions: the error codes nasenergy tells apart, one `NvmlError`
subclass per kind, and `_call`, which runs one binding function and turns its error into a one-line
`NvmlError` naming what was attempted (`nasenergy.hardware.nvml` re-exports them)."""

from __future__ import annotations

from typing import Any, Callable, TypeVar

from nasenergy.errors import CandidateError

T = TypeVar("T")

# NVML return codes (from nvml.h); stable across driver versions.
_ERR_UNINITIALIZED = 1
_ERR_INVALID_ARGUMENT = 2
_ERR_NOT_SUPPORTED = 3
_ERR_NO_PERMISSION = 4
_ERR_NOT_FOUND = 6
_ERR_DRIVER_NOT_LOADED = 9
_ERR_LIBRARY_NOT_FOUND = 12
_ERR_FUNCTION_NOT_FOUND = 13
_ERR_LIB_RM_VERSION_MISMATCH = 18
_ERR_GPU_NOT_FOUND = 28

_CLOCK_GRAPHICS = 0
_CLOCK_SM = 1
_CLOCK_MEM = 2


class NvmlError(CandidateError):
    """An NVML call failed. ``nvml_code`` is NVML's return code (``None`` if NVML was never reached)."""

    def __init__(self, message: str, nvml_code: int | None = None) -> None:
        super().__init__(message)
        self.nvml_code = nvml_code


class NvmlUnavailable(NvmlError):
    """NVML cannot be used here: the binding, the library or the NVIDIA driver is missing."""


class NvmlNotSupported(NvmlError):
    """The GPU or driver does not support this query or setting."""


class NvmlNoPermission(NvmlError):
    """The process lacks the privilege for this setting (clock changes need root)."""


class NvmlNotFound(NvmlError):
    """The GPU (or the requested object) was not found."""


class NvmlInvalidArgument(NvmlError):
    """NVML rejected an argument (e.g. an unsupported clock or a bad GPU index)."""

    exit_code = 2


_NO_PERMISSION_HINT = (
    "run as root (or with CAP_SYS_ADMIN), or ask the administrator to allow non-root clock "
    "changes (e.g. 'nvidia-smi -acp UNRESTRICTED' where the driver supports it)"
)


def _decode(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _map_error(exc: BaseException, action: str) -> NvmlError:
    """Translate an ``NVMLError`` into the matching `NvmlError` subclass."""
    code = getattr(exc, "value", None)
    try:
        reason = str(exc)
    except Exception:  # pynvml's __str__ may itself call into NVML
        reason = f"NVML error code {code}"
    msg = f"NVML could not {action}: {reason}"
    if code in (_ERR_LIBRARY_NOT_FOUND, _ERR_DRIVER_NOT_LOADED, _ERR_LIB_RM_VERSION_MISMATCH,
                _ERR_UNINITIALIZED):
        return NvmlUnavailable(f"{msg} (is an NVIDIA driver installed and loaded?)", code)
    if code in (_ERR_NOT_SUPPORTED, _ERR_FUNCTION_NOT_FOUND):
        return NvmlNotSupported(f"{msg} (not supported by this GPU or driver)", code)
    if code == _ERR_NO_PERMISSION:
        return NvmlNoPermission(f"{msg}; {_NO_PERMISSION_HINT}", code)
    if code in (_ERR_NOT_FOUND, _ERR_GPU_NOT_FOUND):
        return NvmlNotFound(msg, code)
    if code == _ERR_INVALID_ARGUMENT:
        return NvmlInvalidArgument(msg, code)
    return NvmlError(msg, code)


def _call(nvml: Any, action: str, fn: Callable[..., T], *args: Any) -> T:
    try:
        return fn(*args)
    except nvml.NVMLError as exc:
        raise _map_error(exc, action) from None
