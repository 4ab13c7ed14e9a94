"""``npusched.libm``: the C library's exponential, logarithm and power per element, so that a
table built from them has the same bits on a machine whose NumPy uses its AVX-512 loops and on
one that does not (same configuration and seed, identical results on any machine)."""

from __future__ import annotations

import math
import os
import subprocess
import sys

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st

from npusched import libm

finite = st.floats(min_value=-700.0, max_value=700.0, allow_nan=False)
positive = st.floats(min_value=1e-300, max_value=1e300, allow_nan=False)


@given(st.lists(finite, max_size=40))
def test_exp_is_math_exp_per_element(xs: list[float]) -> None:
    got = libm.exp(np.array(xs))
    assert got.dtype == np.float64 and got.shape == (len(xs),)
    assert got.tolist() == [math.exp(x) for x in xs]


@given(st.lists(positive, max_size=40))
def test_log_is_math_log_per_element(xs: list[float]) -> None:
    assert libm.log(np.array(xs)).tolist() == [math.log(x) for x in xs]


@given(st.lists(st.floats(min_value=0.0, max_value=1e6), max_size=40), st.floats(0.1, 3.0))
def test_power_is_math_pow_per_element(xs: list[float], p: float) -> None:
    assert libm.power(np.array(xs), p).tolist() == [math.pow(x, p) for x in xs]


def test_shapes_and_the_edges_numpy_gives() -> None:
    a = np.arange(6, dtype=np.float64).reshape(2, 3)
    assert libm.exp(a).shape == (2, 3)
    got = libm.log(np.array([0.0, -1.0, 1.0]))
    assert got[0] == -np.inf and math.isnan(got[1]) and got[2] == 0.0
    assert libm.exp(np.array([], dtype=np.float64)).shape == (0,)
    assert float(libm.exp(0.5)) == math.exp(0.5)  # a scalar gives a 0-d array


_AVX512 = ("X86_V4", "AVX512F", "AVX512_SKX", "AVX512_ICL", "AVX512_SPR", "AVX512_KNL")
_PROBE = (
    "import json, numpy as np;"
    "from npusched.bench.workload import synthetic_profiles;"
    "from npusched.policies.temporal.predictor import regression_table;"
    "p = synthetic_profiles(0);"
    "t = regression_table('rnn-mt1');"
    "print(json.dumps([sorted((k, v.latency_s.tobytes().hex()) for k, v in p.items()),"
    " t[1].tobytes().hex() if t else None]))"
)


def test_tables_are_the_same_without_numpys_avx512_loops() -> None:
    """The bench profiles and PREMA's output-length table, built with NumPy's AVX-512 loops
    turned off (``NPY_DISABLE_CPU_FEATURES``), equal those built with them on."""
    from numpy._core._multiarray_umath import __cpu_features__  # type: ignore[attr-defined]

    on = [f for f in _AVX512 if __cpu_features__.get(f)]
    if not on:
        pytest.skip("this CPU has no AVX-512: NumPy runs the C library's functions anyway")
    env = dict(os.environ)
    outs = []
    for disable in ("", " ".join(on)):
        env["NPY_DISABLE_CPU_FEATURES"] = disable
        r = subprocess.run(
            [sys.executable, "-c", _PROBE], env=env, capture_output=True, text=True, check=True
        )
        outs.append(r.stdout)
    assert outs[0] == outs[1]


#: NumPy's functions whose float64 loops NumPy dispatches to AVX-512 code (their last bits then
#: depend on the CPU); ``npusched.libm`` has the ones the project needs.
_DISPATCHED = {
    "exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "power", "float_power",
    "sin", "cos", "tan", "arcsin", "arccos", "arctan", "arctan2", "sinh", "cosh", "tanh",
    "arcsinh", "arccosh", "arctanh", "cbrt", "hypot", "logaddexp", "logaddexp2",
}  # fmt: skip


def test_no_module_calls_numpys_dispatched_functions() -> None:
    """Every ``np.<function>`` call of the package avoids the AVX-512-dispatched functions
    (the reason for ``npusched.libm``); ``x ** y`` on arrays, which the scan cannot see, is
    held by ``test_tables_are_the_same_without_numpys_avx512_loops`` and the golden tests."""
    import ast
    from pathlib import Path

    import npusched

    root = Path(npusched.__file__).parent
    found = []
    for path in sorted(root.rglob("*.py")):
        if path.name == "libm.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if (
                isinstance(node, ast.Attribute)
                and isinstance(node.value, ast.Name)
                and node.value.id in ("np", "numpy")
                and node.attr in _DISPATCHED
            ):
                found.append(f"{path.relative_to(root)}:{node.lineno}: np.{node.attr}")
    assert not found, "use npusched.libm instead: " + ", ".join(found)
