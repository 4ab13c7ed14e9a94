"""The Planaria authors' own benchmarks (``planaria/<name>``), as their artifact defines them.

Source: he-actlab/planaria.code, ``src/benchmarks/benchmarks.py`` (the layer tables their
simulator costs for MICRO 2020's evaluation). The dimensions below are the artifact's numbers,
written as data and built by our own code; nothing of theirs is copied. The artifact gives each
layer as nn_dataflow's ``ConvLayer(C_in, C_out, out_size, kernel, stride)``,
``DWConvLayer(C, C, out_size, kernel, stride)``, ``FCLayer(C_in, C_out)`` and
``PoolingLayer(C, out_size, window)``; a layer's MACs are ``out_size^2 x kernel^2 x C_in x C_out``
(depthwise: ``out_size^2 x kernel^2 x C``).

What differs from the full-size zoo networks (``resnet-50``, ``ssd-resnet34``, ...), all as the
artifact has it:

* ``planaria/ssd-resnet34``: 320 x 320 input and a truncated ResNet-34 backbone (two
  ``conv2`` and four ``conv3`` blocks) with the SSD extra layers and no heads: 4.10 GMAC
  (the zoo's MLPerf 1200 x 1200 model: 216 GMAC).
* ``planaria/yolov3``: the Darknet-53 backbone at 256 x 256, no detection heads.
* ``planaria/tiny-yolov2``: YOLOv2-tiny at 416 x 416 (VOC, 125 output channels), 8-bit
  activations and weights (``bytes_per_elem = 1``), the paper's "Tiny YOLO (2017)".
* ``planaria/gnmt``: eight fully connected encoder layers and eight decoder layers, one time
  step each, run 32 input and 32 output steps (the artifact's ``src/sweep/sweep.py``
  multiplies each layer's cycles by ``input_seq = output_seq = 32``).
* ``planaria/resnet-50``: the 49 convolutions of ResNet-50 without projection shortcuts and
  without the classifier; ``planaria/googlenet`` has no pooling branch pools; residual adds,
  concatenations and normalisation layers are not layers in the artifact and are not here.
* ``planaria/mobilenet-v1``: a 100-class classifier.

Pooling layers are kept (vector-unit layers here; the artifact's simulator charges them
nothing). Every layer reads its producer's output (the artifact's ``prevs``; where it gives
none, the previous layer), so an input's element count is the producer's output count.
EfficientNet-B0 is not in the artifact; the suite keeps the zoo's ``efficientnet-b0``.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from npusched.models.ir import Layer, LayerKind, Network, make_network
from npusched.models.zoo.registry import register

__all__ = ["ARTIFACT", "ARTIFACT_SOURCE", "artifact_network"]

ARTIFACT_SOURCE = "he-actlab/planaria.code src/benchmarks/benchmarks.py"

# A layer spec: (kind, name, C_in, C_out, out_size, kernel, stride, prevs). ``prevs`` None:
# the previous layer; () : the network input. Pool: C_in == C_out, kernel = window.
Spec = tuple[str, str, int, int, int, int, int, "tuple[str, ...] | None"]


def _c(
    name: str, cin: int, cout: int, o: int, k: int, s: int = 1, prevs: tuple[str, ...] | None = None
) -> Spec:
    return ("conv", name, cin, cout, o, k, s, prevs)


def _dw(name: str, c: int, o: int, k: int, s: int = 1) -> Spec:
    return ("dw", name, c, c, o, k, s, None)


def _fc(name: str, cin: int, cout: int) -> Spec:
    return ("fc", name, cin, cout, 1, 1, 1, None)


def _pool(name: str, c: int, o: int, k: int, prevs: tuple[str, ...] | None = None) -> Spec:
    return ("pool", name, c, c, o, k, k, prevs)


def _resnet50() -> list[Spec]:
    s: list[Spec] = [_c("conv1", 3, 64, 112, 7, 2), _pool("pool1", 64, 56, 2)]
    for stage, blocks, cmid, o in (
        (2, 3, 64, 56),
        (3, 4, 128, 28),
        (4, 6, 256, 14),
        (5, 3, 512, 7),
    ):
        cout = 4 * cmid
        for i in range(1, blocks + 1):
            if i == 1:
                cin, st = (64, 1) if stage == 2 else (2 * cmid, 2)
            else:
                cin, st = cout, 1
            s += [
                _c(f"conv{stage}_{i}_a", cin, cmid, o, 1, st),
                _c(f"conv{stage}_{i}_b", cmid, cmid, o, 3),
                _c(f"conv{stage}_{i}_c", cmid, cout, o, 1),
            ]
    return s


#: GoogLeNet's inception modules: (id, size, C_in, 1x1, 3x3 reduce, 3x3, 5x5 reduce, 5x5, pool
#: projection), the artifact's ``add_inception`` calls.
_INCEPTION = (
    ("3a", 28, 192, 64, 96, 128, 16, 32, 32),
    ("3b", 28, 256, 128, 128, 192, 32, 96, 64),
    ("4a", 14, 480, 192, 96, 208, 16, 48, 64),
    ("4b", 14, 512, 160, 112, 224, 24, 64, 64),
    ("4c", 14, 512, 128, 128, 256, 24, 64, 64),
    ("4d", 14, 512, 112, 144, 288, 32, 64, 64),
    ("4e", 14, 528, 256, 160, 320, 32, 128, 128),
    ("5a", 7, 832, 256, 160, 320, 32, 128, 128),
    ("5b", 7, 832, 384, 192, 384, 48, 128, 128),
)


def _googlenet() -> list[Spec]:
    s: list[Spec] = [
        _c("conv1", 3, 64, 112, 7, 2),
        _pool("pool1", 64, 56, 3),
        _c("conv2_3x3_reduce", 64, 64, 56, 1),
        _c("conv2_3x3", 64, 192, 56, 3),
        _pool("pool2", 192, 28, 3),
    ]
    prevs: tuple[str, ...] = ("pool2",)
    for iid, o, cin, n1, n3r, n3, n5r, n5, npool in _INCEPTION:
        p = f"inception_{iid}_"
        s += [
            _c(p + "1x1", cin, n1, o, 1, prevs=prevs),
            _c(p + "3x3_reduce", cin, n3r, o, 1, prevs=prevs),
            _c(p + "3x3", n3r, n3, o, 3),
            _c(p + "5x5_reduce", cin, n5r, o, 1, prevs=prevs),
            _c(p + "5x5", n5r, n5, o, 5),
            _c(p + "pool_proj", cin, npool, o, 1, prevs=prevs),
        ]
        prevs = (p + "1x1", p + "3x3", p + "5x5", p + "pool_proj")
        if iid == "3b":
            s.append(_pool("pool3", 480, 14, 3, prevs))
            prevs = ("pool3",)
        elif iid == "4e":
            s.append(_pool("pool4", 832, 7, 3, prevs))
            prevs = ("pool4",)
    s += [_pool("pool5", 1024, 1, 7, prevs), _fc("fc", 1024, 1000)]
    return s


#: MobileNet-v1 and SSD-MobileNet-v1 bodies: (depthwise channels, out size, stride, pointwise
#: out channels) after ``conv1``, the artifact's ``conv2-dw`` .. ``conv13`` (.. ``conv27``).
_MOBILENET = (
    (32, 112, 1, 64),
    (64, 56, 2, 128),
    (128, 56, 1, 128),
    (128, 28, 2, 256),
    (256, 28, 1, 256),
    (256, 14, 2, 512),
    (512, 14, 1, 512),
    (512, 14, 1, 512),
    (512, 14, 1, 512),
    (512, 14, 1, 512),
    (512, 14, 1, 512),
    (512, 7, 2, 1024),
    (1024, 7, 1, 1024),
)


def _mobilenet_body(first_out: int, sizes: Sequence[int], blocks: int) -> list[Spec]:
    s: list[Spec] = [_c("conv1", 3, 32, first_out, 3, 2)]
    idx = 2
    for (c, _, st, cout), o in zip(_MOBILENET[:blocks], sizes, strict=True):
        s += [_dw(f"conv{idx}-dw", c, o, 3, st), _c(f"conv{idx + 1}", c, cout, o, 1)]
        idx += 2
    return s


def _mobilenet_v1() -> list[Spec]:
    s = _mobilenet_body(112, [o for _, o, _, _ in _MOBILENET], 13)
    return [*s, _pool("pool28", 1024, 1, 7), _fc("fc29", 1024, 100)]


def _ssd_mobilenet_v1() -> list[Spec]:
    s = _mobilenet_body(160, (160, 80, 80, 40, 40, 20), 6)
    return [
        *s,
        _c("conv-fc6", 512, 1024, 10, 3, 2),
        _c("conv-fc7", 1024, 1024, 10, 1),
        _c("conv14_1", 1024, 256, 10, 1),
        _c("conv14_2", 256, 512, 5, 3, 2),
        _c("conv15_1", 512, 128, 5, 1),
        _c("conv15_2", 128, 256, 3, 3),
        _c("conv16_1", 256, 128, 3, 1),
        _c("conv16_2", 128, 256, 2, 3),
        _c("conv17_1", 256, 64, 2, 1),
        _c("conv17_2", 64, 128, 1, 3),
    ]


def _ssd_resnet34() -> list[Spec]:
    s: list[Spec] = [_c("conv1", 3, 64, 160, 7, 2), _pool("pool1", 64, 80, 2)]
    for i in (1, 2):
        s += [_c(f"conv2_{i}_a", 64, 64, 80, 3), _c(f"conv2_{i}_b", 64, 64, 80, 3)]
    for i in (1, 2, 3, 4):
        first = _c(f"conv3_{i}_a", 64, 128, 40, 3, 2)
        s += [first if i == 1 else _c(f"conv3_{i}_a", 128, 128, 40, 3)]
        s += [_c(f"conv3_{i}_b", 128, 128, 40, 3)]
    return [
        *s,
        _c("fc6_a", 128, 256, 40, 3),
        _c("fc6_b", 256, 512, 20, 3, 2),
        _c("fc7", 512, 512, 20, 1),
        _c("conv6_1", 512, 128, 20, 1),
        _c("conv6_2", 128, 256, 10, 3, 2),
        _c("conv7_1", 256, 64, 10, 1),
        _c("conv7_2", 64, 128, 5, 3, 2),
        _c("conv8_1", 128, 64, 5, 1),
        _c("conv8_2", 64, 128, 3, 3),
        _c("conv9_1", 128, 64, 3, 1),
        _c("conv9_2", 64, 128, 1, 3, 2),
    ]


def _tiny_yolov2() -> list[Spec]:
    s: list[Spec] = []
    cin, o = 3, 416
    for i, cout in enumerate((16, 32, 64, 128, 256)):
        s += [_c(f"conv{i}", cin, cout, o, 3), _pool(f"pool{i}", cout, o // 2, 2)]
        cin, o = cout, o // 2
    return [
        *s,
        _c("conv5", 256, 512, 13, 3),
        _c("conv6", 512, 1024, 13, 3),
        _c("conv7", 1024, 1024, 13, 3),
        _c("conv8", 1024, 125, 13, 1),
    ]


def _yolov3() -> list[Spec]:
    s: list[Spec] = [_c("conv1", 3, 32, 256, 3), _c("conv2", 32, 64, 128, 3, 2)]
    # (stage conv name, C_out, out size, residual blocks, block prefix)
    for down, cout, o, blocks, pre in (
        (None, 64, 128, 1, "conv3"),
        ("conv4", 128, 64, 2, "conv5"),
        ("conv6", 256, 32, 8, "conv7"),
        ("conv8", 512, 16, 8, "conv9"),
        ("conv10", 1024, 8, 4, "conv11"),
    ):
        if down is not None:
            s.append(_c(down, cout // 2, cout, o, 3, 2))
        for i in range(1, blocks + 1):
            s += [
                _c(f"{pre}_{i}_a", cout, cout // 2, o, 1),
                _c(f"{pre}_{i}_b", cout // 2, cout, o, 3),
            ]
    return s


def _gnmt() -> list[Spec]:
    enc = ((512, 512), (512, 1024), (1024, 512), *((512, 512),) * 5)
    dec = ((512, 512), (512, 1024), *((1024, 1024),) * 6)
    return [_fc(f"enc-fc{i}", a, b) for i, (a, b) in enumerate(enc, 1)] + [
        _fc(f"dec-fc{i}", a, b) for i, (a, b) in enumerate(dec, 1)
    ]


def _build(
    name: str,
    specs: Sequence[Spec],
    input_shape: tuple[int, ...],
    *,
    bytes_per_elem: int = 2,
    recurrent: bool = False,
    source: str,
) -> Network:
    """Layers from artifact specs; each reads its producers' outputs (element counts)."""
    out: dict[str, int] = {}
    layers: list[Layer] = []
    prev: tuple[str, ...] = ()
    net_in = 1
    for d in input_shape:
        net_in *= d
    for kind, nm, cin, cout, o, k, st, prevs in specs:
        srcs = prev if prevs is None else prevs
        in_elems = sum(out[p] for p in srcs) if srcs else net_in
        attrs = {"kernel": (k, k), "stride": (st, st), "artifact_out_size": o}
        # (kind, M, K, N, groups, output elements, weights) of the artifact's layer
        dims = {
            "pool": (LayerKind.POOL, 0, 0, 0, 1, cout * o * o, 0),
            "dw": (LayerKind.DWCONV, o * o, k * k, 1, cin, cin * o * o, k * k * cin),
            "fc": (LayerKind.FC, 1, cin, cout, 1, cout, cin * cout),
            "conv": (LayerKind.CONV, o * o, k * k * cin, cout, 1, cout * o * o, k * k * cin * cout),
        }[kind]
        lk, m, kk, n, groups, out_elems, weights = dims
        repeat = None
        if recurrent and lk == LayerKind.FC:
            repeat = "in" if nm.startswith("enc") else "out"
        ly = Layer(
            name=nm,
            kind=lk,
            m=m,
            k=kk,
            n=n,
            groups=groups,
            input_elems=in_elems,
            output_elems=out_elems,
            weight_elems=weights,
            bytes_per_elem=bytes_per_elem,
            inputs=srcs,
            repeat=repeat,
            attrs={} if lk == LayerKind.FC else attrs,
        )
        layers.append(ly)
        out[nm] = ly.output_elems
        prev = (nm,)
    return make_network(
        name,
        layers,
        input_shape=input_shape,
        seq_len=(32, 32) if recurrent else None,
        meta={"task": "planaria-artifact", "source": source},
    )


#: zoo name -> (artifact function, spec builder, input shape, bytes per element, recurrent).
ARTIFACT: dict[str, tuple[str, Callable[[], list[Spec]], tuple[int, ...], int, bool]] = {
    "planaria/resnet-50": ("get_resnet_50", _resnet50, (3, 224, 224), 2, False),
    "planaria/googlenet": ("get_googlenet", _googlenet, (3, 224, 224), 2, False),
    "planaria/mobilenet-v1": ("get_mobilenet_v1", _mobilenet_v1, (3, 224, 224), 2, False),
    "planaria/ssd-resnet34": ("get_ssd_resnet_34", _ssd_resnet34, (3, 320, 320), 2, False),
    "planaria/ssd-mobilenet-v1": (
        "get_ssd_mobilenet_v1",
        _ssd_mobilenet_v1,
        (3, 320, 320),
        2,
        False,
    ),
    "planaria/tiny-yolov2": ("get_yolo", _tiny_yolov2, (3, 416, 416), 1, False),
    "planaria/yolov3": ("get_yolo_v3", _yolov3, (3, 256, 256), 2, False),
    "planaria/gnmt": ("get_gnmt_encoder + get_gnmt_decoder", _gnmt, (512,), 2, True),
}


def artifact_network(name: str) -> Network:
    """Build the artifact benchmark ``name`` (a key of :data:`ARTIFACT`)."""
    fn, specs, shape, bpe, rec = ARTIFACT[name]
    return _build(
        name,
        specs(),
        shape,
        bytes_per_elem=bpe,
        recurrent=rec,
        source=f"{ARTIFACT_SOURCE} ({fn})",
    )


#: Each benchmark's MACs per inference (GNMT: 32 input + 32 output steps) and weights, summed
#: by hand from the artifact's tables with the module docstring's formulas; the zoo test holds
#: the builders to them exactly, and ``tests/test_zoo_planaria.py`` to single layers.
_FIGURES: dict[str, tuple[int, int]] = {
    "planaria/resnet-50": (3_496_263_680, 20_686_016),
    "planaria/googlenet": (1_582_671_872, 6_990_272),
    "planaria/mobilenet-v1": (567_818_752, 3_287_488),
    "planaria/ssd-resnet34": (4_062_814_208, 3_613_888),
    "planaria/ssd-mobilenet-v1": (1_104_760_832, 8_251_840),
    "planaria/tiny-yolov2": (3_485_520_896, 15_855_536),
    "planaria/yolov3": (9_284_091_904, 40_549_216),
    "planaria/gnmt": (310_378_496, 9_699_328),
}


def _register_all() -> None:
    for name, (fn, *_) in ARTIFACT.items():
        macs, weights = _FIGURES[name]

        def builder(key: str = name) -> Network:
            return artifact_network(key)

        register(
            name,
            macs=macs,
            params=weights,
            source=f"{ARTIFACT_SOURCE}, {fn} (Planaria authors' artifact; weights, no biases)",
            description=f"Planaria artifact benchmark ({fn})",
        )(builder)


_register_all()
