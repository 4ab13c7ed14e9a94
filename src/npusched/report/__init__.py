"""npusched.report."""
