"""Scheduling policies (decision logic only), one sub-package per family.

Importing this package registers the built-in policies in :data:`POLICIES`.
"""

from npusched.policies import temporal  # noqa: F401  (registers the built-ins)
from npusched.policies.base import POLICIES, TemporalPolicy, TemporalPolicyBase

__all__ = ["POLICIES", "TemporalPolicy", "TemporalPolicyBase"]
