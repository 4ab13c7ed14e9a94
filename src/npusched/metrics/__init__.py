"""npusched.metrics."""
