"""Hardware knowledge stays in hardware (issue 29): the config checks ask the device which SoC
it models (``SocDevice.soc``) instead of knowing that the ``soc`` device takes a ``soc``
parameter defaulting to ``orin``."""

from __future__ import annotations

import tomllib

import pytest

from npusched.errors import ConfigError
from npusched.experiments.config import check_components, parse_config
from npusched.hardware import DEVICES
from npusched.hardware.soc import SocDevice

CFG = """seed = 0
[hardware]
device = "%s"
[workload]
kind = "poisson"
rate_per_s = 50.0
n_requests = 4
models = ["resnet-18", "googlenet"]
[policy]
name = "HaX-CoNN"
params = { soc = "orin" }
[sim]
checkpoint_cost = false
"""


@pytest.fixture
def xavier_device() -> str:
    """A device under another name that models the Xavier SoC."""
    name = "test-xavier-board"
    DEVICES.register(name, lambda **kw: SocDevice(soc="xavier", name=name, **kw))
    yield name  # type: ignore[misc]
    DEVICES.unregister(name)


def test_the_device_says_which_soc_it_is(xavier_device: str) -> None:
    with pytest.raises(ConfigError, match=r"policy\.params\.soc: 'orin', but the device is SoC 'xavier'"):
        parse_config(tomllib.loads(CFG % xavier_device), source="c")  # checks the components


def test_the_default_soc_device_is_orin() -> None:
    check_components(parse_config(tomllib.loads(CFG % "soc"), source="c"), "c")
