"""A device says which machine it makes (issue 29): hardware.machines, used by machine_for."""

from __future__ import annotations

from npusched.experiments.assemble import machine_for
from npusched.experiments.config import parse_config
from npusched.hardware import get_device
from npusched.hardware.machines import ResourceLayout, machine_layout


def test_builtin_devices_say_their_machine() -> None:
    (arr,) = machine_layout(get_device("planaria"))
    assert (arr.name, arr.kind, arr.capacity, arr.units_axis) == (
        "array",
        "fission-array",
        16,
        "subarrays",
    )
    soc = machine_layout(get_device("soc", soc="xavier"))
    assert [r.name for r in soc] == list(get_device("soc", soc="xavier").spec.accelerators)
    assert all(r.capacity == 1 and r.fixed == {"accelerator": r.name} for r in soc)
    assert all(r.idle_power_w == 0.0 for r in soc)
    assert machine_layout(get_device("prema-npu")) == (ResourceLayout("npu"),)
    assert machine_layout(get_device("ab9")) == (ResourceLayout("npu"),)


def test_machine_for_builds_the_device_machine() -> None:
    cfg = parse_config(
        {
            "hardware": {"device": "ab9"},
            "workload": {
                "kind": "poisson",
                "models": ["resnet-18"],
                "n_requests": 4,
                "rate_per_s": 10.0,
            },
            "policy": {"name": "NP-FCFS"},
        }
    )
    dev = get_device("ab9")
    (npu,) = machine_for(cfg, dev).resources
    assert npu.name == "npu" and npu.idle_power_w == dev.idle_power_w > 0


class _TwoNpus:
    name = "two"

    def machine_layout(self) -> tuple[ResourceLayout, ...]:
        return (ResourceLayout("a"), ResourceLayout("b", idle_power_w=1.5))


def test_a_user_device_can_say_its_own_machine() -> None:
    assert [r.name for r in machine_layout(_TwoNpus())] == ["a", "b"]
