"""Inception-v3 (Szegedy et al., CVPR 2016), Inception-v4 and Inception-ResNet-v2 (Szegedy et
al., AAAI 2017), 299x299 input.

Layouts follow the released TensorFlow models as ported to torchvision (v3) and timm / Cadene's
pretrained-models (v4, Inception-ResNet-v2): every convolution is bias-free with batch-norm
(folded, 2 parameters per channel) and ReLU. Inception-v3 is built *without* its auxiliary
classifier: the auxiliary head only runs in training, so inference MACs and the parameters that
matter for serving exclude it (torchvision's 27.16 M parameters include its 3.33 M).
Inception-ResNet-v2 is the released model, as timm and Keras build it: its stem is Inception-v3's
plus a ``Mixed_5b`` module (35x35x320), not the paper's Fig. 3 stem, and its grid reductions
follow the paper's Fig. 7 and Fig. 18 with the released widths.

Modules are described as tables of branches. A branch is a sequence of steps applied in order;
the module concatenates the branch outputs on channels. A step is a convolution
``Conv(out, kernel, stride, padding)`` (padding ``None`` keeps the size), a pooling
``Pool(mode, kernel, stride, padding)``, or a ``Fork`` of convolutions that all read the same
tensor and each contribute an output (Inception-v3's expanded 1x3 / 3x1 filter banks).
Inception-ResNet blocks run their branches, a 1x1 linear up-projection (with bias, no BN), then
the scaled residual add and ReLU (the scale is folded into the add).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from npusched.models.builder import NetBuilder, Tensor
from npusched.models.ir import Network
from npusched.models.zoo.common import imagenet_builder, pooled_classifier
from npusched.models.zoo.registry import register

Kernel = int | tuple[int, int]


@dataclass(frozen=True)
class Conv:
    out: int
    kernel: Kernel = 1
    stride: int = 1
    padding: int | None = None  # None: keep the size (kernel // 2 on each axis)


@dataclass(frozen=True)
class Pool:
    mode: str
    kernel: int = 3
    stride: int = 1
    padding: int = 1


@dataclass(frozen=True)
class Fork:
    convs: tuple[Conv, ...]


Step = Conv | Pool | Fork
Branch = tuple[Step, ...]


def _conv(b: NetBuilder, x: Tensor, c: Conv, name: str) -> Tensor:
    return b.conv(x, c.out, c.kernel, c.stride, c.padding, name=name)


def run_branch(b: NetBuilder, x: Tensor, steps: Branch, prefix: str) -> list[Tensor]:
    """Apply ``steps`` to ``x``; returns the branch's outputs (several after a ``Fork``)."""
    for j, step in enumerate(steps):
        name = f"{prefix}_{j}"
        if isinstance(step, Conv):
            x = _conv(b, x, step, name)
        elif isinstance(step, Pool):
            x = b.pool(x, step.kernel, step.stride, step.padding, mode=step.mode, name=name)
        else:
            return [_conv(b, x, c, f"{name}{'abcd'[i]}") for i, c in enumerate(step.convs)]
    return [x]


def inception_module(b: NetBuilder, x: Tensor, branches: Sequence[Branch], prefix: str) -> Tensor:
    """Parallel branches concatenated on channels."""
    outs = [o for i, br in enumerate(branches) for o in run_branch(b, x, br, f"{prefix}_b{i}")]
    return b.concat(*outs, name=f"{prefix}_concat")


def residual_module(
    b: NetBuilder, x: Tensor, branches: Sequence[Branch], prefix: str, *, relu: bool = True
) -> Tensor:
    """Inception-ResNet block: branches, concat, 1x1 up-projection, scaled residual add."""
    y = inception_module(b, x, branches, prefix)
    y = b.conv(y, x.channels, 1, 1, 0, bias=True, bn=False, act=None, name=f"{prefix}_up")
    return b.add(y, x, act="relu" if relu else None, name=f"{prefix}_add")


def run_stem(b: NetBuilder, x: Tensor, steps: Branch, prefix: str = "stem") -> Tensor:
    (out,) = run_branch(b, x, steps, prefix)
    return out


def _max(stride: int = 2) -> Pool:
    return Pool("max", 3, stride, 0)


_AVG = Pool("avg", 3, 1, 1)


# --- Inception-v3 ------------------------------------------------------------------------------
V3_STEM: Branch = (
    Conv(32, 3, 2, 0),
    Conv(32, 3, 1, 0),
    Conv(64, 3),
    _max(),
    Conv(80, 1),
    Conv(192, 3, 1, 0),
    _max(),
)


def v3_a(pool_features: int) -> tuple[Branch, ...]:
    """35x35 module (Mixed_5b-d): 1x1 | 1x1-5x5 | 1x1-3x3-3x3 | avgpool-1x1."""
    return (
        (Conv(64),),
        (Conv(48), Conv(64, 5)),
        (Conv(64), Conv(96, 3), Conv(96, 3)),
        (_AVG, Conv(pool_features)),
    )


V3_B: tuple[Branch, ...] = (  # grid reduction 35 -> 17 (Mixed_6a)
    (Conv(384, 3, 2, 0),),
    (Conv(64), Conv(96, 3), Conv(96, 3, 2, 0)),
    (_max(),),
)


def v3_c(c7: int) -> tuple[Branch, ...]:
    """17x17 module with factorised 7x7 (Mixed_6b-e)."""
    return (
        (Conv(192),),
        (Conv(c7), Conv(c7, (1, 7)), Conv(192, (7, 1))),
        (Conv(c7), Conv(c7, (7, 1)), Conv(c7, (1, 7)), Conv(c7, (7, 1)), Conv(192, (1, 7))),
        (_AVG, Conv(192)),
    )


V3_D: tuple[Branch, ...] = (  # grid reduction 17 -> 8 (Mixed_7a)
    (Conv(192), Conv(320, 3, 2, 0)),
    (Conv(192), Conv(192, (1, 7)), Conv(192, (7, 1)), Conv(192, 3, 2, 0)),
    (_max(),),
)
_SPLIT_384 = Fork((Conv(384, (1, 3)), Conv(384, (3, 1))))
V3_E: tuple[Branch, ...] = (  # 8x8 module with expanded filter banks (Mixed_7b-c)
    (Conv(320),),
    (Conv(384), _SPLIT_384),
    (Conv(448), Conv(384, 3), _SPLIT_384),
    (_AVG, Conv(192)),
)
V3_BODY: tuple[tuple[str, tuple[Branch, ...]], ...] = (
    ("mixed_5b", v3_a(32)),
    ("mixed_5c", v3_a(64)),
    ("mixed_5d", v3_a(64)),
    ("mixed_6a", V3_B),
    ("mixed_6b", v3_c(128)),
    ("mixed_6c", v3_c(160)),
    ("mixed_6d", v3_c(160)),
    ("mixed_6e", v3_c(192)),
    ("mixed_7a", V3_D),
    ("mixed_7b", V3_E),
    ("mixed_7c", V3_E),
)


def build_inception_v3(num_classes: int = 1000) -> Network:
    b = imagenet_builder("inception-v3", "Szegedy et al. 2016; torchvision, no aux", size=299)
    x = run_stem(b, b.input(), V3_STEM)
    for name, branches in V3_BODY:
        x = inception_module(b, x, branches, name)
    return pooled_classifier(b, x, num_classes)


@register(
    "inception-v3",
    macs=5.71e9,
    params=23.83e6,
    source="torchvision model table (inception_v3: 5.71 GFLOPS = GMACs; its 27.16 M params "
    "include the 3.33 M training-only aux head, 23.83 M without); Keras Applications 23.9 M",
    aliases=("inception_v3", "inceptionv3"),
)
def inception_v3() -> Network:
    return build_inception_v3()


# --- Inception-v4 ------------------------------------------------------------------------------
V4_STEM: tuple[tuple[str, tuple[Branch, ...]], ...] = (
    ("stem", ((Conv(32, 3, 2, 0), Conv(32, 3, 1, 0), Conv(64, 3)),)),
    ("mixed_3a", ((_max(),), (Conv(96, 3, 2, 0),))),
    (
        "mixed_4a",
        (
            (Conv(64), Conv(96, 3, 1, 0)),
            (Conv(64), Conv(64, (1, 7)), Conv(64, (7, 1)), Conv(96, 3, 1, 0)),
        ),
    ),
    ("mixed_5a", ((Conv(192, 3, 2, 0),), (_max(),))),
)
V4_A: tuple[Branch, ...] = (  # 35x35, x4
    (Conv(96),),
    (Conv(64), Conv(96, 3)),
    (Conv(64), Conv(96, 3), Conv(96, 3)),
    (_AVG, Conv(96)),
)
V4_REDUCTION_A: tuple[Branch, ...] = (  # 35 -> 17; k, l, m, n = 192, 224, 256, 384
    (Conv(384, 3, 2, 0),),
    (Conv(192), Conv(224, 3), Conv(256, 3, 2, 0)),
    (_max(),),
)
V4_B: tuple[Branch, ...] = (  # 17x17, x7
    (Conv(384),),
    (Conv(192), Conv(224, (1, 7)), Conv(256, (7, 1))),
    (Conv(192), Conv(192, (7, 1)), Conv(224, (1, 7)), Conv(224, (7, 1)), Conv(256, (1, 7))),
    (_AVG, Conv(128)),
)
V4_REDUCTION_B: tuple[Branch, ...] = (  # 17 -> 8
    (Conv(192), Conv(192, 3, 2, 0)),
    (Conv(256), Conv(256, (1, 7)), Conv(320, (7, 1)), Conv(320, 3, 2, 0)),
    (_max(),),
)
_SPLIT_256 = Fork((Conv(256, (1, 3)), Conv(256, (3, 1))))
V4_C: tuple[Branch, ...] = (  # 8x8, x3
    (Conv(256),),
    (Conv(384), _SPLIT_256),
    (Conv(384), Conv(448, (3, 1)), Conv(512, (1, 3)), _SPLIT_256),
    (_AVG, Conv(256)),
)
# (module, repeats)
V4_BODY: tuple[tuple[str, tuple[Branch, ...], int], ...] = (
    ("inception_a", V4_A, 4),
    ("reduction_a", V4_REDUCTION_A, 1),
    ("inception_b", V4_B, 7),
    ("reduction_b", V4_REDUCTION_B, 1),
    ("inception_c", V4_C, 3),
)


def inception_v4_stem(b: NetBuilder, x: Tensor) -> Tensor:
    """The Inception-v4 stem (Fig. 3 of the paper): 299x299x3 -> 35x35x384."""
    for name, branches in V4_STEM:
        x = (
            inception_module(b, x, branches, name)
            if len(branches) > 1
            else run_stem(b, x, branches[0], name)
        )
    return x


def build_inception_v4(num_classes: int = 1000) -> Network:
    b = imagenet_builder("inception-v4", "Szegedy et al. 2017; timm", size=299)
    x = inception_v4_stem(b, b.input())
    for name, branches, reps in V4_BODY:
        for i in range(reps):
            x = inception_module(b, x, branches, f"{name}{i}" if reps > 1 else name)
    return pooled_classifier(b, x, num_classes)


@register(
    "inception-v4",
    macs=12.3e9,
    params=42.7e6,
    source="timm model card inception_v4.tf_in1k (12.3 GMACs, 42.7 M params); Szegedy et al. 2017",
    aliases=("inception_v4", "inceptionv4"),
)
def inception_v4() -> Network:
    return build_inception_v4()


# --- Inception-ResNet-v2 -----------------------------------------------------------------------
IRV2_STEM: Branch = V3_STEM  # the released model's stem is Inception-v3's (module docstring)
IRV2_MIXED_5B: tuple[Branch, ...] = (
    (Conv(96),),
    (Conv(48), Conv(64, 5)),
    (Conv(64), Conv(96, 3), Conv(96, 3)),
    (_AVG, Conv(64)),
)
IRV2_BLOCK35: tuple[Branch, ...] = (  # 35x35x320, x10, residual scale 0.17
    (Conv(32),),
    (Conv(32), Conv(32, 3)),
    (Conv(32), Conv(48, 3), Conv(64, 3)),
)
IRV2_MIXED_6A: tuple[Branch, ...] = (  # 35 -> 17; k, l, m, n = 256, 256, 384, 384
    (Conv(384, 3, 2, 0),),
    (Conv(256), Conv(256, 3), Conv(384, 3, 2, 0)),
    (_max(),),
)
IRV2_BLOCK17: tuple[Branch, ...] = (  # 17x17x1088, x20, scale 0.10
    (Conv(192),),
    (Conv(128), Conv(160, (1, 7)), Conv(192, (7, 1))),
)
IRV2_MIXED_7A: tuple[Branch, ...] = (  # 17 -> 8
    (Conv(256), Conv(384, 3, 2, 0)),
    (Conv(256), Conv(288, 3, 2, 0)),
    (Conv(256), Conv(288, 3), Conv(320, 3, 2, 0)),
    (_max(),),
)
IRV2_BLOCK8: tuple[Branch, ...] = (  # 8x8x2080, x10, scale 0.20 (the last without ReLU)
    (Conv(192),),
    (Conv(192), Conv(224, (1, 3)), Conv(256, (3, 1))),
)


def build_inception_resnet_v2(num_classes: int = 1000) -> Network:
    b = imagenet_builder("inception-resnet-v2", "Szegedy et al. 2017; timm", size=299)
    x = run_stem(b, b.input(), IRV2_STEM)
    x = inception_module(b, x, IRV2_MIXED_5B, "mixed_5b")
    for i in range(10):
        x = residual_module(b, x, IRV2_BLOCK35, f"block35_{i}")
    x = inception_module(b, x, IRV2_MIXED_6A, "mixed_6a")
    for i in range(20):
        x = residual_module(b, x, IRV2_BLOCK17, f"block17_{i}")
    x = inception_module(b, x, IRV2_MIXED_7A, "mixed_7a")
    for i in range(10):
        x = residual_module(b, x, IRV2_BLOCK8, f"block8_{i}", relu=i < 9)
    x = b.conv(x, 1536, 1, 1, 0, name="conv_7b")
    return pooled_classifier(b, x, num_classes)


@register(
    "inception-resnet-v2",
    macs=13.2e9,
    params=55.8e6,
    source="timm model card inception_resnet_v2.tf_in1k (13.2 GMACs, 55.8 M params); "
    "Szegedy et al. 2017; Keras Applications 55.9 M",
    aliases=("inception_resnet_v2", "inceptionresnetv2"),
)
def inception_resnet_v2() -> Network:
    return build_inception_resnet_v2()
