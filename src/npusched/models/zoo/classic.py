"""Classic ImageNet CNNs: AlexNet, GoogLeNet (Inception-v1), VGG-16/19 and SqueezeNet 1.0/1.1.

These networks predate batch-norm: every convolution carries a bias and a fused ReLU, no BN.

* AlexNet - the one-tower torchvision layout (Krizhevsky 2014, "One weird trick"), 224x224 input:
  64/192/384/256/256 channels with no grouped convolutions. ``caffenet`` is an alias of it: the
  Caffe two-tower layout (96/256/384/384/256, conv2/4/5 in 2 groups, 227 input: 724 M MACs,
  60.97 M parameters) differs by 1.4% in MACs and 0.2% in parameters, inside the zoo's 5%.
* GoogLeNet - the paper's Inception-v1 (Szegedy et al., CVPR 2015, Table 1): 5x5 convolutions in
  the third branch, local response normalisation after the first pooling and after conv2, no
  auxiliary classifiers (they are training-only). Pools use ``ceil_mode`` as Caffe does, so
  112 -> 56 -> 28 -> 14 -> 7.
* VGG-16/19 - configurations D and E (Simonyan & Zisserman, ICLR 2015), torchvision layout.
* SqueezeNet - ``squeezenet`` is v1.0 (Iandola et al. 2016, 7x7 stem with 96 channels, pooling
  after fire4 and fire8); ``squeezenet-1.1`` is the cheaper v1.1 (3x3 stem, pooling after fire3
  and fire5). torchvision layout, 224x224 input.

MACs are per 1-sample inference; parameters include biases.
"""

from __future__ import annotations

from npusched.models.builder import NetBuilder, Tensor
from npusched.models.ir import Network
from npusched.models.zoo.common import imagenet_builder, pooled_classifier
from npusched.models.zoo.registry import register

_TV = "torchvision model table (GFLOPS column = GMACs)"


def _conv(
    b: NetBuilder, x: Tensor, out_ch: int, kernel: int, stride: int, padding: int, name: str
) -> Tensor:
    """A convolution of these pre-batch-norm networks: with a bias and a fused ReLU, no BN."""
    return b.conv(x, out_ch, kernel, stride, padding, bias=True, bn=False, name=name)


# --- AlexNet -----------------------------------------------------------------------------------
# (out channels, kernel, stride, padding, max-pool 3/2 after it)
ALEXNET_CONVS: tuple[tuple[int, int, int, int, bool], ...] = (
    (64, 11, 4, 2, True),
    (192, 5, 1, 2, True),
    (384, 3, 1, 1, False),
    (256, 3, 1, 1, False),
    (256, 3, 1, 1, True),
)


def classifier_head(
    b: NetBuilder, x: Tensor, hidden: tuple[int, ...], num_classes: int = 1000
) -> Tensor:
    """Flatten, then ReLU fully connected layers of widths ``hidden`` and the class layer."""
    for i, width in enumerate(hidden, start=1):
        x = b.fc(x, width, act="relu", name=f"fc{i}")
    return b.fc(x, num_classes, name=f"fc{len(hidden) + 1}")


def build_alexnet(name: str = "alexnet", num_classes: int = 1000) -> Network:
    b = imagenet_builder(name, "Krizhevsky 2014 (one tower); torchvision")
    x = b.input()
    for i, (ch, k, s, p, pooled) in enumerate(ALEXNET_CONVS, start=1):
        x = _conv(b, x, ch, k, s, p, f"conv{i}")
        if pooled:
            x = b.pool(x, 3, 2, name=f"pool{i}")
    classifier_head(b, x, (4096, 4096), num_classes)
    return b.build()


@register(
    "alexnet",
    macs=0.71e9,
    params=61.10e6,
    source=_TV + "; Krizhevsky 2014",
    aliases=("caffenet", "cnn-an"),
    description="AlexNet, one-tower torchvision layout, 224x224",
)
def alexnet() -> Network:
    return build_alexnet()


# --- VGG ---------------------------------------------------------------------------------------
# Convolutions per stage (64, 128, 256, 512, 512 channels); each stage ends in a 2x2 max-pool.
VGG_SPECS: dict[int, tuple[int, int, int, int, int]] = {
    11: (1, 1, 2, 2, 2),
    13: (2, 2, 2, 2, 2),
    16: (2, 2, 3, 3, 3),
    19: (2, 2, 4, 4, 4),
}
VGG_WIDTHS = (64, 128, 256, 512, 512)


def vgg_features(b: NetBuilder, x: Tensor, depth: int, stages: int = 5) -> list[Tensor]:
    """The first ``stages`` VGG stages (3x3 conv + ReLU, then 2x2 max-pool).

    Returns each stage's last convolution output (before its pool), for detection backbones;
    the pools *between* the emitted stages are emitted, the last stage's pool is left to the
    caller. Layer names follow Caffe: ``conv{stage}_{i}``, ``pool{stage}``.
    """
    outs = []
    for s, (reps, width) in enumerate(zip(VGG_SPECS[depth], VGG_WIDTHS, strict=True), start=1):
        if s > stages:
            break
        if s > 1:
            x = b.pool(x, 2, 2, name=f"pool{s - 1}")
        for i in range(1, reps + 1):
            x = _conv(b, x, width, 3, 1, 1, f"conv{s}_{i}")
        outs.append(x)
    return outs


def build_vgg(depth: int, num_classes: int = 1000) -> Network:
    b = imagenet_builder(f"vgg-{depth}", "Simonyan & Zisserman 2015; torchvision")
    x = vgg_features(b, b.input(), depth)[-1]
    x = b.pool(x, 2, 2, name="pool5")
    classifier_head(b, x, (4096, 4096), num_classes)
    return b.build()


@register(
    "vgg-16",
    macs=15.47e9,
    params=138.36e6,
    source=_TV + "; Simonyan & Zisserman 2015 (config D)",
    aliases=("vgg16", "cnn-vn"),
)
def vgg16() -> Network:
    return build_vgg(16)


@register(
    "vgg-19",
    macs=19.63e9,
    params=143.67e6,
    source=_TV + "; Simonyan & Zisserman 2015 (config E)",
    aliases=("vgg19",),
)
def vgg19() -> Network:
    return build_vgg(19)


# --- GoogLeNet ---------------------------------------------------------------------------------
# Szegedy et al. 2015, Table 1: (#1x1, #3x3 reduce, #3x3, #5x5 reduce, #5x5, pool proj);
# ``None`` rows are the 3x3/2 max-pools between stages.
GOOGLENET_SPEC: tuple[tuple[str, tuple[int, int, int, int, int, int]] | None, ...] = (
    ("3a", (64, 96, 128, 16, 32, 32)),
    ("3b", (128, 128, 192, 32, 96, 64)),
    None,
    ("4a", (192, 96, 208, 16, 48, 64)),
    ("4b", (160, 112, 224, 24, 64, 64)),
    ("4c", (128, 128, 256, 24, 64, 64)),
    ("4d", (112, 144, 288, 32, 64, 64)),
    ("4e", (256, 160, 320, 32, 128, 128)),
    None,
    ("5a", (256, 160, 320, 32, 128, 128)),
    ("5b", (384, 192, 384, 48, 128, 128)),
)


def inception_v1_module(
    b: NetBuilder, x: Tensor, widths: tuple[int, int, int, int, int, int], prefix: str
) -> Tensor:
    """Four parallel branches (1x1 | 1x1-3x3 | 1x1-5x5 | pool-1x1) concatenated on channels."""
    c1, r3, c3, r5, c5, pp = widths

    def conv(t: Tensor, ch: int, k: int, tag: str) -> Tensor:
        return _conv(b, t, ch, k, 1, k // 2, f"{prefix}_{tag}")

    b1 = conv(x, c1, 1, "1x1")
    b2 = conv(conv(x, r3, 1, "3x3_reduce"), c3, 3, "3x3")
    b3 = conv(conv(x, r5, 1, "5x5_reduce"), c5, 5, "5x5")
    b4 = conv(b.pool(x, 3, 1, 1, name=f"{prefix}_pool"), pp, 1, "pool_proj")
    return b.concat(b1, b2, b3, b4, name=f"{prefix}_concat")


def build_googlenet(num_classes: int = 1000) -> Network:
    b = imagenet_builder("googlenet", "Szegedy et al. 2015, Table 1 (no aux heads)")
    x = _conv(b, b.input(), 64, 7, 2, 3, "conv1")
    x = b.pool(x, 3, 2, ceil_mode=True, name="pool1")
    x = b.vector(x, "lrn", name="norm1")
    x = _conv(b, x, 64, 1, 1, 0, "conv2_reduce")
    x = _conv(b, x, 192, 3, 1, 1, "conv2")
    x = b.vector(x, "lrn", name="norm2")
    x = b.pool(x, 3, 2, ceil_mode=True, name="pool2")
    stage = 3
    for row in GOOGLENET_SPEC:
        if row is None:
            x = b.pool(x, 3, 2, ceil_mode=True, name=f"pool{stage}")
            stage += 1
            continue
        tag, widths = row
        x = inception_v1_module(b, x, widths, f"inception_{tag}")
    return pooled_classifier(b, x, num_classes)


@register(
    "googlenet",
    macs=1.586e9,
    params=6.8e6,
    # The text's "1.5 billion multiply-adds" is a rounded budget; Table 1's ops column sums to
    # 1,586 M (conv1 118 M, conv2 360 M, 3a 128 M, ..., 5b 71 M, linear 1 M).
    source="Szegedy et al. 2015, Table 1 (ops column summed: 1.586 G MACs; params 6.8 M)",
    aliases=("inception-v1", "cnn-gn"),
)
def googlenet() -> Network:
    return build_googlenet()


# --- SqueezeNet --------------------------------------------------------------------------------
# Fire modules as (squeeze, expand 1x1, expand 3x3); "pool" is a 3x3/2 max-pool (ceil mode).
_SQ_FIRES = {
    "s16": (16, 64, 64),
    "s32": (32, 128, 128),
    "s48": (48, 192, 192),
    "s64": (64, 256, 256),
}
SQUEEZENET_SPECS: dict[str, tuple[tuple[int, int], tuple[str, ...]]] = {
    # version: ((stem channels, stem kernel), modules after the stem's pool)
    "1.0": (
        (96, 7),
        ("s16", "s16", "s32", "pool", "s32", "s48", "s48", "s64", "pool", "s64"),
    ),
    "1.1": (
        (64, 3),
        ("s16", "s16", "pool", "s32", "s32", "pool", "s48", "s48", "s64", "s64"),
    ),
}


def fire_module(b: NetBuilder, x: Tensor, widths: tuple[int, int, int], prefix: str) -> Tensor:
    """Squeeze 1x1, then parallel expand 1x1 and 3x3, concatenated."""
    sq, e1, e3 = widths
    s = _conv(b, x, sq, 1, 1, 0, f"{prefix}_squeeze")
    a = _conv(b, s, e1, 1, 1, 0, f"{prefix}_expand1x1")
    c = _conv(b, s, e3, 3, 1, 1, f"{prefix}_expand3x3")
    return b.concat(a, c, name=f"{prefix}_concat")


def build_squeezenet(version: str, name: str, num_classes: int = 1000) -> Network:
    (stem_ch, stem_k), seq = SQUEEZENET_SPECS[version]
    b = imagenet_builder(name, f"Iandola et al. 2016, v{version}; torchvision")
    x = _conv(b, b.input(), stem_ch, stem_k, 2, 0, "conv1")
    x = b.pool(x, 3, 2, ceil_mode=True, name="pool1")
    fire, pool = 2, 2
    for item in seq:
        if item == "pool":
            x = b.pool(x, 3, 2, ceil_mode=True, name=f"pool{pool}")
            pool += 1
        else:
            x = fire_module(b, x, _SQ_FIRES[item], f"fire{fire}")
            fire += 1
    # Dropout, then a 1x1 convolution to the classes, ReLU, global average pool.
    x = _conv(b, x, num_classes, 1, 1, 0, "conv10")
    b.global_pool(x, name="avgpool")
    return b.build()


@register(
    "squeezenet",
    macs=0.82e9,
    params=1.25e6,
    source=_TV + " (squeezenet1_0); Iandola et al. 2016",
    aliases=("squeezenet-1.0", "squeezenet1_0"),
    description="SqueezeNet v1.0, 224x224",
)
def squeezenet() -> Network:
    return build_squeezenet("1.0", "squeezenet")


@register(
    "squeezenet-1.1",
    macs=0.35e9,
    params=1.24e6,
    source=_TV + " (squeezenet1_1)",
    aliases=("squeezenet1_1",),
    description="SqueezeNet v1.1, 224x224",
)
def squeezenet11() -> Network:
    return build_squeezenet("1.1", "squeezenet-1.1")
