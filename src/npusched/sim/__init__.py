"""npusched.sim."""
