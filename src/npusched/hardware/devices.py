"""The device registry, :data:`DEVICES` (re-exported by :mod:`npusched.hardware`). The
built-in device modules register into it on import; it lives in its own module so that they
import it without importing the package that imports them (no import circle)."""

from __future__ import annotations

from npusched.hardware.base import Device
from npusched.registry import Registry

#: registered device factories by name (``prema-npu``, ``planaria``, ...; plugins add theirs)
DEVICES: Registry[Device] = Registry("device", entry_point_group="npusched.devices")
