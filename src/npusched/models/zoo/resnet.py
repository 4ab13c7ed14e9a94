"""ResNet-18/34/50/101/152 (He et al., CVPR 2016), 224x224 ImageNet input, torchvision layout.

Also exports the residual blocks and the stage builder for backbones (SSD-ResNet34, FCN-ResNet18).
"""

from __future__ import annotations

from npusched.models.builder import NetBuilder, Tensor
from npusched.models.ir import Network
from npusched.models.zoo.common import imagenet_builder, pooled_classifier
from npusched.models.zoo.registry import register

# (block type, blocks per stage)
RESNET_SPECS: dict[int, tuple[str, tuple[int, int, int, int]]] = {
    18: ("basic", (2, 2, 2, 2)),
    34: ("basic", (3, 4, 6, 3)),
    50: ("bottleneck", (3, 4, 6, 3)),
    101: ("bottleneck", (3, 4, 23, 3)),
    152: ("bottleneck", (3, 8, 36, 3)),
}


def basic_block(b: NetBuilder, x: Tensor, width: int, stride: int, prefix: str) -> Tensor:
    """Two 3x3 convolutions with an identity (or 1x1 projection) shortcut."""
    y = b.conv(x, width, 3, stride, name=f"{prefix}_conv1")
    y = b.conv(y, width, 3, 1, act=None, name=f"{prefix}_conv2")
    short = x
    if stride != 1 or x.channels != width:
        short = b.conv(x, width, 1, stride, 0, act=None, name=f"{prefix}_down")
    return b.add(y, short, act="relu", name=f"{prefix}_add")


def bottleneck_block(
    b: NetBuilder,
    x: Tensor,
    width: int,
    stride: int,
    prefix: str,
    groups: int = 1,
    inner: int | None = None,
) -> Tensor:
    """1x1 reduce, 3x3 (stride here, torchvision v1.5), 1x1 expand x4, projection shortcut.

    ResNeXt: the 3x3 is a grouped convolution of ``groups`` groups over ``inner`` channels."""
    out = width * 4
    mid = width if inner is None else inner
    y = b.conv(x, mid, 1, 1, 0, name=f"{prefix}_conv1")
    y = b.conv(y, mid, 3, stride, groups=groups, name=f"{prefix}_conv2")
    y = b.conv(y, out, 1, 1, 0, act=None, name=f"{prefix}_conv3")
    short = x
    if stride != 1 or x.channels != out:
        short = b.conv(x, out, 1, stride, 0, act=None, name=f"{prefix}_down")
    return b.add(y, short, act="relu", name=f"{prefix}_add")


def resnet_stem(b: NetBuilder, x: Tensor) -> Tensor:
    x = b.conv(x, 64, 7, 2, 3, name="conv1")
    return b.pool(x, 3, 2, 1, name="pool1")


def resnet_stages(
    b: NetBuilder,
    x: Tensor,
    depth: int,
    stages: int = 4,
    strides: tuple[int, ...] = (1, 2, 2, 2),
    *,
    groups: int = 1,
    width_per_group: int = 64,
) -> list[Tensor]:
    """Run the first ``stages`` residual stages; returns each stage's output tensor.

    ``groups`` / ``width_per_group`` give ResNeXt's bottlenecks (Xie et al. 2017; torchvision:
    inner width ``int(planes * width_per_group / 64) * groups``)."""
    kind, blocks = RESNET_SPECS[depth]
    outs = []
    for s in range(stages):
        width = 64 * 2**s
        for i in range(blocks[s]):
            stride = strides[s] if i == 0 else 1
            if kind == "basic":
                x = basic_block(b, x, width, stride, f"layer{s + 1}_{i}")
            else:
                inner = width * width_per_group // 64 * groups
                x = bottleneck_block(b, x, width, stride, f"layer{s + 1}_{i}", groups, inner)
        outs.append(x)
    return outs


def build_resnet(depth: int, num_classes: int = 1000) -> Network:
    b = imagenet_builder(f"resnet-{depth}", "He et al. 2016; torchvision")
    x = resnet_stem(b, b.input())
    x = resnet_stages(b, x, depth)[-1]
    return pooled_classifier(b, x, num_classes)


_TV = "torchvision model table (GFLOPS column = GMACs), He et al. 2016"


@register(
    "resnet-18",
    macs=1.81e9,
    params=11.69e6,
    source=_TV,
    aliases=("resnet18",),
)
def resnet18() -> Network:
    return build_resnet(18)


@register("resnet-34", macs=3.66e9, params=21.80e6, source=_TV, aliases=("resnet34",))
def resnet34() -> Network:
    return build_resnet(34)


@register(
    "resnet-50",
    macs=4.09e9,
    params=25.56e6,
    source=_TV,
    aliases=("resnet50",),
)
def resnet50() -> Network:
    return build_resnet(50)


@register(
    "resnet-101",
    macs=7.80e9,
    params=44.55e6,
    source=_TV,
    aliases=("resnet101",),
)
def resnet101() -> Network:
    return build_resnet(101)


@register(
    "resnet-152",
    macs=11.51e9,
    params=60.19e6,
    source=_TV,
    aliases=("resnet152",),
)
def resnet152() -> Network:
    return build_resnet(152)


def build_resnext50(num_classes: int = 1000) -> Network:
    b = imagenet_builder("resnext-50", "Xie et al. 2017, ResNeXt-50 (32x4d); torchvision")
    x = resnet_stem(b, b.input())
    x = resnet_stages(b, x, 50, groups=32, width_per_group=4)[-1]
    return pooled_classifier(b, x, num_classes)


@register(
    "resnext-50",
    macs=4.23e9,
    params=25.03e6,
    source="torchvision model table (resnext50_32x4d: 4.23 GFLOPS = GMACs, 25.03 M params); "
    "Xie et al. 2017 Table 1 (4.2 GFLOPs, 25.0 M)",
    aliases=("resnext50", "resnext50_32x4d"),
)
def resnext50() -> Network:
    return build_resnext50()
