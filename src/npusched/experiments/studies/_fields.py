"""Field types and checks every study's parameter model shares."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field

from npusched.experiments.config import _field_check, _not_bool

__all__ = ["Names", "NonNegInt", "_Strict", "_device", "_unique"]

NonNegInt = Annotated[int, BeforeValidator(_not_bool), Field(ge=0, strict=True)]
Names = Annotated[list[str], Field(min_length=1)]


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


def _unique(values: Sequence[Any], what: str) -> None:
    dup = next((v for v in values if list(values).count(v) > 1), None)
    if dup is not None:
        raise ValueError(f"{what} {dup!r} appears twice")


def _device(name: str) -> str:
    from npusched.hardware import DEVICES

    _field_check(DEVICES.get, name)
    return name
