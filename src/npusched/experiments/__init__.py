"""npusched.experiments."""
