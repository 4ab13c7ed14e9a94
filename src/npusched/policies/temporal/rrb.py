"""RRB: round-robin among the DNN models (PREMA Sec. VI-A baseline).

Rotation rule, exactly:

* The rotation order is the order in which the models (network names) were first dispatched in
  the run; a model joins the end of the order on its first request.
* The *pointer* is the model that last received the array.
* When the array must be (re)assigned, the next model after the pointer in the cyclic order that
  has a waiting request wins; within that model, requests are served first-come first-served
  (earliest arrival, then lower id; a preempted request keeps its original arrival so it
  resumes before later ones of its model). If no other model has work, the pointer's own model
  is served again.

``NP-RRB`` applies the rule whenever the array is idle. ``P-RRB`` time-slices: it also applies the
rule when the running request has held the array for at least ``quantum_s`` (checked at every
scheduling period, ``period_s``) and another model has a waiting request, preempting the running
one with ``mechanism``. Arrivals never preempt under RRB. The default quantum equals PREMA's
scheduling period (0.25 ms, Table II), the only time quota the paper defines.

The pointer moves when a request actually gets the array: at once under KILL, and after a
CHECKPOINT when the victim's save is done (the idle rule then picks the model after the
victim's, normally the one the preemption was for). A static ``"kill"`` mechanism is rejected:
each slice would restart its request from scratch, so requests longer than the quantum of two
models would never finish. ``"dynamic-kill"`` is allowed: Algorithm 3 kills only for a
candidate estimated shorter than the victim, so kills cannot cycle.

**Cost per decision** (issue 25 item 3). The rule above is written once, in
:meth:`~.rrb_core.Rotation.pick` (per model a heap of job numbers in first-come order, the
next model after the pointer that has one). A run the engine drives (every ready job was
dispatched through :meth:`~NPRRB.on_dispatch`; the policy counts them and their completions)
holds its live jobs in one :class:`~.rrb_core.Rotation`: every live job but the running one
waits, so a decision costs O(models + log n), not O(n). :meth:`NPRRB.next_job`, for a ready
list the policy did not count, numbers that list in a rotation of its own and asks the same
``pick``. The engine wakes P-RRB only at ticks that can change the decision:
:meth:`PRRB.quiet_before` gives the time before which a tick keeps the running job (quantum not
used up, or no other model waiting), and the engine passes over a tick that would wake
alone before it (issue 25, seventh round; every result but ``events`` is the same bits). The
engine's older period skipping (``quiet_periods`` / ``on_periods``) is not declared: it costs more
per wake than the ticks it saves (issue 25 round 3).

**The declared order** (issue 25; the column loop's from the fourteenth round, the general
loop's since the twenty-sixth, the one loop's since the twenty-eighth). Both classes declare the
ready order ``"round-robin"`` (:func:`~npusched.policies.contract.declared_order`): the engine
then keeps the rotation itself (:meth:`NPRRB.rotation`, a :class:`~.rrb_core.Rotation` on
dispatch indices), the pointer and the slice, decides without a view or a call of ``select``,
and passes over the ticks :meth:`PRRB.quiet_before` calls quiet
(:func:`~.rrb_core.quiet_threshold`), with the same result to the last bit as the hooks and
``select``, ``events`` included. The declaration holds while a subclass keeps every method in
``ready_order_methods``; one that overrides any of them is decided by its hooks and
``select``.
"""

from __future__ import annotations

from npusched.base import Component
from npusched.errors import ParameterError
from npusched.policies.base import TemporalPolicyBase
from npusched.policies.temporal.mechanism import MECHANISM_MODES, check_mode, check_seconds
from npusched.policies.temporal.prema import PERIOD_S
from npusched.policies.temporal.rrb_core import NPRRBCore, PRRBCore


class NPRRB(NPRRBCore, TemporalPolicyBase, Component):
    """Non-preemptive round-robin among models (the hooks: :class:`NPRRBCore`, compiled)."""

    name = "NP-RRB"
    preemptive = False
    ready_order = "round-robin"
    #: The methods the declared order stands for: the rule, its state and the ticks (a
    #: subclass that defines ``quiet_before``, ``quiet_periods`` or ``on_periods`` changes the
    #: engine's ticks, so those count too).
    ready_order_methods = (
        "preemptive",
        "select",
        "next_job",
        "reset",
        "on_dispatch",
        "on_complete",
        "on_period",
        "quiet_before",
        "quiet_periods",
        "on_periods",
        "rotation",
        "_counted",
        "_next_counted",
        "_renumber",
        "_join",
        "_grant",
    )

    def __init__(self) -> None:
        pass


class PRRB(PRRBCore, NPRRB):
    """Preemptive (time-sliced) round-robin among models (the hooks: :class:`PRRBCore`).

    Args:
        mechanism: ``"checkpoint"``, ``"kill"``, ``"dynamic"`` (Algorithm 3) or
            ``"dynamic-kill"``.
        quantum_s: seconds a request may hold the array before another model's request
            displaces it.
        period_s: seconds between periodic wake-ups (the quantum is checked at them).
    """

    name = "P-RRB"
    preemptive = True
    ready_order = "round-robin"

    def __init__(
        self, mechanism: str = "checkpoint", quantum_s: float = PERIOD_S, period_s: float = PERIOD_S
    ) -> None:
        self.mechanism = mechanism
        self.quantum_s = quantum_s
        self.period_s = period_s

    def validate(self) -> None:
        check_seconds(self.name, "quantum_s", self.quantum_s)
        check_seconds(self.name, "period_s", self.period_s)
        if check_mode(self.mechanism, self.name) == "kill":
            # Every slice would restart its request from scratch: requests longer than the
            # quantum of two models would take turns being killed forever.
            raise ParameterError(
                self.name,
                "mechanism",
                self.mechanism,
                ", ".join(m for m in MECHANISM_MODES if m != "kill")
                + " (kill never finishes requests longer than quantum_s: each slice restarts them)",
            )
