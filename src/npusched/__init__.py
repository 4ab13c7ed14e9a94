"""npusched: simulate and schedule multi-tenant DNN inference on NPUs."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("npusched")
except PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "0.1.0"

__all__ = ["__version__"]
