"""Detection and segmentation networks: YOLOv2/v3/v4, Tiny-YOLOv3, MLPerf SSD-ResNet34 and
SSD-MobileNet-v1, FCN-ResNet18.

Layer tables follow the reference configurations line by line (darknet ``.cfg`` files, the MLPerf
reference models, torchvision's FCN head). Darknet ``[convolutional]`` layers carry batch-norm and
a leaky ReLU (fused here); the 1x1 convolutions in front of each ``[yolo]`` / ``[region]`` layer
are linear with a bias. ``[route]`` is a concatenation (or a plain re-use of an earlier tensor),
``[shortcut]`` an element-wise add, ``[reorg]`` / ``[upsample]`` vector ops. Box decoding and
non-maximum suppression run on the vector unit as one ``nms`` op with no MACs.

MAC convention: darknet prints ``BFLOPs`` = 2 x MACs (``2 * n * size^2 * c * out_h * out_w``);
MLPerf's ``GOPS / input`` is also 2 x MACs (its ResNet-50 v1.5 row says 8.2 GOPS for 4.1 GMACs).
Every reference below is converted to MACs by halving.
"""

from __future__ import annotations

from npusched.models.builder import NetBuilder, Tensor
from npusched.models.ir import Network
from npusched.models.zoo.registry import register
from npusched.models.zoo.resnet import resnet_stages, resnet_stem

COCO_CLASSES = 80  # darknet COCO heads: 3 anchors x (80 classes + 5) = 255 filters per scale


# --- darknet helpers ---------------------------------------------------------------------------
def _dk(
    b: NetBuilder, x: Tensor, filters: int, size: int, stride: int = 1, *, act: str = "leaky"
) -> Tensor:
    """A darknet ``[convolutional]`` layer with ``batch_normalize=1`` and ``pad=1``."""
    return b.conv(x, filters, size, stride, size // 2, bn=True, act=act)


def _predictor(
    b: NetBuilder, x: Tensor, out_ch: int, name: str, kernel: int = 1, stride: int = 1
) -> Tensor:
    """A prediction convolution: linear (no batch-norm, no activation) with a bias."""
    pad = kernel // 2
    return b.conv(x, out_ch, kernel, stride, pad, bias=True, bn=False, act=None, name=name)


def _yolo_head(b: NetBuilder, x: Tensor, filters: int, name: str) -> Tensor:
    """The linear 1x1 detection convolution (with bias) and the ``[yolo]`` decode op."""
    return b.vector(_predictor(b, x, filters, f"{name}_conv"), "yolo", name=name)


def _nms(b: NetBuilder, heads: list[Tensor], max_boxes: int = 100) -> Tensor:
    """Box decoding + non-maximum suppression: a vector op over every head, no MACs.
    Output: ``max_boxes`` rows of (x1, y1, x2, y2, score, class)."""
    return b.vector(heads, "nms", (max_boxes, 6), name="nms")


def _darknet_residual(b: NetBuilder, x: Tensor, blocks: int, act: str = "leaky") -> Tensor:
    """``blocks`` darknet residual units: 1x1 (C/2) -> 3x3 (C) -> shortcut."""
    c = x.channels
    for _ in range(blocks):
        y = _dk(b, x, c // 2, 1, act=act)
        y = _dk(b, y, c, 3, act=act)
        x = b.add(x, y)
    return x


# --- YOLOv2 ------------------------------------------------------------------------------------
def build_yolov2(size: int = 416, classes: int = COCO_CLASSES) -> Network:
    """darknet ``cfg/yolov2.cfg`` (COCO, 5 anchors): Darknet-19 trunk, two 3x3x1024 convs, the
    passthrough (1x1x64 conv + reorg of the 26x26 map) concatenated, 3x3x1024, 1x1 detection."""
    b = NetBuilder(
        "yolov2",
        (3, size, size),
        meta={"task": "detection", "source": "darknet cfg/yolov2.cfg (Redmon & Farhadi 2017)"},
    )
    x = _dk(b, b.input(), 32, 3)
    x = b.pool(x, 2, 2)
    x = _dk(b, x, 64, 3)
    x = b.pool(x, 2, 2)
    for c in (128, 256):
        x = _dk(b, x, c, 3)
        x = _dk(b, x, c // 2, 1)
        x = _dk(b, x, c, 3)
        x = b.pool(x, 2, 2)
    for _ in range(2):
        x = _dk(b, x, 512, 3)
        x = _dk(b, x, 256, 1)
    passthrough = _dk(b, x, 512, 3)  # darknet layer 16 (26x26x512)
    x = b.pool(passthrough, 2, 2)
    for _ in range(2):
        x = _dk(b, x, 1024, 3)
        x = _dk(b, x, 512, 1)
    x = _dk(b, x, 1024, 3)
    # detection-specific layers
    x = _dk(b, x, 1024, 3)
    x = _dk(b, x, 1024, 3)
    p = _dk(b, passthrough, 64, 1)
    c, h, w = p.shape
    p = b.vector(p, "reorg", (c * 4, h // 2, w // 2), name="reorg")
    x = b.concat(p, x)
    x = _dk(b, x, 1024, 3)
    head = _yolo_head(b, x, 5 * (classes + 5), "region")
    _nms(b, [head])
    return b.build()


@register(
    "yolov2",
    macs=29.475e9 / 2,
    params=50.96e6,
    source=(
        "darknet cfg/yolov2.cfg at 416x416 (COCO head, 425 filters): darknet reports "
        "'Total BFLOPS 29.475' = 14.74 GMACs (BFLOPs = 2 x MACs); params: weights + biases + "
        "2 per batch-norm channel of that cfg (yolov2.weights holds the same plus running stats)"
    ),
    aliases=("yolo-v2", "yolov2-416"),
    description="YOLOv2 (YOLO9000), Darknet-19, 416x416, COCO head",
)
def yolov2() -> Network:
    return build_yolov2()


# --- YOLOv3 ------------------------------------------------------------------------------------
def darknet53(b: NetBuilder, x: Tensor) -> list[Tensor]:
    """Darknet-53 trunk; returns the stride-8, -16 and -32 outputs (256, 512, 1024 channels)."""
    x = _dk(b, x, 32, 3)
    outs = []
    for c, n in ((64, 1), (128, 2), (256, 8), (512, 8), (1024, 4)):
        x = _dk(b, x, c, 3, 2)
        x = _darknet_residual(b, x, n)
        outs.append(x)
    return outs[2:]


def _yolov3_block(b: NetBuilder, x: Tensor, c: int) -> Tensor:
    """Five alternating 1x1 (c) / 3x3 (2c) convolutions ending on the 1x1 (the route point)."""
    for i in range(5):
        x = _dk(b, x, c if i % 2 == 0 else 2 * c, 1 if i % 2 == 0 else 3)
    return x


def build_yolov3(size: int = 416, classes: int = COCO_CLASSES) -> Network:
    """darknet ``cfg/yolov3.cfg``: Darknet-53 + three detection scales (13, 26, 52 at 416) joined
    top-down by 1x1 conv + 2x upsample + concat with the trunk."""
    b = NetBuilder(
        "yolov3",
        (3, size, size),
        meta={"task": "detection", "source": "darknet cfg/yolov3.cfg (Redmon & Farhadi 2018)"},
    )
    c3, c4, c5 = darknet53(b, b.input())
    filters = 3 * (classes + 5)
    heads = []
    x = c5
    for i, (c, lateral) in enumerate(((512, None), (256, c4), (128, c3))):
        if lateral is not None:
            x = _dk(b, x, c, 1)
            x = b.upsample(x, 2)
            x = b.concat(x, lateral)
        x = _yolov3_block(b, x, c)
        y = _dk(b, x, 2 * c, 3)
        heads.append(_yolo_head(b, y, filters, f"yolo{i + 1}"))
    _nms(b, heads)
    return b.build()


@register(
    "yolov3",
    macs=65.86e9 / 2,
    params=61.95e6,
    source=(
        "pjreddie.com/darknet/yolo table: YOLOv3-416 65.86 Bn (BFLOPs = 2 x MACs -> 32.93 GMACs); "
        "params 61.95 M = weight count of cfg/yolov3.cfg (COCO, 80 classes)"
    ),
    aliases=("yolo-v3", "yolov3-416"),
    description="YOLOv3, Darknet-53, 416x416, COCO, 3 scales",
)
def yolov3() -> Network:
    return build_yolov3()


# --- Tiny-YOLOv3 -------------------------------------------------------------------------------
def build_tiny_yolov3(size: int = 416, classes: int = COCO_CLASSES) -> Network:
    """darknet ``cfg/yolov3-tiny.cfg``: 7 conv + 6 max-pool trunk, two detection scales."""
    b = NetBuilder(
        "tiny-yolov3",
        (3, size, size),
        meta={"task": "detection", "source": "darknet cfg/yolov3-tiny.cfg"},
    )
    x = b.input()
    skip = x
    for i, c in enumerate((16, 32, 64, 128, 256)):
        x = _dk(b, x, c, 3)
        if i == 4:
            skip = x  # darknet layer 8: 26x26x256, routed into the second scale
        x = b.pool(x, 2, 2)
    x = _dk(b, x, 512, 3)
    x = b.pool(x, 2, 1, "same")  # size=2 stride=1 keeps 13x13
    x = _dk(b, x, 1024, 3)
    route = _dk(b, x, 256, 1)
    filters = 3 * (classes + 5)
    y = _dk(b, route, 512, 3)
    h1 = _yolo_head(b, y, filters, "yolo1")
    x = _dk(b, route, 128, 1)
    x = b.upsample(x, 2)
    x = b.concat(x, skip)
    y = _dk(b, x, 256, 3)
    h2 = _yolo_head(b, y, filters, "yolo2")
    _nms(b, [h1, h2])
    return b.build()


@register(
    "tiny-yolov3",
    macs=5.56e9 / 2,
    params=8.85e6,
    source=(
        "pjreddie.com/darknet/yolo table: YOLOv3-tiny 5.56 Bn at 416 (BFLOPs = 2 x MACs -> "
        "2.78 GMACs); params 8.85 M = weight count of cfg/yolov3-tiny.cfg (COCO)"
    ),
    aliases=("tiny-yolo", "yolov3-tiny", "tiny-yolo-v3"),
    description="Tiny-YOLOv3, 416x416, COCO, 2 scales",
)
def tiny_yolov3() -> Network:
    return build_tiny_yolov3()


# --- YOLOv4 ------------------------------------------------------------------------------------
def _csp_stage(b: NetBuilder, x: Tensor, out: int, blocks: int) -> Tensor:
    """One CSPDarknet53 stage (mish): 3x3/2 downsample, split into a 1x1 bypass and a 1x1 +
    residual path, transition 1x1, concat, 1x1 fuse. The first stage keeps full width."""
    x = _dk(b, x, out, 3, 2, act="mish")
    half = out if blocks == 1 else out // 2
    bypass = _dk(b, x, half, 1, act="mish")
    y = _dk(b, x, half, 1, act="mish")
    for _ in range(blocks):
        z = _dk(b, y, out // 2, 1, act="mish")
        z = _dk(b, z, half, 3, act="mish")
        y = b.add(y, z)
    y = _dk(b, y, half, 1, act="mish")
    x = b.concat(y, bypass)
    return _dk(b, x, out, 1, act="mish")


def _spp(b: NetBuilder, x: Tensor) -> Tensor:
    """Spatial pyramid pooling: stride-1 max-pools 5, 9, 13 concatenated with the input."""
    pools = [b.pool(x, k, 1, k // 2, name=f"spp_pool{k}") for k in (13, 9, 5)]
    return b.concat(*pools, x)


def build_yolov4(size: int = 416, classes: int = COCO_CLASSES) -> Network:
    """darknet ``cfg/yolov4.cfg``: CSPDarknet53 (mish) + SPP + PANet (leaky) + YOLOv3 heads."""
    b = NetBuilder(
        "yolov4",
        (3, size, size),
        meta={"task": "detection", "source": "darknet cfg/yolov4.cfg (Bochkovskiy et al. 2020)"},
    )
    x = _dk(b, b.input(), 32, 3, act="mish")
    feats = []
    for out, n in ((64, 1), (128, 2), (256, 8), (512, 8), (1024, 4)):
        x = _csp_stage(b, x, out, n)
        feats.append(x)
    c3, c4, c5 = feats[2:]
    # neck: SPP on the stride-32 map
    x = _dk(b, c5, 512, 1)
    x = _dk(b, x, 1024, 3)
    x = _dk(b, x, 512, 1)
    x = _spp(b, x)
    x = _dk(b, x, 512, 1)
    x = _dk(b, x, 1024, 3)
    p5 = _dk(b, x, 512, 1)
    # PANet top-down path
    x = _dk(b, p5, 256, 1)
    x = b.upsample(x, 2)
    x = b.concat(_dk(b, c4, 256, 1), x)
    p4 = _yolov3_block(b, x, 256)
    x = _dk(b, p4, 128, 1)
    x = b.upsample(x, 2)
    x = b.concat(_dk(b, c3, 128, 1), x)
    p3 = _yolov3_block(b, x, 128)
    # bottom-up path with the three heads
    filters = 3 * (classes + 5)
    heads = [_yolo_head(b, _dk(b, p3, 256, 3), filters, "yolo1")]
    x = b.concat(_dk(b, p3, 256, 3, 2), p4)
    n4 = _yolov3_block(b, x, 256)
    heads.append(_yolo_head(b, _dk(b, n4, 512, 3), filters, "yolo2"))
    x = b.concat(_dk(b, n4, 512, 3, 2), p5)
    n5 = _yolov3_block(b, x, 512)
    heads.append(_yolo_head(b, _dk(b, n5, 1024, 3), filters, "yolo3"))
    _nms(b, heads)
    return b.build()


@register(
    "yolov4",
    macs=60.137e9 / 2,
    params=64.36e6,
    source=(
        "AlexeyAB/darknet cfg/yolov4.cfg at 416x416: 'Total BFLOPS 60.137' (BFLOPs = 2 x MACs -> "
        "30.07 GMACs); params 64.36 M = weight count of that cfg (COCO)"
    ),
    aliases=("yolo-v4", "yolov4-416"),
    description="YOLOv4, CSPDarknet53 + SPP + PANet, 416x416, COCO",
)
def yolov4() -> Network:
    return build_yolov4()


# --- SSD-ResNet34 (MLPerf SSD-large) -----------------------------------------------------------
def build_ssd_resnet34(size: int = 1200, label_num: int = 81) -> Network:
    """MLPerf inference ``ssd_r34.py`` (SSD-large, COCO 1200x1200).

    Backbone: ResNet-34 conv1..layer3 with layer3's first block at stride 1 (150x150x256).
    Five extra blocks (1x1 then 3x3, ReLU, bias, no batch-norm) give 75, 38, 19, 9, 7. Every
    loc/conf head is a 3x3 convolution at stride 3, so the six maps predict on 50, 25, 13, 7, 3,
    3 grids with 4, 6, 6, 6, 4, 4 default boxes (15,130 boxes)."""
    b = NetBuilder(
        "ssd-resnet34",
        (3, size, size),
        meta={
            "task": "detection",
            "source": "MLPerf inference vision/classification_and_detection ssd_r34.py",
        },
    )
    x = resnet_stem(b, b.input())
    x = resnet_stages(b, x, 34, stages=3, strides=(1, 2, 1))[-1]
    srcs = [x]
    extra = (
        (256, 512, 2, 1),
        (256, 512, 2, 1),
        (128, 256, 2, 1),
        (128, 256, 2, 0),
        (128, 256, 1, 0),
    )
    for i, (mid, out, stride, pad) in enumerate(extra):
        y = b.conv(x, mid, 1, 1, 0, bias=True, bn=False, name=f"extra{i + 1}_1x1")
        x = b.conv(y, out, 3, stride, pad, bias=True, bn=False, name=f"extra{i + 1}_3x3")
        srcs.append(x)
    heads = []
    for i, (src, nd) in enumerate(zip(srcs, (4, 6, 6, 6, 4, 4), strict=True)):
        for kind, n in (("loc", nd * 4), ("conf", nd * label_num)):
            heads.append(_predictor(b, src, n, f"{kind}{i + 1}", kernel=3, stride=3))
    _nms(b, heads, max_boxes=200)
    return b.build()


@register(
    "ssd-resnet34",
    macs=433e9 / 2,
    params=19.97e6,
    source=(
        "MACs: MLPerf Inference paper (Reddi et al., ISCA 2020) Table I, SSD-ResNet34 1200x1200 "
        "433 GOPS/input (2 x MACs -> 216.5 GMACs). Params: count of the MLPerf reference model "
        "ssd_r34.py (ResNet-34 to layer3 8.17 M + extra blocks 3.57 M + heads 8.23 M); Table I's "
        "'36.3M' does not match the reference code"
    ),
    aliases=("ssd-r34", "ssd-large", "ssd-r", "ssd-1200"),
    description="MLPerf SSD-large: SSD with ResNet-34 backbone, 1200x1200, COCO",
)
def ssd_resnet34() -> Network:
    return build_ssd_resnet34()


# --- SSD-MobileNet-v1 (MLPerf SSD-small) -------------------------------------------------------
def build_ssd_mobilenet_v1(size: int = 300, classes: int = 91) -> Network:
    """TF object-detection ``ssd_mobilenet_v1_coco`` (MLPerf SSD-small, 300x300).

    MobileNet-v1 (ReLU6, TF SAME padding) feeds SSD from Conv2d_11_pointwise (19x19x512) and
    Conv2d_13_pointwise (10x10x1024); four extra 1x1 + 3x3/2 pairs (512, 256, 256, 128 deep)
    give 5, 3, 2, 1. Box predictors are 1x1 convolutions with 3 anchors on the first map and 6 on
    the others (1,917 boxes), 91 classes including background."""
    b = NetBuilder(
        "ssd-mobilenet-v1",
        (3, size, size),
        meta={"task": "detection", "source": "TF object detection ssd_mobilenet_v1_coco; MLPerf"},
    )
    # Imported here, not at the top: a module-level import would register the mobile family
    # before this one and reorder the zoo (``list_networks`` is in registration order).
    from npusched.models.zoo.mobile import mobilenet_v1_body

    trunk = mobilenet_v1_body(b, b.input(), padding="same", act="relu6")
    x = trunk[13]
    srcs = [trunk[11], x]
    for i, depth in enumerate((512, 256, 256, 128), start=1):
        y = b.conv(x, depth // 2, 1, 1, 0, act="relu6", name=f"extra{i}_1x1")
        x = b.conv(y, depth, 3, 2, "same", act="relu6", name=f"extra{i}_3x3")
        srcs.append(x)
    heads = []
    for i, (src, na) in enumerate(zip(srcs, (3, 6, 6, 6, 6, 6), strict=True)):
        heads.append(_predictor(b, src, na * 4, f"box{i}"))
        heads.append(_predictor(b, src, na * classes, f"cls{i}"))
    _nms(b, heads)
    return b.build()


@register(
    "ssd-mobilenet-v1",
    macs=2.47e9 / 2,
    params=6.91e6,
    source=(
        "MLPerf Inference paper (Reddi et al., ISCA 2020) Table I: SSD-MobileNet-v1 300x300, "
        "6.91 M parameters, 2.47 GOPS/input (2 x MACs -> 1.235 GMACs)"
    ),
    aliases=("ssd-mobilenet", "ssd-m", "ssd-small", "ssd-mobilenet-300"),
    description="MLPerf SSD-small: SSD with MobileNet-v1 backbone, 300x300, COCO",
)
def ssd_mobilenet_v1() -> Network:
    return build_ssd_mobilenet_v1()


# --- FCN-ResNet18 ------------------------------------------------------------------------------
def build_fcn_resnet18(height: int = 512, width: int = 1024, classes: int = 21) -> Network:
    """FCN head on a ResNet-18 trunk (output stride 32), as in NVIDIA jetson-inference's
    ``fcn-resnet18-cityscapes-1024x512``: torchvision FCNHead (3x3 512->128 + BN + ReLU,
    1x1 128->classes with bias), then bilinear upsampling to the input size."""
    b = NetBuilder(
        "fcn-resnet18",
        (3, height, width),
        meta={"task": "segmentation", "source": "torchvision FCN head on ResNet-18; Cityscapes"},
    )
    x = resnet_stem(b, b.input())
    x = resnet_stages(b, x, 18)[-1]
    x = b.conv(x, 128, 3, 1, 1, name="head_conv")
    x = _predictor(b, x, classes, "classifier")
    b.vector(x, "upsample", (classes, height, width), name="upsample")
    return b.build()


_R18_SCALE = (512 * 1024) / (224 * 224)


@register(
    "fcn-resnet18",
    macs=(1.814e9 - 0.512e6) * _R18_SCALE + 512 * 9 * 128 * 16 * 32 + 128 * 21 * 16 * 32,
    params=11.69e6 - 0.513e6 + (512 * 9 * 128 + 2 * 128) + (128 * 21 + 21),
    source=(
        "closed form (no published count): torchvision ResNet-18 (1.814 GMACs, 11.69 M params "
        "at 224x224) minus its FC, convolutions scaled by the pixel ratio 1024x512 / 224x224, "
        "plus the FCN head (3x3 512->128, 1x1 128->21) on the 16x32 stride-32 map; input "
        "1024x512 Cityscapes as jetson-inference fcn-resnet18-cityscapes-1024x512 (HaX-CoNN)"
    ),
    aliases=("fcn-r18", "fcn_resnet18"),
    description="FCN semantic segmentation on ResNet-18, 1024x512 Cityscapes (21 classes)",
)
def fcn_resnet18() -> Network:
    return build_fcn_resnet18()
