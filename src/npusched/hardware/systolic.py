"""Placeholder: SystolicArray lands here."""
