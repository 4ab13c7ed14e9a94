"""Your own network and your own scheduling policy, against P-PREMA, in a few lines.

Run: ``python examples/custom_policy.py``. A small CNN built with ``NetBuilder`` (no zoo
registration needed) shares PREMA's NPU with ResNet-50 under a Poisson stream whose requests
carry an SLO of 4x their isolated latency; a preemptive earliest-deadline-first policy is run
beside P-PREMA on the same requests, and checked by the conformance suite first.
"""

from __future__ import annotations

from npusched import (
    POLICIES,
    NetBuilder,
    Network,
    Simulator,
    compile_profile,
    get_device,
    get_network,
    poisson_workload,
)
from npusched.policies import TemporalPolicyBase
from npusched.policies.contract import KEEP, Decision, SchedulerView
from npusched.testing import check_policy


def tinynet() -> Network:
    """Four convolutions and a classifier on a 64x64 image."""
    b = NetBuilder("tinynet", (3, 64, 64))  # (channels, height, width)
    x = b.input()
    for ch in (32, 64, 128, 128):
        x = b.pool(b.conv(x, ch, 3), 2)  # 3x3 convolution (+ batch-norm, ReLU), 2x2 max-pool
    b.fc(b.global_pool(x), 10)
    return b.build()


class EDF(TemporalPolicyBase):
    """Preemptive earliest deadline first: the deadline is arrival + SLO (4 x the isolated
    latency when a request has none); ties by arrival."""

    name = "EDF"
    preemptive = True

    @staticmethod
    def deadline(job: object) -> tuple[float, float]:
        r = job.request  # type: ignore[attr-defined]
        slo = r.slo_s if r.slo_s is not None else 4.0 * job.isolated_s  # type: ignore[attr-defined]
        return (r.arrival_s + slo, r.arrival_s)

    def select(self, view: SchedulerView) -> Decision:
        if not view.ready:
            return KEEP
        best = min(view.ready, key=self.deadline)
        if view.running is not None and self.deadline(view.running) <= self.deadline(best):
            return KEEP
        return Decision(best)


def main(n_requests: int = 300, seed: int = 0) -> dict[str, dict[str, float]]:
    """Run EDF and P-PREMA on the same workload; returns each one's summary."""
    device = get_device("prema-npu")
    nets = [tinynet(), get_network("resnet-50")]
    profiles = {n.name: compile_profile(n, device, (1,)) for n in nets}
    requests = poisson_workload(
        250.0,
        models=nets,
        n_requests=n_requests,
        qos=4.0,
        profiles=profiles,
        random_state=seed,
    )
    check_policy(EDF())  # the conformance suite every built-in policy passes
    out = {}
    for policy in (EDF(), POLICIES.create("P-PREMA")):
        res = Simulator(profiles, policy).run(requests)
        out[policy.name] = res.summary()
    for name, s in out.items():
        print(
            f"{name:8s} SLO met {s['slo_attainment']:.3f}  ANTT {s['antt']:.2f}  "
            f"p99 {s['p99_latency_s'] * 1e3:.1f} ms  preemptions {s['preemptions']:.0f}"
        )
    return out


if __name__ == "__main__":
    main()
