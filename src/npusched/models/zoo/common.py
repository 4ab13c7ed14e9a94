"""Pieces several zoo families share: the builder and the head of an ImageNet classifier."""

from __future__ import annotations

from npusched.models.builder import NetBuilder, Tensor
from npusched.models.ir import Network


def imagenet_builder(name: str, source: str, size: int = 224) -> NetBuilder:
    """A builder for the ImageNet classifier ``name``: a ``(3, size, size)`` input image (pixels)
    and ``meta`` naming the task and where the architecture comes from."""
    return NetBuilder(name, (3, size, size), meta={"task": "classification", "source": source})


def pooled_classifier(b: NetBuilder, x: Tensor, num_classes: int = 1000) -> Network:
    """Global average pool (``avgpool``) and the class layer (``fc``); returns the network."""
    x = b.global_pool(x, name="avgpool")
    b.fc(x, num_classes, name="fc")
    return b.build()
