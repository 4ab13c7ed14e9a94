"""HaX-CoNN (PPoPP 2024) Sec. 5 as a study: ``suite`` (its parameters), ``paper`` (its numbers),
``points``, ``figures``, ``report`` and ``run`` (the ``reproduce`` entry and its methodology).

This package imports nothing at load time, so the suite model (``suite``) stays cheap to import.
"""
