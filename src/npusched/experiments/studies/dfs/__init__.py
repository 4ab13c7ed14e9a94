"""The layer-wise DFS vs DVFS study under 33 W (ETRI Journal 2022, Sec. 4): ``npusched reproduce dfs``.

Methodology (Sec. 4.1, with the choices the paper leaves open stated here):

* **Device**: the AB9 STC of :mod:`npusched.hardware.power` (128 x 128 PEs, two LPDDR4 channels,
  Table 5's 20 clock levels, the operation-aware power model of Eq. 1-4 with Table 3's W_op).
* **Networks**: YOLOv2/3/4, VGG-16, ResNet-18/34/50 and SqueezeNet (v1.0) from the zoo, batch 1.
* **Steps** (the "layers" a policy decides on): every GEMM layer, with the vector layers after it
  (pooling, residual add, route/concat, upsample) fused into it
  (:func:`npusched.hardware.power.fused_steps`); the step runs at the clock its most
  power-hungry layer allows. This reproduces the paper's layer counts (YOLOv3: 1.33 ms per layer
  in a ~97 ms execution is ~73 layers, its 75 convolutions; VGG-16: 16). ``fuse=False``
  (``--no-fuse``) decides per zoo operator instead.
* **Calibration** (one scalar for all networks): the STC efficiency (fraction of STC cycles
  doing Table-1 work) is set so that the mean step time under DFS over the eight networks'
  steps equals the paper's 1.99 ms (Sec. 3.2: "the average execution time of a layer is just
  1.99 ms for eight different NN applications"). The measured frame times of Table 6 are far
  above the peak-rate ones (VGG-16's 15.5 GMAC in ~90 ms is ~1% of 16 TMAC/s), and what decides
  DFS vs DVFS is how the 2.15 ms voltage switch compares with a layer's time, so the time scale
  must be the chip's. The efficiency scales time only; the power of each layer (and so every
  frequency choice) comes from the model unchanged.
* **Policies** (:mod:`npusched.policies.power`): DFS (1.00 V, highest clock within 33 W before each
  layer, 20 us per change) and DVFS (Table 5's (f, V) pairs, 2.15 ms per voltage change, 20 us
  per clock-only change). Frames run back to back, so the switch back from the last layer to the
  first one is charged every frame.
* **Frame run** (:func:`engine_frame`, the default): each frame runs through the simulation
  engine, the code path of ``npusched run`` with a ``power`` table: a
  :class:`~npusched.sim.engine.Simulator` over the network's AB9 profile (all 20 clock levels,
  compiled at the policy's voltages) with the power policy as its ``power`` hook and the cap
  as ``power_cap_w``, on one NPU drawing the AB9's idle power. With fused steps the policy
  decides once per fused step (:class:`~npusched.policies.power.GroupedSteps`). The engine
  charges the switches inside a frame (folded into the step after them) but none between two
  jobs (each job's first step starts free), so the runner adds the switch from the last step
  back to the first (the policy's ``switch_cost``, at idle power) to make frames back to back.
  :func:`run_frame` executes the pure per-step schedule in order instead (``runner=
  schedule_frame``); both give the same numbers (``tests/test_reproduce_dfs.py``), except the
  5 ms peak, see :func:`engine_frame`. The sensitivity grid uses :func:`run_frame` (it only
  compares headlines).
* **Metrics** per network and policy: FPS = 1 / frame time; peak power = the highest step power,
  and ``peak_power_5ms_w`` the highest 5 ms average (the paper reads the PMIC every 5 ms, which
  can only lower a peak); average power = frame energy / frame time; energy per frame; voltage switches per
  frame (Table 6). "On average" figures are arithmetic means over the eight networks of the
  per-network ratios (DFS / DVFS - 1), as the paper's text reads.

Outputs in the output directory: ``summary.json`` (per network and policy: ``fps``,
``peak_power_w``, ``avg_power_w``, ``energy_per_frame_j``, ``voltage_switches_per_frame``, and
more), ``results.csv``, ``trace_<network>.csv`` (per-layer clock, voltage, power and time under
both policies), ``fig4_frequency.png``, ``fig5_fps.png``, ``fig6_power.png``,
``fig6_energy.png``, ``table6.csv``, ``power_table_<network>.csv`` (per-layer latency, power and
energy at every level and both voltages), ``sensitivity.csv`` (full runs: the headline for other
idle / dynamic power scales) and ``report.md``.

Layout: :mod:`.suite` (the parameters, declared once), :mod:`.paper` (the paper's numbers),
:mod:`.points` (the frames to run), :mod:`.fit` (the least-squares fit of the power and time
scales), :mod:`.figures`, :mod:`.report` (comparisons and prose) and :mod:`.run` (the
``reproduce`` entry, re-exported by :mod:`npusched.experiments.reproduce.dfs`).
"""
