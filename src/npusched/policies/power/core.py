"""The compiled core of the power policies (:mod:`npusched.policies.power.policy`).

:class:`PowerCore` holds what the engine asks of a DFS or DVFS policy at every job start: the
switch cost from the level the job's units were left at (:meth:`PowerCore.switch_cost`) and
the parameter check behind it (:meth:`PowerCore._validated`, which runs the check again only
when a value changed). This module is listed in ``npusched.native.COMPILED_MODULES`` and runs as
mypyc native code where the package is built compiled. ``policy.py`` stays interpreted (its
``@runtime_checkable`` protocol cannot be compiled): its ``PowerPolicyBase`` subclasses the core,
and ``DFS`` / ``DVFS`` keep their constructors' Python signatures, which ``Component``
(parameters, ``clone``) and the config checks read with ``inspect.signature`` (a native class's
``__init__`` has none).

The parameters are declared ``Any``: a native attribute annotated ``float`` would convert or
refuse what the constructor is given before ``_check_values`` names the bad value.
"""

from __future__ import annotations

from typing import Any

from mypy_extensions import mypyc_attr


@mypyc_attr(allow_interpreted_subclasses=True)
class PowerCore:
    """A power policy's parameters and the per-start switch cost (the rule: ``policy.py``)."""

    cap_w: Any
    freq_switch_s: Any
    volt_switch_s: Any
    idle_power_w: Any
    #: ``(values, checked, key)`` of the last check that passed (``None``: none yet): the four
    #: parameter objects, ``_check_values``' result, and ``(type, value)`` of each.
    _validated_for: Any = None

    def _check_values(self) -> tuple[float, float, float]:
        """``(cap_w, freq_switch_s, volt_switch_s)`` checked (the public class's)."""
        raise NotImplementedError

    def _validated(self) -> tuple[float, float, float]:
        """:func:`validated` (``cap_w``, ``freq_switch_s``, ``volt_switch_s`` checked)."""
        return validated(self)

    def switch_cost(self, prev: Any, nxt: Any) -> float:
        """Seconds to go from ``prev = (f, V)`` to ``nxt = (f, V)`` (``None``: nothing ran
        before, free): ``volt_switch_s`` if the voltage changes, ``freq_switch_s`` if only the
        clock does, else 0. The engine charges it before a step, whichever job ran before."""
        _, fsw, vsw = validated(self)
        if prev is None:
            return 0.0
        if prev[1] != nxt[1]:
            return vsw
        return fsw if prev[0] != nxt[0] else 0.0


def validated(core: PowerCore) -> tuple[float, float, float]:
    """``(cap_w, freq_switch_s, volt_switch_s)`` of ``core`` checked; the engine asks at every
    start (:meth:`PowerCore.switch_cost`), so the check runs again only when a value (or its
    type) changed since the last one passed. A module function: compiled, a method called on an
    instance of an interpreted subclass goes through a Python-level look-up and call."""
    vals = (core.cap_w, core.freq_switch_s, core.volt_switch_s, core.idle_power_w)
    hit = core._validated_for
    if hit is not None:
        # The same four objects as at the last check (attributes unchanged: one identity
        # test each, no tuple of types per call)
        last = hit[0]
        if vals[0] is last[0] and vals[1] is last[1] and vals[2] is last[2] and vals[3] is last[3]:
            out: tuple[float, float, float] = hit[1]
            return out
        key = tuple([(type(v), v) for v in vals])
        if hit[2] == key:  # equal values of the same types: no new check
            core._validated_for = (vals, hit[1], key)
            out = hit[1]
            return out
    out = core._check_values()
    core._validated_for = (vals, out, tuple([(type(v), v) for v in vals]))
    return out
