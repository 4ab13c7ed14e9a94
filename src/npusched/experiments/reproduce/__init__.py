"""``npusched reproduce <paper>``: suites that re-run a paper's evaluation and compare.

* :mod:`npusched.experiments.reproduce.prema` - PREMA (HPCA 2020), Sec. IV-D and VI.
* :mod:`npusched.experiments.reproduce.dfs` - layer-wise DFS vs DVFS (ETRI J. 2022), Sec. 4.
* :mod:`npusched.experiments.reproduce.fluid` - Fluid Batching (Kouris et al.): DSE and Fig. 10.
"""
