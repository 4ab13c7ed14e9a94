"""The Fluid Batching study (Kouris et al.): ``npusched reproduce fluid``.

* **DSE report** (Sec. III-A Eq. 2, Table I): for each (model, board) of Table I, the design point
  our exhaustive DSE picks for Fluid Batching + Stackable PEs with ``w_b = 1`` (b = 1..8), its DSP
  and BRAM use, the paper's design point, and how our cost model rates the paper's design
  (throughput of Table I's point / throughput of ours, both under our model).
* **Fig. 10** (Sec. IV "NPU Ablation"): throughput (GOP/s) vs batch size 1..8 on the backbone
  without exits, for the uniform strategies SERIAL, FC, R and P (each with its own DSE at batch
  size 8, as the paper does for its baselines), Fluid Batching (DSE with ``w_b = 1``) and Fluid
  Batching + Stackable PEs, against the board's peak.
* An analytical estimate of scheduler invocations per sample, FluidB vs LazyBatching
  (:func:`invocation_estimate`).
* **Serving on the engine** (:mod:`.serving`, methodology there): Fig. 7/8 (processing
  rate, average and p99 latency, violation rate, utilisation vs Poisson arrival rate for SERIAL,
  FC-/R-AdaptB-S/M/L, LazyBatching and FluidB), Fig. 9 (violation rate vs SLO), Table II
  (FluidB vs LazyBatching), measured scheduler invocations and the headline ratios.

Outputs in the output directory: ``dse.csv``, ``fig10.csv``, ``fig10_<model>_<board>.png``,
``fig7_8.csv`` / ``fig9.csv`` / ``table2.csv`` (means over seeds) and ``*_points.csv`` (every
run), ``fig7_8_<model>.png``, ``fig9_<model>.png``, ``summary.json`` and ``report.md``.

Layout: :mod:`.suite` (the parameters, declared once), :mod:`.paper` (the paper's numbers),
:mod:`.points` (the setups and ablations to run), :mod:`.serving` (one serving point on the
engine), :mod:`.figures` (tabulation and plots), :mod:`.report` (comparisons and prose) and
:mod:`.run` (the ``reproduce`` entry, re-exported by :mod:`npusched.experiments.reproduce.fluid`).
"""
