"""DenseNet-121/169/201 (Huang et al., CVPR 2017), 224x224 input, torchvision layout.

Each dense layer is pre-activated: BN + ReLU on the *concatenated* input, a 1x1 bottleneck
convolution to ``bn_size * growth`` channels, BN + ReLU, a 3x3 convolution to ``growth`` channels,
and concatenation onto the input. The BN that follows the 1x1 convolution folds into it (2
parameters per channel); the pre-activation BN + ReLU of the concatenated input has no single
producing convolution to fold into (its input is a concat of every earlier layer's output), so it
is a vector layer ``norm1`` (op ``bn_relu``) carrying its ``2 * C_in`` parameters. Transitions
are BN + ReLU, a 1x1 convolution halving the channels, and a 2x2/2 average pool; the network ends
in BN + ReLU, a global average pool and a 1000-way FC.
"""

from __future__ import annotations

from npusched.models.builder import NetBuilder, Tensor
from npusched.models.ir import Network
from npusched.models.zoo.common import imagenet_builder, pooled_classifier
from npusched.models.zoo.registry import register

# depth: dense layers per block (growth rate 32, bottleneck width 4 x 32, compression 0.5)
DENSENET_SPECS: dict[int, tuple[int, int, int, int]] = {
    121: (6, 12, 24, 16),
    169: (6, 12, 32, 32),
    201: (6, 12, 48, 32),
}


def bn_relu(b: NetBuilder, x: Tensor, name: str) -> Tensor:
    """Stand-alone batch-norm + ReLU (2 parameters per channel: scale and shift)."""
    return b.vector(x, "bn_relu", params=2 * x.channels, name=name)


def dense_layer(b: NetBuilder, x: Tensor, growth: int, bn_size: int, prefix: str) -> Tensor:
    """BN-ReLU-1x1 conv-BN-ReLU-3x3 conv, concatenated onto the input."""
    y = bn_relu(b, x, f"{prefix}_norm1")
    y = b.conv(y, bn_size * growth, 1, 1, 0, name=f"{prefix}_conv1")
    y = b.conv(y, growth, 3, 1, 1, bn=False, act=None, name=f"{prefix}_conv2")
    return b.concat(x, y, name=f"{prefix}_concat")


def transition(b: NetBuilder, x: Tensor, prefix: str) -> Tensor:
    """BN-ReLU, 1x1 conv to half the channels, 2x2/2 average pool."""
    y = bn_relu(b, x, f"{prefix}_norm")
    y = b.conv(y, x.channels // 2, 1, 1, 0, bn=False, act=None, name=f"{prefix}_conv")
    return b.pool(y, 2, 2, mode="avg", name=f"{prefix}_pool")


def build_densenet(
    depth: int, growth: int = 32, bn_size: int = 4, stem: int = 64, num_classes: int = 1000
) -> Network:
    b = imagenet_builder(f"densenet-{depth}", "Huang et al. 2017; torchvision")
    x = b.conv(b.input(), stem, 7, 2, 3, name="conv0")
    x = b.pool(x, 3, 2, 1, name="pool0")
    blocks = DENSENET_SPECS[depth]
    for i, layers in enumerate(blocks, start=1):
        for j in range(1, layers + 1):
            x = dense_layer(b, x, growth, bn_size, f"block{i}_layer{j}")
        if i < len(blocks):
            x = transition(b, x, f"transition{i}")
    x = bn_relu(b, x, "norm5")
    return pooled_classifier(b, x, num_classes)


_TV = "torchvision model table (GFLOPS column = GMACs)"


@register(
    "densenet-121",
    macs=2.83e9,
    params=7.98e6,
    source=_TV + " (densenet121: 2.83 GMACs, 7.98 M params); Huang et al. 2017",
    aliases=("densenet121",),
)
def densenet121() -> Network:
    return build_densenet(121)


@register(
    "densenet-169",
    macs=3.36e9,
    params=14.15e6,
    source=_TV + " (densenet169: 3.36 GMACs, 14.15 M params)",
    aliases=("densenet169",),
)
def densenet169() -> Network:
    return build_densenet(169)


@register(
    "densenet-201",
    macs=4.29e9,
    params=20.01e6,
    source=_TV + " (densenet201: 4.29 GMACs, 20.01 M params)",
    aliases=("densenet201",),
)
def densenet201() -> Network:
    return build_densenet(201)
