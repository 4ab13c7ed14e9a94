"""Fluid Batching (Kouris et al.): the study's parameters (:class:`FluidSuite`,
``suite = "fluid"``) and its serving grid as a sweep (:func:`fluid_sweep`)."""
