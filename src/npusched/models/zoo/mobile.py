"""Mobile CNNs: MobileNet-v1 (Howard et al. 2017), MobileNet-v2 (Sandler et al. 2018),
MobileNet-v3-Large (Howard et al. 2019) and EfficientNet-B0..B4 (Tan & Le, ICML 2019).

Both use batch-norm after every convolution, folded into it (2 parameters per channel).

* MobileNet-v1 1.0-224: a 3x3/2 stem, 13 depthwise-separable blocks (3x3 depthwise, then 1x1
  pointwise, each with BN + ReLU), global average pool, a 1000-way FC. Depthwise layers have
  ``groups = C``, ``K = 9``, ``N = 1``.
* EfficientNet-B0, 224x224, torchvision layout: MBConv blocks (1x1 expansion, kxk depthwise,
  squeeze-excitation, 1x1 linear projection, residual when the shape allows), swish (SiLU)
  activations. The squeeze-excitation is a global average pool, a 1x1 reduction to a quarter of
  the *block input* channels (swish), a 1x1 expansion back (sigmoid) - both with bias, emitted as
  FC layers over the pooled vector - and a channel-wise multiply.
"""

from __future__ import annotations

import math

from npusched.models.builder import NetBuilder, Padding, Tensor
from npusched.models.ir import Network
from npusched.models.zoo.common import imagenet_builder, pooled_classifier
from npusched.models.zoo.registry import register

# --- MobileNet-v1 ------------------------------------------------------------------------------
# Depthwise-separable blocks of Howard et al. 2017, Table 1: (pointwise out channels, dw stride).
MOBILENET_V1_BLOCKS: tuple[tuple[int, int], ...] = (
    (64, 1),
    (128, 2),
    (128, 1),
    (256, 2),
    (256, 1),
    (512, 2),
    *((512, 1),) * 5,
    (1024, 2),
    (1024, 1),
)


def mobilenet_v1_body(
    b: NetBuilder, x: Tensor, *, padding: Padding = 1, act: str = "relu"
) -> list[Tensor]:
    """Stem and the 13 depthwise-separable blocks; returns the stem's and each block's output.

    ``padding`` is that of the 3x3 layers (``1`` as in PyTorch, ``"same"`` as in TensorFlow) and
    ``act`` the activation after every convolution. Layer names: ``conv0``, then
    ``conv{i}_dw`` / ``conv{i}_pw`` for block ``i`` = 1..13 (as in TensorFlow's
    ``Conv2d_{i}_depthwise`` / ``_pointwise``), so detection heads can tap e.g. ``conv11_pw``.
    """
    x = b.conv(x, 32, 3, 2, padding, act=act, name="conv0")
    outs = [x]
    for i, (ch, stride) in enumerate(MOBILENET_V1_BLOCKS, start=1):
        x = b.dwconv(x, 3, stride, padding, act=act, name=f"conv{i}_dw")
        x = b.conv(x, ch, 1, 1, 0, act=act, name=f"conv{i}_pw")
        outs.append(x)
    return outs


def build_mobilenet_v1(num_classes: int = 1000) -> Network:
    b = imagenet_builder("mobilenet-v1", "Howard et al. 2017, 1.0-224")
    x = mobilenet_v1_body(b, b.input())[-1]
    return pooled_classifier(b, x, num_classes)


@register(
    "mobilenet-v1",
    macs=569e6,
    params=4.2e6,
    source="Howard et al. 2017, Table 8 (1.0 MobileNet-224: 569 M mult-adds, 4.2 M params)",
    aliases=("mobilenet", "mobilenet_v1", "cnn-mn"),
)
def mobilenet_v1() -> Network:
    return build_mobilenet_v1()


# --- EfficientNet-B0 ---------------------------------------------------------------------------
# Tan & Le 2019, Table 1: (expand ratio, kernel, stride, out channels, repeats) per stage.
EFFICIENTNET_B0_STAGES: tuple[tuple[int, int, int, int, int], ...] = (
    (1, 3, 1, 16, 1),
    (6, 3, 2, 24, 2),
    (6, 5, 2, 40, 2),
    (6, 3, 2, 80, 3),
    (6, 5, 1, 112, 3),
    (6, 5, 2, 192, 4),
    (6, 3, 1, 320, 1),
)


def squeeze_excite(b: NetBuilder, x: Tensor, squeeze: int, prefix: str) -> Tensor:
    """Global pool, FC reduce (swish), FC expand (sigmoid), channel-wise scale of ``x``."""
    s = b.global_pool(x, name=f"{prefix}_se_pool")
    s = b.fc(s, squeeze, act="swish", name=f"{prefix}_se_reduce")
    s = b.fc(s, x.channels, act="sigmoid", name=f"{prefix}_se_expand")
    return b.mul(x, s, name=f"{prefix}_se_scale")


def mbconv(
    b: NetBuilder,
    x: Tensor,
    expand: int,
    kernel: int,
    stride: int,
    out_ch: int,
    prefix: str,
    se_ratio: float = 0.25,
) -> Tensor:
    """Mobile inverted bottleneck with squeeze-excitation (EfficientNet's MBConv)."""
    in_ch = x.channels
    y = x
    if expand != 1:
        y = b.conv(y, in_ch * expand, 1, 1, 0, act="swish", name=f"{prefix}_expand")
    y = b.dwconv(y, kernel, stride, act="swish", name=f"{prefix}_dw")
    y = squeeze_excite(b, y, max(1, int(in_ch * se_ratio)), prefix)
    y = b.conv(y, out_ch, 1, 1, 0, act=None, name=f"{prefix}_project")
    if stride == 1 and in_ch == out_ch:
        y = b.add(y, x, name=f"{prefix}_add")
    return y


def build_efficientnet_b0(num_classes: int = 1000) -> Network:
    b = imagenet_builder("efficientnet-b0", "Tan & Le 2019; torchvision")
    x = b.conv(b.input(), 32, 3, 2, 1, act="swish", name="stem")
    for s, (expand, kernel, stride, out_ch, repeats) in enumerate(EFFICIENTNET_B0_STAGES, 1):
        for i in range(repeats):
            x = mbconv(b, x, expand, kernel, stride if i == 0 else 1, out_ch, f"block{s}_{i}")
    x = b.conv(x, 1280, 1, 1, 0, act="swish", name="head")
    return pooled_classifier(b, x, num_classes)


@register(
    "efficientnet-b0",
    macs=0.39e9,
    params=5.29e6,
    source="torchvision model table (efficientnet_b0: 0.39 GFLOPS = GMACs, 5.29 M params); "
    "Tan & Le 2019, Table 2",
    aliases=("efficientnet_b0",),
)
def efficientnet_b0() -> Network:
    return build_efficientnet_b0()


# --- EfficientNet-B1..B4 -----------------------------------------------------------------------
def make_divisible(v: float, divisor: int = 8) -> int:
    """Round ``v`` channels to a multiple of ``divisor`` (at least ``divisor``), never more than
    10% down: the TensorFlow / torchvision ``_make_divisible`` rule."""
    new = max(divisor, int(v + divisor / 2) // divisor * divisor)
    return new + divisor if new < 0.9 * v else new


#: torchvision's (width multiplier, depth multiplier, resolution) per variant (Tan & Le 2019,
#: Sec. 3.3 compound scaling; torchvision uses 288 px for B2 where the paper uses 260).
EFFICIENTNET_SCALING: dict[str, tuple[float, float, int]] = {
    "b1": (1.0, 1.1, 240),
    "b2": (1.1, 1.2, 288),
    "b3": (1.2, 1.4, 300),
    "b4": (1.4, 1.8, 380),
}


def build_efficientnet(variant: str, num_classes: int = 1000) -> Network:
    """EfficientNet-B1..B4 (torchvision): B0's stages with channels ``make_divisible(c * w)``,
    repeats ``ceil(n * d)``, stem ``make_divisible(32 * w)``, head ``4 x`` the last stage's."""
    width, depth, size = EFFICIENTNET_SCALING[variant]
    name = f"efficientnet-{variant}"
    b = imagenet_builder(name, "Tan & Le 2019; torchvision", size)
    x = b.conv(b.input(), make_divisible(32 * width), 3, 2, 1, act="swish", name="stem")
    for s, (expand, kernel, stride, out_ch, repeats) in enumerate(EFFICIENTNET_B0_STAGES, 1):
        for i in range(math.ceil(repeats * depth)):
            x = mbconv(
                b,
                x,
                expand,
                kernel,
                stride if i == 0 else 1,
                make_divisible(out_ch * width),
                f"block{s}_{i}",
            )
    x = b.conv(x, 4 * x.channels, 1, 1, 0, act="swish", name="head")
    return pooled_classifier(b, x, num_classes)


_TV_EFF = "torchvision model table (efficientnet_{}: {} GFLOPS = GMACs, {} M params)"


@register(
    "efficientnet-b1",
    macs=0.69e9,
    params=7.79e6,
    source=_TV_EFF.format("b1", 0.69, 7.79),
    aliases=("efficientnet_b1",),
)
def efficientnet_b1() -> Network:
    return build_efficientnet("b1")


@register(
    "efficientnet-b2",
    macs=1.09e9,
    params=9.11e6,
    source=_TV_EFF.format("b2", 1.09, 9.11),
    aliases=("efficientnet_b2",),
)
def efficientnet_b2() -> Network:
    return build_efficientnet("b2")


@register(
    "efficientnet-b3",
    macs=1.83e9,
    params=12.23e6,
    source=_TV_EFF.format("b3", 1.83, 12.23),
    aliases=("efficientnet_b3",),
)
def efficientnet_b3() -> Network:
    return build_efficientnet("b3")


@register(
    "efficientnet-b4",
    macs=4.39e9,
    params=19.34e6,
    source=_TV_EFF.format("b4", 4.39, 19.34),
    aliases=("efficientnet_b4",),
)
def efficientnet_b4() -> Network:
    return build_efficientnet("b4")


# --- MobileNet-v2 ------------------------------------------------------------------------------
#: Sandler et al. 2018, Table 2: (expansion t, out channels c, repeats n, stride s).
MOBILENET_V2_BLOCKS: tuple[tuple[int, int, int, int], ...] = (
    (1, 16, 1, 1),
    (6, 24, 2, 2),
    (6, 32, 3, 2),
    (6, 64, 4, 2),
    (6, 96, 3, 1),
    (6, 160, 3, 2),
    (6, 320, 1, 1),
)


def build_mobilenet_v2(num_classes: int = 1000) -> Network:
    """MobileNet-v2 1.0-224: inverted residuals (1x1 expansion, 3x3 depthwise, both BN +
    ReLU6, linear 1x1 projection; residual at stride 1 with equal channels), a 1x1 conv to 1280,
    average pool and a 1000-way FC."""
    b = imagenet_builder("mobilenet-v2", "Sandler et al. 2018; torchvision")
    x = b.conv(b.input(), 32, 3, 2, 1, act="relu6", name="stem")
    for s, (t, c, n, stride) in enumerate(MOBILENET_V2_BLOCKS, 1):
        for i in range(n):
            p = f"block{s}_{i}"
            y = x
            if t != 1:
                y = b.conv(y, x.channels * t, 1, 1, 0, act="relu6", name=f"{p}_expand")
            y = b.dwconv(y, 3, stride if i == 0 else 1, act="relu6", name=f"{p}_dw")
            y = b.conv(y, c, 1, 1, 0, act=None, name=f"{p}_project")
            x = b.add(y, x, name=f"{p}_add") if y.shape == x.shape else y
    x = b.conv(x, 1280, 1, 1, 0, act="relu6", name="head")
    return pooled_classifier(b, x, num_classes)


@register(
    "mobilenet-v2",
    macs=0.30e9,
    params=3.50e6,
    source="torchvision model table (mobilenet_v2: 0.30 GFLOPS = GMACs, 3.50 M params); "
    "Sandler et al. 2018 Table 4 (300 M MAdds, 3.4 M)",
    aliases=("mobilenet_v2", "mobilenetv2"),
)
def mobilenet_v2() -> Network:
    return build_mobilenet_v2()


# --- MobileNet-v3 (large) ----------------------------------------------------------------------
#: Howard et al. 2019, Table 1: (kernel, expansion channels, out channels, SE, activation,
#: stride) per bneck block.
MOBILENET_V3_LARGE: tuple[tuple[int, int, int, bool, str, int], ...] = (
    (3, 16, 16, False, "relu", 1),
    (3, 64, 24, False, "relu", 2),
    (3, 72, 24, False, "relu", 1),
    (5, 72, 40, True, "relu", 2),
    (5, 120, 40, True, "relu", 1),
    (5, 120, 40, True, "relu", 1),
    (3, 240, 80, False, "hswish", 2),
    (3, 200, 80, False, "hswish", 1),
    (3, 184, 80, False, "hswish", 1),
    (3, 184, 80, False, "hswish", 1),
    (3, 480, 112, True, "hswish", 1),
    (3, 672, 112, True, "hswish", 1),
    (5, 672, 160, True, "hswish", 2),
    (5, 960, 160, True, "hswish", 1),
    (5, 960, 160, True, "hswish", 1),
)


def build_mobilenet_v3_large(num_classes: int = 1000) -> Network:
    """MobileNet-v3-Large 1.0-224 (torchvision): 3x3/2 stem (16, h-swish), the bneck blocks
    (expansion skipped when it equals the input width; squeeze-excitation of
    ``make_divisible(exp / 4)`` with ReLU and hard-sigmoid, biases), a 1x1 conv to 960, pool,
    FC 1280 (h-swish) and the class FC."""
    b = imagenet_builder("mobilenet-v3-large", "Howard et al. 2019; torchvision")
    x = b.conv(b.input(), 16, 3, 2, 1, act="hswish", name="stem")
    for i, (k, exp, out, se, act, stride) in enumerate(MOBILENET_V3_LARGE, 1):
        p = f"bneck{i}"
        y = x
        if exp != x.channels:
            y = b.conv(y, exp, 1, 1, 0, act=act, name=f"{p}_expand")
        y = b.dwconv(y, k, stride, act=act, name=f"{p}_dw")
        if se:
            s = b.global_pool(y, name=f"{p}_se_pool")
            s = b.fc(s, make_divisible(exp / 4), act="relu", name=f"{p}_se_reduce")
            s = b.fc(s, exp, act="hsigmoid", name=f"{p}_se_expand")
            y = b.mul(y, s, name=f"{p}_se_scale")
        y = b.conv(y, out, 1, 1, 0, act=None, name=f"{p}_project")
        x = b.add(y, x, name=f"{p}_add") if stride == 1 and x.channels == out else y
    x = b.conv(x, 960, 1, 1, 0, act="hswish", name="head")
    x = b.global_pool(x, name="avgpool")
    x = b.fc(x, 1280, act="hswish", name="fc1")
    b.fc(x, num_classes, name="fc")
    return b.build()


@register(
    "mobilenet-v3-large",
    macs=0.22e9,
    params=5.48e6,
    source="torchvision model table (mobilenet_v3_large: 0.22 GFLOPS = GMACs, 5.48 M params); "
    "Howard et al. 2019 Table 3 (219 M MAdds, 5.4 M)",
    aliases=("mobilenet_v3_large", "mobilenet-v3"),
)
def mobilenet_v3_large() -> Network:
    return build_mobilenet_v3_large()
