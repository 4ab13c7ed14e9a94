"""Layer-wise DFS vs DVFS (ETRI J. 2022): the study's parameters (:class:`DfsSuite`,
``suite = "dfs"``; one steady-state frame per network and power policy, not a grid)."""
