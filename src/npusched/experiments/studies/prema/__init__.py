"""PREMA (HPCA 2020): the study's parameters (:class:`PremaSuite`, ``suite = "prema"``) and
its points as a sweep (:func:`prema_sweep`: policy x load x batch size x seed)."""
