"""Reproduce Planaria (MICRO 2020) Sec. VI: ``npusched reproduce planaria``.

Benchmarks: by default the authors' own definitions (``planaria/<name>``,
:mod:`npusched.models.zoo.planaria`, from he-actlab/planaria.code; EfficientNet-B0, absent there,
is the zoo's); ``--networks full-size`` uses the zoo's full-size networks. Both systems run every
depthwise layer as the paper describes it (:func:`paper_network`, ``"pipelined"``).

* **Isolated (Fig. 17).** Each of the nine DNNs of Table I runs alone at batch 1 on the whole
  fission array (16 subarrays, every layer on its fastest fission configuration,
  :class:`~npusched.hardware.fission.FissionArray`) and on PREMA's monolithic 128x128 array with
  the same PEs, buffers, clock and bandwidth (``prema-npu``,
  :class:`~npusched.hardware.systolic.SystolicArray`), both costed with the compute model of
  the authors' simulator (a tile costs its streamed rows, no per-tile fill and drain:
  :func:`~.points.monolithic_array`, :func:`~.points.fission_device`,
  :data:`~.points.FILL_DRAIN`). Speed-up = monolithic latency / fission
  latency; energy ratio = monolithic energy / fission energy, both charged with the same
  :meth:`EnergyModel.planaria() <npusched.hardware.energy.EnergyModel.planaria>`: dynamic plus
  static energy, the paper's constants (0.64 pJ/bit/hop, the 20.6% fission power overhead)
  else the artifact's (PE and DRAM energy, CACTI-P SRAM leakage; idle subarrays gated). The paper's "3.5x and 6.3x across the nine" is
  compared with the geometric mean (the paper does not say which mean; the arithmetic one is in
  the headline too). :func:`layer_speedups` checks every layer against the paper's "up to 16x".
* **Multi-tenant (Fig. 12-16).** Throughput at SLA (Fig. 12, :func:`throughput_qps`: the highest
  rate at which a workload instance meets the MLPerf SLA, no floor, at most the system's
  sustainable rate :func:`~.points.stable_qps`, median and spread over
  ``throughput_instances`` instances); SLA satisfaction rate (compared per request: the
  fraction of requests within QoS; per instance kept too), fairness and energy at one fixed
  rate per workload (Fig. 13-15, :func:`fixed_rate_point` over ``instances`` instances); the
  nodes Planaria needs for 99% SLA at one rate for every workload (Fig. 16,
  :func:`nodes_for_sla`). :func:`planaria_simulate` runs
  :class:`~npusched.policies.spatial.planaria.PlanariaPolicy` on the 16-subarray machine,
  :func:`prema_simulate` runs P-PREMA on ``prema-npu``. Requests arrive as the authors'
  generator draws them (Poisson-distributed whole-millisecond gaps, ``setup.arrivals``). The
  paper states none of the study's parameters (requests per instance, instances, rates); ours
  are :class:`MultiTenantSetup`. ``summary.json``'s ``fidelity`` counts the values in band
  with and without the values that have no ratio but match the paper's words
  (:func:`~.figures.fidelity`).

``summary.json`` holds ``comparisons``: one record per paper value (Fig. 12-17, the abstract),
with ``ratio``, ``direction``, ``spread`` and the measured ``cause`` where a value differs
(:data:`CAUSES`); ``report.md`` shows the same table. Outputs: ``fig17.csv``,
``fig17_layers.csv``, ``fig17_speedup.png``, ``fig17_energy.png``, ``summary.json``, ``report.md``.

Modules: :mod:`.suite` (the parameters: :class:`~.suite.MultiTenantSetup`, the suite file's
:class:`~.suite.PlanariaSuite` and its sweep), :mod:`.paper` (the paper's numbers),
:mod:`.points` (the points and both systems' simulators), :mod:`.figures` (``comparisons``
and ``report.md``), :mod:`.report` (the measured causes, :data:`~.report.CAUSES`) and
:mod:`.run` (:func:`~.run.reproduce`). :mod:`npusched.experiments.reproduce.planaria`
re-exports the public names.
"""
