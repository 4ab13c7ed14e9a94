"""Scheduling policies (decision logic only), one sub-package per family.

Importing this package (or any module in it) registers the built-in policies of every kind in
the one registry (:mod:`npusched.policies.catalog`, :mod:`npusched.policies.registry`).
"""

from npusched.policies import catalog  # noqa: F401  (fills the registry)
from npusched.policies.base import POLICIES, TemporalPolicy, TemporalPolicyBase

__all__ = ["POLICIES", "TemporalPolicy", "TemporalPolicyBase"]
