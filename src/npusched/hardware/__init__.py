"""Hardware cost models and compiled profiles."""

from npusched.hardware.base import Device, LayerCosts
from npusched.hardware.devices import DEVICES
from npusched.hardware.profile import ExecPlan, Profile, compile_profile


def get_device(name: str, /, **params: object) -> Device:
    """A device by registered name, e.g. ``"prema-npu"`` (PREMA Table I), with overrides."""
    return DEVICES.create(name, **params)


# Built-in devices register on import.
from npusched.hardware import (  # noqa: E402,F401
    clocked,
    fission,
    gemm_npu,
    power,
    soc,
    systolic,
)


def _cpu_ort(calibration: str = "") -> Device:
    """``cpu-ort``: per-group latencies measured with ONNX Runtime on this machine (a
    calibration file from ``npusched validate``; see :mod:`npusched.realexec.calibrate`)."""
    from npusched.realexec.calibrate import CpuOrtDevice

    return CpuOrtDevice(calibration)


DEVICES.register("cpu-ort", _cpu_ort)

__all__ = [
    "DEVICES",
    "Device",
    "ExecPlan",
    "LayerCosts",
    "Profile",
    "compile_profile",
    "get_device",
]
