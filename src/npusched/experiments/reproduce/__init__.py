"""``npusched reproduce <paper>``: suites that re-run a paper's evaluation and compare.

* :mod:`npusched.experiments.studies.prema` - PREMA (HPCA 2020), Sec. IV-D and VI.
* :mod:`npusched.experiments.reproduce.planaria` - Planaria (MICRO 2020), Sec. VI.
* :mod:`npusched.experiments.reproduce.dfs` - layer-wise DFS vs DVFS (ETRI J. 2022), Sec. 4.
* :mod:`npusched.experiments.reproduce.fluid` - Fluid Batching (Kouris et al.): DSE, Fig. 7-10.
* :mod:`npusched.experiments.studies.haxconn` - HaX-CoNN (PPoPP'24), Sec. 5.

Each suite's parameters are a packaged experiment file, ``npusched/data/experiments/suites/
<suite>.toml`` (:mod:`npusched.experiments.suite_files`); ``npusched reproduce NAME`` runs it
and ``--config FILE`` an edited copy. The modules' keyword defaults (their Python API) equal the
packaged files (a test holds them together).
"""
