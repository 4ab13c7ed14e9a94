"""Placeholder: networks of this family are added here."""
