"""Parameter handling shared by policies and cost models (scikit-learn ``BaseEstimator`` style).

Constructor keywords are stored unchanged as attributes of the same name; state derived during a
run ends in ``_``. ``clone(obj).set_params(**p)`` gives a fresh sweep point.
"""

from __future__ import annotations

import copy
import functools
import inspect
from typing import Any, Self


class Component:
    """Mixin giving ``get_params``/``set_params``/``clone`` from the ``__init__`` signature."""

    @classmethod
    @functools.cache  # per class: ``inspect.signature`` is slow and device cache keys need it
    def _param_names(cls) -> tuple[str, ...]:
        sig = inspect.signature(cls.__init__)
        return tuple(
            p.name
            for p in sig.parameters.values()
            if p.name != "self" and p.kind not in (p.VAR_KEYWORD, p.VAR_POSITIONAL)
        )

    def get_params(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self._param_names()}

    def set_params(self, **params: Any) -> Self:
        valid = set(self._param_names())
        for key, value in params.items():
            if key not in valid:
                from npusched.errors import ConfigError

                raise ConfigError(
                    f"{type(self).__name__} has no parameter {key!r}; allowed: {', '.join(sorted(valid))}"
                )
            setattr(self, key, value)
        return self

    def __repr__(self) -> str:
        args = ", ".join(f"{k}={v!r}" for k, v in self.get_params().items())
        return f"{type(self).__name__}({args})"


def clone(obj: Component) -> Any:
    """A new, unfitted object with the same constructor parameters (deep-copied)."""
    return type(obj)(**copy.deepcopy(obj.get_params()))
