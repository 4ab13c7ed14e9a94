"""npusched.workloads."""
