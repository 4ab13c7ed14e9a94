"""MLPerf Inference models not covered elsewhere: RetinaNet (ResNeXt-50-FPN, 800x800), 3D-UNet
(KiTS19, one 128^3 patch) and DLRM (Criteo Terabyte).

None of the three has a published MAC count at these sizes; as for GNMT, each reference is a
closed form written independently of the builder from the MLPerf reference implementation's
architecture (the module named in each function), and parameters are checked the same way.

* **RetinaNet** (mlcommons/training ``single_stage_detector``, used by MLPerf Inference v2.0+):
  ResNeXt-50 32x4d backbone, FPN on C3-C5 (1x1 lateral and 3x3 output convolutions with bias,
  256 channels, nearest top-down upsampling), P6/P7 by 3x3 stride-2 convolutions on P5 and
  ReLU(P6), and the shared classification and box heads (four 3x3 256 convolutions with bias and
  ReLU, then 3x3 to ``9 x 264`` class logits or ``9 x 4`` box deltas) on every level;
  264 OpenImages classes, 9 anchors, an 800x800 image. Batch-norm folded (2 per channel).
* **3D-UNet** (mlcommons/training ``image_segmentation/pytorch/model``, MLPerf Inference's
  KiTS19 model): filters 32-64-128-256-320, two 3x3x3 convolutions per level (instance norm +
  leaky ReLU; the first strided 2 on the way down), a 320-channel bottleneck, transposed 2x2x2
  stride-2 upsampling convolutions (with bias), skip concatenation, a 1x1x1 output to 3 classes.
  One 128x128x128 single-channel patch per inference (the sliding-window unit).
* **DLRM** (facebookresearch/dlrm, MLPerf's ``--max-ind-range=40000000`` Criteo Terabyte
  model): bottom MLP 13-512-256-128, 26 embedding tables of 128-wide rows (one look-up each),
  dot-product interaction of the 27 vectors (a ``27 x 128 @ 128 x 27`` activation MatMul, its
  351 strictly-lower entries kept, concatenated with the bottom output: 479), top MLP
  479-1024-1024-512-256-1 with a sigmoid. The embedding look-ups are ``embed`` layers: they read
  26 rows of 256 bytes and do no MACs (memory-bound vector layers).
"""

from __future__ import annotations

from dataclasses import replace

from npusched.models.builder import NetBuilder, Tensor
from npusched.models.ir import Network
from npusched.models.zoo.registry import register
from npusched.models.zoo.resnet import resnet_stages, resnet_stem

# --- RetinaNet -----------------------------------------------------------------------------------
RETINANET_CLASSES = 264  # MLPerf's OpenImages subset
RETINANET_ANCHORS = 9  # 3 scales x 3 aspect ratios
FPN_CH = 256


def _head(b: NetBuilder, x: Tensor, out: int, prefix: str) -> Tensor:
    for i in range(4):
        x = b.conv(x, FPN_CH, 3, 1, 1, bias=True, bn=False, name=f"{prefix}_conv{i}")
    return b.conv(x, out, 3, 1, 1, bias=True, bn=False, act=None, name=f"{prefix}_out")


def build_retinanet(size: int = 800, classes: int = RETINANET_CLASSES) -> Network:
    b = NetBuilder(
        "retinanet",
        (3, size, size),
        meta={"task": "detection", "source": "MLPerf Inference RetinaNet (ResNeXt-50-FPN)"},
    )
    x = resnet_stem(b, b.input())
    c3, c4, c5 = resnet_stages(b, x, 50, groups=32, width_per_group=4)[1:]
    lat = {
        lvl: b.conv(c, FPN_CH, 1, 1, 0, bias=True, bn=False, act=None, name=f"fpn_inner{lvl}")
        for lvl, c in ((5, c5), (4, c4), (3, c3))
    }
    tops = {5: lat[5]}
    for lvl in (4, 3):
        up = b.vector(tops[lvl + 1], "upsample", lat[lvl].shape, name=f"fpn_up{lvl}")
        tops[lvl] = b.add(lat[lvl], up, name=f"fpn_add{lvl}")
    levels = [
        b.conv(tops[lvl], FPN_CH, 3, 1, 1, bias=True, bn=False, act=None, name=f"fpn_out{lvl}")
        for lvl in (3, 4, 5)
    ]
    p6 = b.conv(levels[-1], FPN_CH, 3, 2, 1, bias=True, bn=False, act=None, name="fpn_p6")
    # P7 reads ReLU(P6) (LastLevelP6P7); the ReLU is applied as P6 is read, at no cost
    p7 = b.conv(p6, FPN_CH, 3, 2, 1, bias=True, bn=False, act=None, name="fpn_p7")
    levels += [p6, p7]
    outs = []
    for lvl, p in zip((3, 4, 5, 6, 7), levels, strict=True):
        # the head's weights are shared across levels; params counted at P3 only (see below)
        outs.append(_head(b, p, RETINANET_ANCHORS * classes, f"cls_p{lvl}"))
        outs.append(_head(b, p, RETINANET_ANCHORS * 4, f"box_p{lvl}"))
    b.vector(outs, "nms", (300, 6), name="nms")
    net = b.build()
    return _share_heads(net)


def _share_heads(net: Network) -> Network:
    """The classification and box heads are one module applied to every FPN level: their
    parameters count once (at P3); the other levels read the same weights."""
    layers = tuple(
        replace(ly, params=0, attrs={**ly.attrs, "shared_weights": ly.name[:5] + "3" + ly.name[6:]})
        if ly.name.startswith(("cls_p", "box_p")) and ly.name[5] != "3"
        else ly
        for ly in net.layers
    )
    return replace(net, layers=layers)


def retinanet_reference(size: int = 800, classes: int = RETINANET_CLASSES) -> tuple[float, float]:
    """``(MACs, params)``: the backbone from torchvision's published ResNeXt-50 32x4d figures
    (4.23 GMACs at 224 minus its 2.048 M-MAC classifier, scaled by ``(size / 224)^2``, exact for
    a fully convolutional trunk whose strides divide both sizes; 25.03 M params minus the
    2,049,000 of the classifier) and the FPN and heads in closed form."""
    s = [size // 8, size // 16, size // 32]
    s += [(s[-1] + 1) // 2, ((s[-1] + 1) // 2 + 1) // 2]
    hw = [v * v for v in s]
    c = FPN_CH
    fpn_macs = sum(h * cin * c for h, cin in zip(hw[:3], (512, 1024, 2048), strict=True))
    fpn_macs += sum(h * 9 * c * c for h in hw)  # 3x3 outputs on P3-P5, P6, P7
    head_per_pixel = 2 * 4 * 9 * c * c + 9 * c * RETINANET_ANCHORS * (classes + 4)
    macs = (4.23e9 - 2.048e6) * (size / 224) ** 2 + fpn_macs + head_per_pixel * sum(hw)
    fpn_params = sum(cin * c + c for cin in (512, 1024, 2048)) + 5 * (9 * c * c + c)
    head_params = (
        2 * 4 * (9 * c * c + c)
        + 9 * c * RETINANET_ANCHORS * (classes + 4)
        + (RETINANET_ANCHORS * (classes + 4))
    )
    return macs, 25.03e6 - 2_049_000 + fpn_params + head_params


_RN_MACS, _RN_PARAMS = retinanet_reference()


@register(
    "retinanet",
    macs=_RN_MACS,
    params=_RN_PARAMS,
    source="closed form: torchvision resnext50_32x4d (4.23 GMACs, 25.03 M params) scaled to "
    "800x800 + FPN and heads of the MLPerf reference (mlcommons/training "
    "single_stage_detector); no published count",
    aliases=("retinanet-mlperf", "retinanet-resnext50"),
    description="RetinaNet ResNeXt-50-FPN, 800x800, 264 classes (MLPerf Inference)",
)
def retinanet() -> Network:
    return build_retinanet()


# --- 3D-UNet -------------------------------------------------------------------------------------
UNET3D_FILTERS = (32, 64, 128, 256, 320)


def build_unet3d(patch: int = 128, classes: int = 3) -> Network:
    b = NetBuilder(
        "3d-unet",
        (1, patch, patch, patch),
        meta={"task": "segmentation", "source": "MLPerf Inference 3D-UNet (KiTS19)"},
    )
    f = UNET3D_FILTERS
    x = b.conv3d(b.input(), f[0], 3, name="in_conv1")
    x = b.conv3d(x, f[0], 3, name="in_conv2")
    skips = [x]
    for i, out in enumerate((*f[1:], f[-1]), 1):
        x = b.conv3d(x, out, 3, 2, 1, name=f"down{i}_conv1")
        x = b.conv3d(x, out, 3, name=f"down{i}_conv2")
        skips.append(x)
    skips.pop()  # the bottleneck's output is not a skip
    for i, out in enumerate((f[-1], *reversed(f[:-1])), 1):
        x = b.conv3d(
            x, out, 2, 2, transposed=True, bias=True, norm=False, act=None, name=f"up{i}_tconv"
        )
        x = b.concat(x, skips.pop(), name=f"up{i}_concat")
        x = b.conv3d(x, out, 3, name=f"up{i}_conv1")
        x = b.conv3d(x, out, 3, name=f"up{i}_conv2")
    b.conv3d(x, classes, 1, 1, 0, bias=True, norm=False, act=None, name="out_conv")
    return b.build()


def unet3d_reference(patch: int = 128, classes: int = 3) -> tuple[float, float]:
    """``(MACs, params)`` in closed form from the MLPerf reference's layer list (see module
    docstring): ``27 C_in C_out`` MACs per output voxel for a 3x3x3 convolution, ``8 C_in C_out``
    per input voxel for a 2x2x2 transposed one; instance norm 2 per channel."""
    f = UNET3D_FILTERS
    macs = params = 0

    def conv(
        vox: int, cin: int, cout: int, k: int = 27, bias: bool = False, norm: bool = True
    ) -> None:
        nonlocal macs, params
        macs += vox * k * cin * cout
        params += k * cin * cout + (cout if bias else 0) + (2 * cout if norm else 0)

    sizes = [patch // 2**i for i in range(6)]  # 128, 64, 32, 16, 8, 4
    conv(sizes[0] ** 3, 1, f[0])
    conv(sizes[0] ** 3, f[0], f[0])
    downs = (*f[1:], f[-1])
    cin = f[0]
    for i, out in enumerate(downs, 1):
        conv(sizes[i] ** 3, cin, out)
        conv(sizes[i] ** 3, out, out)
        cin = out
    ups = (f[-1], *reversed(f[:-1]))
    for j, out in enumerate(ups):
        level = 5 - j  # input level of the upsampling
        conv(sizes[level] ** 3, cin, out, k=8, bias=True, norm=False)
        conv(sizes[level - 1] ** 3, 2 * out, out)
        conv(sizes[level - 1] ** 3, out, out)
        cin = out
    conv(sizes[0] ** 3, f[0], classes, k=1, bias=True, norm=False)
    return float(macs), float(params)


_U3_MACS, _U3_PARAMS = unet3d_reference()


@register(
    "3d-unet",
    macs=_U3_MACS,
    params=_U3_PARAMS,
    source="closed form from the MLPerf reference Unet3D (mlcommons/training "
    "image_segmentation/pytorch/model/unet3d.py, layers.py) at one 128^3 patch; no published "
    "count",
    aliases=("unet3d", "3d-unet-kits19"),
    description="3D-UNet (KiTS19), one 128x128x128 patch (MLPerf Inference)",
)
def unet3d() -> Network:
    return build_unet3d()


# --- DLRM ----------------------------------------------------------------------------------------
#: Criteo Terabyte table sizes with ``--max-ind-range=40000000`` (facebookresearch/dlrm,
#: ``dlrm_s_pytorch.py`` / MLPerf's ``run_and_time.sh``).
DLRM_TABLES = (
    39884406,
    39043,
    17289,
    7420,
    20263,
    3,
    7120,
    1543,
    63,
    38532951,
    2953546,
    403346,
    10,
    2208,
    11938,
    155,
    4,
    976,
    14,
    39979771,
    25641295,
    39664984,
    585935,
    12972,
    108,
    36,
)
DLRM_DIM = 128
DLRM_BOTTOM = (13, 512, 256, 128)
DLRM_TOP = (1024, 1024, 512, 256, 1)


def build_dlrm() -> Network:
    b = NetBuilder(
        "dlrm",
        (13,),
        meta={"task": "recommendation", "source": "MLPerf Inference DLRM (Criteo Terabyte)"},
    )
    x = b.input()
    for i, width in enumerate(DLRM_BOTTOM[1:]):
        x = b.fc(x, width, act="relu", name=f"bot_fc{i}")
    ids = b.input((len(DLRM_TABLES),))
    embs = [
        b.embedding(ids, rows, DLRM_DIM, lookups=1, pooled=True, name=f"emb{t}")
        for t, rows in enumerate(DLRM_TABLES)
    ]
    n_vec = len(DLRM_TABLES) + 1
    z = b.concat(x, *embs, name="interact_stack")
    dots = b.head_matmul(
        [z],
        n_vec,
        DLRM_DIM,
        n_vec,
        groups=1,
        out_shape=(n_vec, n_vec),
        name="interact_dot",
        attrs={"op": "z.z^t"},
    )
    tri = b.vector(dots, "tril", (n_vec * (n_vec - 1) // 2,), name="interact_tril")
    x = b.concat(x, tri, name="interact_concat")
    for i, width in enumerate(DLRM_TOP):
        last = i == len(DLRM_TOP) - 1
        x = b.fc(x, width, act="sigmoid" if last else "relu", name=f"top_fc{i}")
    return b.build()


def dlrm_reference() -> tuple[float, float]:
    """``(MACs, params)``: MLPs (weights + biases), the ``27 x 27 x 128`` interaction and
    ``sum(tables) x 128`` embedding parameters."""
    n_vec = len(DLRM_TABLES) + 1
    top = (DLRM_DIM + n_vec * (n_vec - 1) // 2, *DLRM_TOP)
    mlp = [(DLRM_BOTTOM[i], DLRM_BOTTOM[i + 1]) for i in range(3)]
    mlp += [(top[i], top[i + 1]) for i in range(len(top) - 1)]
    macs = sum(a * c for a, c in mlp) + n_vec * n_vec * DLRM_DIM
    params = sum(a * c + c for a, c in mlp) + sum(DLRM_TABLES) * DLRM_DIM
    return float(macs), float(params)


_DL_MACS, _DL_PARAMS = dlrm_reference()


@register(
    "dlrm",
    macs=_DL_MACS,
    params=_DL_PARAMS,
    source="closed form from the MLPerf reference (facebookresearch/dlrm, Criteo Terabyte, "
    "--max-ind-range=40M: 26 tables, 128-wide rows; ~24 B parameters, almost all embeddings)",
    aliases=("dlrm-mlperf", "dlrm-terabyte"),
    description="DLRM (MLPerf, Criteo Terabyte): MLPs + 26 embedding look-ups",
)
def dlrm() -> Network:
    return build_dlrm()
