"""npusched.policies.temporal."""
