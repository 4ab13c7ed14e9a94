"""npusched.policies."""
