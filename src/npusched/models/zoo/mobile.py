"""Mobile CNNs: MobileNet-v1 (Howard et al. 2017) and EfficientNet-B0 (Tan & Le, ICML 2019).

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

from npusched.models.builder import NetBuilder, Padding, Tensor
from npusched.models.ir import Network
from npusched.models.zoo import register
from npusched.models.zoo.common import imagenet_builder, pooled_classifier

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
