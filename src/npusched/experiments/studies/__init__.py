"""The reproduction studies, one package per paper: ``studies/<paper>/suite.py`` declares the
study's parameters once (a pydantic model: the suite file's schema, validated for the packaged
file, ``--config``, ``--set`` and the command's options) and, for a grid study, its points as a
sweep (``*_sweep``). The loading, the command line and the sweep conversion are shared
(:mod:`npusched.experiments.suite_files`).
"""
