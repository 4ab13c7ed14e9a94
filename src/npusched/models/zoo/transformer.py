"""Transformers: BERT-base/large (Devlin et al. 2019), ViT-B/16, ViT-L/16 (Dosovitskiy et al.
2021), DeiT-S (Touvron et al. 2021), Swin-T (Liu et al. 2021), GPT-2 124M (Radford et al. 2019)
and Llama-3.2-1B (Meta 2024, grouped-query attention).

Conventions shared by the builders below (activations are ``(T, F)`` sequences):

* **Attention** is a fused QKV projection (one FC, ``d -> (H + 2 H_kv) * d_h``), ``Q.K^T`` and
  ``P.V`` as per-head activation x activation MatMuls (:meth:`NetBuilder.head_matmul`, one group
  per key/value head, the ``H / H_kv`` query heads that share it stacked into ``M``; the cost
  model costs them ``batch x groups`` separate GEMMs), a softmax over the keys, and the output
  projection. The ``1 / sqrt(d_h)`` scale, masks and rotary embeddings are vector ops (the scale
  and mask fuse into the softmax; RoPE is its own ``rope`` layer).
* **Norms and GELU.** Layer norm / RMS norm are vector layers (:meth:`NetBuilder.layernorm`);
  GELU, SiLU/SwiGLU and tanh are fused into the FC that produces them (``attrs["post"]``), the
  convention of the CNNs' fused activations (PREMA Sec. IV-B). Norms and softmax are costed
  like every ``VECTOR_OP`` (PREMA Sec. II-B): one element per vector lane per cycle over the
  layer's elements; PREMA gives no per-operation pass counts, so their reductions (mean,
  variance, max, sum) are not charged extra passes.
* **Embeddings** are ``embed`` layers (bytes, no MACs). A table tied to the output projection
  (GPT-2, Llama-3.2-1B) counts its parameters once, at the output projection.
* **Sequence lengths are build-time.** An encoder's sequence length sets ``M`` of every layer
  (and ``N`` / ``K`` of the attention MatMuls, quadratically), so it is a builder argument
  (``build_bert(seq_len=...)``); the zoo registers MLPerf's 384 for BERT and the 197 tokens of
  a 224x224 image for the ViTs. ``get_network("bert-base@128")`` (any zoo name, config or
  CLI argument) builds BERT at another length, 1..512; a workload mixing lengths lists each
  length as its own network (the engine compiles one profile per network).

Decoders: prefill and per-token decode steps with a K/V cache
-------------------------------------------------------------
GPT-2 and Llama-3.2-1B run a **prefill** over the ``P``-token prompt (layers without
``repeat``, ``M = P``; it writes the K/V cache and emits the first output token) and then one
**decode step** per further output token: the same layers at ``M = 1`` tagged ``repeat="out"``,
so :meth:`Network.expand` repeats the step ``seq_out`` times, like the RNN decoders. The decode
step's attention reads the K/V cache: its ``Q.K^T`` and ``P.V`` MatMuls have the cache as their
``K x N`` operand, ``kv_len x d_h`` per key/value head, so the bytes the step loads grow by
``2 * L * H_kv * d_h * width`` per position (:func:`kv_cache_bytes`).

**How the cost model sees it.** The IR has one fixed shape per layer, so the step is built at
one cache length ``kv_len`` (a builder argument, :func:`build_decoder`). The zoo network sizes it
at the **mean** cache length of its default output length, ``P + (T + 1) // 2`` for decode
steps reading ``P + 1 .. P + T`` positions (``T`` = default ``seq_out``): MACs and K/V bytes are
linear in the position, so the total over the default ``T`` steps is the exact sum (less half a
position per step when ``T`` is even: 0.004% of GPT-2's MACs at the defaults). For another
``seq_out`` the engine repeats that same step, so the attention part scales linearly instead of
quadratically in ``seq_out``: at the defaults (``P = 128``, ``T = 128``) attention is 2.8%
(GPT-2) and 1.0% (Llama) of a step's MACs, so a step at position ``p`` is under- or over-costed
by about ``2.8% * (p - 192) / 192`` for GPT-2. Build the network at another ``kv_len``
(:func:`build_decoder`) to cost long generations at their own mean position.
"""

from __future__ import annotations

from dataclasses import dataclass, replace

from npusched.errors import ModelError
from npusched.models.builder import NetBuilder, Tensor
from npusched.models.ir import LayerKind, Network
from npusched.models.zoo.registry import register


# --- shared blocks -------------------------------------------------------------------------------
def attention(
    b: NetBuilder,
    x: Tensor,
    heads: int,
    prefix: str,
    *,
    kv_heads: int | None = None,
    head_dim: int | None = None,
    kv_len: int | None = None,
    bias: bool = True,
    rope: bool = False,
    windows: int = 1,
    repeat: str | None = None,
) -> Tensor:
    """Multi-head (or grouped-query) self-attention over ``x`` of shape ``(T, d)``.

    ``kv_len`` is the number of keys each query attends to (``T`` for an encoder or a prefill;
    the cache length for a decode step). ``windows`` splits the ``T`` rows into independent
    attention windows (Swin's windows: ``T / windows`` tokens each). Returns ``(T, d)``.
    """
    t, d = x.shape
    kvh = heads if kv_heads is None else kv_heads
    hd = d // heads if head_dim is None else head_dim
    if heads % kvh or t % windows:
        raise ModelError(f"{b.name}: {heads} heads / {kvh} kv heads / {windows} windows of {t}")
    rows = t // windows
    keys = rows if kv_len is None else kv_len
    qkv = b.fc(x, (heads + 2 * kvh) * hd, bias=bias, name=f"{prefix}_qkv", repeat=repeat)
    if rope:
        qkv = b.vector(qkv, "rope", name=f"{prefix}_rope", repeat=repeat)
    q_per_kv = heads // kvh
    score_shape = (windows * kvh * q_per_kv * rows, keys)
    s = b.head_matmul(
        [qkv],
        q_per_kv * rows,
        hd,
        keys,
        groups=windows * kvh,
        out_shape=score_shape,
        name=f"{prefix}_qk",
        repeat=repeat,
        attrs={"op": "q.k^t", "kv_len": keys},
    )
    p = b.softmax(s, name=f"{prefix}_softmax", repeat=repeat)
    ctx = b.head_matmul(
        [p, qkv],
        q_per_kv * rows,
        keys,
        hd,
        groups=windows * kvh,
        out_shape=(t, heads * hd),
        name=f"{prefix}_pv",
        repeat=repeat,
        attrs={"op": "p.v", "kv_len": keys},
    )
    return b.fc(ctx, d, bias=bias, name=f"{prefix}_proj", repeat=repeat)


def encoder_block(
    b: NetBuilder,
    x: Tensor,
    heads: int,
    ff: int,
    prefix: str,
    *,
    pre_norm: bool,
    act: str = "gelu",
    windows: int = 1,
) -> Tensor:
    """One transformer encoder block: attention and a 2-layer MLP, each with a residual add.

    ``pre_norm``: norm before each sub-block (ViT, Swin, GPT) or after the residual (BERT)."""
    d = x.shape[-1]
    y = b.layernorm(x, name=f"{prefix}_ln1") if pre_norm else x
    y = attention(b, y, heads, f"{prefix}_attn", windows=windows)
    x = b.add(x, y, name=f"{prefix}_add1")
    if not pre_norm:
        x = b.layernorm(x, name=f"{prefix}_ln1")
    y = b.layernorm(x, name=f"{prefix}_ln2") if pre_norm else x
    y = b.fc(y, ff, act=act, name=f"{prefix}_fc1")
    y = b.fc(y, d, name=f"{prefix}_fc2")
    x = b.add(x, y, name=f"{prefix}_add2")
    if not pre_norm:
        x = b.layernorm(x, name=f"{prefix}_ln2")
    return x


def encoder_macs(layers: int, d: int, ff: int, tokens: int, keys: int | None = None) -> int:
    """Closed-form MACs of ``layers`` encoder blocks over ``tokens`` rows attending to ``keys``
    (default ``tokens``): per token ``4 d^2`` (QKV, output projection) ``+ 2 d ff`` (MLP)
    ``+ 2 keys d`` (``Q.K^T`` and ``P.V``) - Kaplan et al. 2020, Table 1, with ``P.V`` counted."""
    k = tokens if keys is None else keys
    return layers * tokens * (4 * d * d + 2 * d * ff + 2 * k * d)


def encoder_params(layers: int, d: int, ff: int) -> int:
    """Closed-form parameters of ``layers`` encoder blocks: ``4 (d^2 + d) + 2 d ff + ff + d``
    plus two layer norms (``4 d``) each."""
    return layers * (4 * (d * d + d) + 2 * d * ff + ff + d + 4 * d)


# --- BERT ----------------------------------------------------------------------------------------
BERT_VOCAB = 30522  # WordPiece, uncased (Devlin et al. 2019)
BERT_MAX_POS = 512
BERT_SEQ = 384  # MLPerf Inference SQuAD v1.1 max_seq_length


def build_bert(
    name: str, layers: int, d: int, heads: int, *, seq_len: int = BERT_SEQ, meta_note: str = ""
) -> Network:
    """BERT encoder with MLPerf's SQuAD head (a per-token FC to 2 logits: answer start / end).

    Embeddings: word (``30522 x d``), position (``512 x d``) and segment (``2 x d``) look-ups,
    summed, layer norm. Post-norm encoder blocks, GELU MLP of ``4 d``. No pooler (the SQuAD
    model does not use it). ``seq_len`` tokens per request (1..512)."""
    if not 1 <= seq_len <= BERT_MAX_POS:
        raise ModelError(f"{name}: seq_len must be in 1..{BERT_MAX_POS}, got {seq_len}")
    b = NetBuilder(
        name,
        (seq_len,),
        meta={
            "task": "question answering",
            "source": "Devlin et al. 2019",
            "seq_len": seq_len,
            "note": meta_note,
        },
    )
    ids = b.input()
    we = b.embedding(ids, BERT_VOCAB, d, name="word_embed")
    pe = b.embedding(ids, BERT_MAX_POS + 2, d, lookups=2 * seq_len, name="pos_seg_embed")
    x = b.add(we, pe, name="embed_add")
    x = b.layernorm(x, name="embed_ln")
    for i in range(layers):
        x = encoder_block(b, x, heads, 4 * d, f"l{i}", pre_norm=False)
    b.fc(x, 2, name="qa_outputs")
    return b.build()


def bert_reference(layers: int, d: int, seq_len: int) -> tuple[float, float]:
    """Closed-form ``(MACs, params)`` of :func:`build_bert` (encoder, embeddings, SQuAD head)."""
    macs = encoder_macs(layers, d, 4 * d, seq_len) + seq_len * d * 2
    params = (
        encoder_params(layers, d, 4 * d) + (BERT_VOCAB + BERT_MAX_POS + 2) * d + 2 * d + 2 * d + 2
    )
    return float(macs), float(params)


_BERT_SRC = (
    "params: Devlin et al. 2019, Sec. 3 (BERT-BASE 110M, BERT-LARGE 340M); MACs: closed form "
    "at MLPerf's 384 tokens (Kaplan et al. 2020 Table 1 per-token counts with P.V; no published "
    "count at 384)"
)


@register(
    "bert-base",
    macs=bert_reference(12, 768, BERT_SEQ)[0],
    params=110e6,
    source=_BERT_SRC,
    aliases=("bert_base", "bert"),
    description="BERT-base (12 x 768, 12 heads) with the SQuAD head, 384 tokens",
    variant=lambda name, seq: build_bert(name, 12, 768, 12, seq_len=seq),
    variant_range=(1, BERT_MAX_POS),
)
def bert_base() -> Network:
    return build_bert("bert-base", 12, 768, 12)


@register(
    "bert-large",
    macs=bert_reference(24, 1024, BERT_SEQ)[0],
    params=340e6,
    source=_BERT_SRC + "; MLPerf Inference's BERT-Large SQuAD model",
    aliases=("bert_large", "bert-mlperf"),
    description="BERT-large (24 x 1024, 16 heads) with the SQuAD head, 384 tokens (MLPerf)",
    variant=lambda name, seq: build_bert(name, 24, 1024, 16, seq_len=seq),
    variant_range=(1, BERT_MAX_POS),
)
def bert_large() -> Network:
    return build_bert("bert-large", 24, 1024, 16)


# --- ViT / DeiT ----------------------------------------------------------------------------------
def build_vit(
    name: str,
    layers: int,
    d: int,
    heads: int,
    *,
    patch: int = 16,
    size: int = 224,
    num_classes: int = 1000,
    source: str = "",
) -> Network:
    """Vision transformer: ``patch x patch`` stride-``patch`` convolution to ``d`` (with bias),
    a class token and learned position embeddings (``(N + 1) x d``), pre-norm encoder blocks
    (MLP ``4 d``, GELU), final layer norm and a linear head on the class token."""
    b = NetBuilder(name, (3, size, size), meta={"task": "classification", "source": source})
    x = b.conv(b.input(), d, patch, patch, 0, bias=True, bn=False, act=None, name="patch_embed")
    _, h, w = x.shape
    tokens = h * w + 1
    x = b.vector(x, "cls_pos_embed", (tokens, d), params=d + tokens * d, name="cls_pos_embed")
    for i in range(layers):
        x = encoder_block(b, x, heads, 4 * d, f"l{i}", pre_norm=True)
    x = b.layernorm(x, name="ln_final")
    x = b.vector(x, "cls_token", (d,), name="cls_token")
    b.fc(x, num_classes, name="head")
    return b.build()


_TV_VIT = "torchvision model table ({}: {} GFLOPS = GMACs, {} params)"


@register(
    "vit-b16",
    macs=17.56e9,
    params=86.57e6,
    source=_TV_VIT.format("vit_b_16", 17.56, "86.57 M") + "; Dosovitskiy et al. 2021 Table 1",
    aliases=("vit-b/16", "vit_b_16", "vit-base"),
    description="ViT-B/16 at 224x224 (197 tokens)",
)
def vit_b16() -> Network:
    return build_vit("vit-b16", 12, 768, 12, source="Dosovitskiy et al. 2021, ViT-Base/16")


@register(
    "vit-l16",
    macs=61.55e9,
    params=304.33e6,
    source=_TV_VIT.format("vit_l_16", 61.55, "304.33 M") + "; Dosovitskiy et al. 2021 Table 1",
    aliases=("vit-l/16", "vit_l_16", "vit-large"),
    description="ViT-L/16 at 224x224 (197 tokens)",
)
def vit_l16() -> Network:
    return build_vit("vit-l16", 24, 1024, 16, source="Dosovitskiy et al. 2021, ViT-Large/16")


@register(
    "deit-s",
    macs=4.6e9,
    params=22e6,
    source="Touvron et al. 2021 (DeiT), Table 1: DeiT-S 22 M params, 4.6 GFLOPs (= GMACs)",
    aliases=("deit_small", "deit-small"),
    description="DeiT-S (ViT-S/16: 12 x 384, 6 heads) at 224x224",
)
def deit_s() -> Network:
    return build_vit("deit-s", 12, 384, 6, source="Touvron et al. 2021, DeiT-S")


# --- Swin-T --------------------------------------------------------------------------------------
SWIN_T_DEPTHS = (2, 2, 6, 2)
SWIN_T_HEADS = (3, 6, 12, 24)


def build_swin(
    name: str,
    *,
    embed: int = 96,
    depths: tuple[int, ...] = SWIN_T_DEPTHS,
    heads: tuple[int, ...] = SWIN_T_HEADS,
    window: int = 7,
    size: int = 224,
    num_classes: int = 1000,
) -> Network:
    """Swin transformer (Liu et al. 2021): 4x4 patch embedding (+ layer norm), stages of
    (shifted-)window attention blocks over ``window x window`` windows (one attention group per
    window and head; the relative position bias table, ``(2w-1)^2`` per head, and the shift
    mask fuse into the softmax), patch merging (2x2 neighbours concatenated, layer norm,
    ``4C -> 2C`` linear without bias) between stages, final norm, average pool, linear head."""
    b = NetBuilder(
        name, (3, size, size), meta={"task": "classification", "source": "Liu et al. 2021, Swin-T"}
    )
    x = b.conv(b.input(), embed, 4, 4, 0, bias=True, bn=False, act=None, name="patch_embed")
    c, h, w = x.shape
    x = b.vector(x, "to_tokens", (h * w, c), name="to_tokens")
    x = b.layernorm(x, name="patch_ln")
    bias_tab = (2 * window - 1) ** 2
    for s, (depth, nh) in enumerate(zip(depths, heads, strict=True)):
        if s > 0:
            x = b.vector(x, "patch_merge", (h * w // 4, 4 * c), name=f"s{s}_merge")
            h, w = h // 2, w // 2
            x = b.layernorm(x, name=f"s{s}_merge_ln")
            x = b.fc(x, 2 * c, bias=False, name=f"s{s}_reduce")
            c *= 2
        n_win = (h // window) * (w // window)
        for i in range(depth):
            p = f"s{s}_b{i}"
            y = b.layernorm(x, name=f"{p}_ln1")
            if i % 2:
                y = b.vector(y, "cyclic_shift", name=f"{p}_shift")
            # the window partition carries the relative position bias table's parameters
            # (the bias itself is added to the scores inside the softmax)
            y = b.vector(y, "window_partition", params=bias_tab * nh, name=f"{p}_window")
            y = attention(b, y, nh, f"{p}_attn", windows=n_win)
            x = b.add(x, y, name=f"{p}_add1")
            y = b.layernorm(x, name=f"{p}_ln2")
            y = b.fc(y, 4 * c, act="gelu", name=f"{p}_fc1")
            y = b.fc(y, c, name=f"{p}_fc2")
            x = b.add(x, y, name=f"{p}_add2")
    x = b.layernorm(x, name="ln_final")
    x = b.vector(x, "avgpool", (c,), name="avgpool")
    b.fc(x, num_classes, name="head")
    return b.build()


@register(
    "swin-t",
    macs=4.49e9,
    params=28.29e6,
    source="torchvision model table (swin_t: 4.49 GFLOPS = GMACs, 28.29 M params); "
    "Liu et al. 2021 Table 1 (28 M, 4.5 G)",
    aliases=("swin_t", "swin-tiny"),
    description="Swin-T at 224x224, window 7",
)
def swin_t() -> Network:
    return build_swin("swin-t")


# --- decoders: GPT-2 and Llama-3.2-1B -----------------------------------------------------------
DECODER_SEQ = (128, 128)  # (prompt tokens, output tokens after the prefill's first)


def default_kv_len(prompt: int, out: int) -> int:
    """Mean cache length read by the decode steps ``1..out`` (``prompt + j`` at step ``j``),
    rounded down to a whole position: ``prompt + (out + 1) // 2`` (the exact mean is
    ``prompt + (out + 1) / 2``, half a position more when ``out`` is even)."""
    return prompt + (out + 1) // 2


@dataclass(frozen=True)
class DecoderConfig:
    """A decoder-only LM's shape: ``layers`` blocks of width ``d``, ``heads`` query heads and
    ``kv_heads`` key/value heads (grouped-query attention when fewer), MLP width ``ff``,
    vocabulary ``vocab``, ``max_pos`` learned positions (0: rotary), ``llama`` style or GPT-2."""

    layers: int
    d: int
    heads: int
    kv_heads: int
    ff: int
    vocab: int
    max_pos: int = 0
    llama: bool = False


def build_decoder(
    name: str,
    cfg: DecoderConfig,
    *,
    seq_len: tuple[int, int] = DECODER_SEQ,
    kv_len: int | None = None,
    source: str = "",
) -> Network:
    """A decoder-only LM: prefill over ``seq_len[0]`` prompt tokens, then a decode step
    (``repeat="out"``, ``M = 1``) that reads a K/V cache of ``kv_len`` positions (default
    :func:`default_kv_len`; see the module docstring).

    GPT-2 style (``cfg.llama`` false): learned position embeddings (``max_pos x d``), pre-norm
    layer norms, biases, GELU MLP. Llama style: RMS norms, rotary embeddings, no biases, SwiGLU
    MLP (gate and up projections fused into one ``d -> 2 ff`` FC, the SiLU-gated product fused
    into it, ``ff -> d`` down projection). Both tie the output projection to the word
    embedding (parameters counted once, at the prefill's output projection)."""
    layers, d, heads, kv_heads, ff, vocab = (
        cfg.layers,
        cfg.d,
        cfg.heads,
        cfg.kv_heads,
        cfg.ff,
        cfg.vocab,
    )
    max_pos, llama = cfg.max_pos, cfg.llama
    prompt, out = seq_len
    kv = default_kv_len(prompt, out) if kv_len is None else kv_len
    if kv < 1:
        raise ModelError(f"{name}: kv_len must be >= 1, got {kv}")
    hd = d // heads
    b = NetBuilder(
        name,
        (prompt,),
        seq_len=seq_len,
        meta={
            "task": "text generation",
            "source": source,
            "kv_len": kv,
            "kv_bytes_per_position": 2 * layers * kv_heads * hd * 2,
        },
    )

    def stack(x: Tensor, tag: str, keys: int, repeat: str | None) -> Tensor:
        for i in range(layers):
            p = f"{tag}_l{i}"
            y = b.layernorm(x, rms=llama, name=f"{p}_ln1", repeat=repeat)
            y = attention(
                b,
                y,
                heads,
                f"{p}_attn",
                kv_heads=kv_heads,
                kv_len=keys,
                bias=not llama,
                rope=llama,
                repeat=repeat,
            )
            x = b.vector([x, y], "add", name=f"{p}_add1", repeat=repeat)
            y = b.layernorm(x, rms=llama, name=f"{p}_ln2", repeat=repeat)
            if llama:
                y = b.fc(y, 2 * ff, bias=False, act="swiglu", name=f"{p}_gate_up", repeat=repeat)
                y = b.vector(y, "swiglu", (y.shape[0], ff), name=f"{p}_swiglu", repeat=repeat)
                y = b.fc(y, d, bias=False, name=f"{p}_down", repeat=repeat)
            else:
                y = b.fc(y, ff, act="gelu", name=f"{p}_fc1", repeat=repeat)
                y = b.fc(y, d, name=f"{p}_fc2", repeat=repeat)
            x = b.vector([x, y], "add", name=f"{p}_add2", repeat=repeat)
        return b.layernorm(x, rms=llama, name=f"{tag}_ln_final", repeat=repeat)

    def embed(ids: Tensor, tag: str, repeat: str | None) -> Tensor:
        x = b.embedding(ids, vocab, d, params=0, name=f"{tag}_embed", repeat=repeat)
        if not llama:
            pos = b.embedding(
                ids,
                max_pos,
                d,
                params=max_pos * d if tag == "prefill" else 0,
                name=f"{tag}_pos_embed",
                repeat=repeat,
            )
            x = b.vector([x, pos], "add", name=f"{tag}_embed_add", repeat=repeat)
        return x

    # prefill: the prompt, its K/V written to the cache, logits of the last position only
    x = stack(embed(b.input(), "prefill", None), "prefill", prompt, None)
    x = b.vector(x, "last_token", (1, d), name="prefill_last")
    logits = b.fc(x, vocab, bias=False, name="prefill_lm_head")
    tok = b.vector(logits, "sample", (1,), name="prefill_sample")
    # decode step: one token, attends to the cache
    x = stack(embed(tok, "decode", "out"), "decode", kv, "out")
    lm = b.fc(x, vocab, bias=False, name="lm_head", repeat="out")
    b.vector(lm, "sample", (1,), name="decode_sample", repeat="out")
    net = b.build()
    # The decode step runs the prefill's weights: its parameters are counted once, there.
    layers_ = tuple(
        replace(ly, params=0, attrs={**ly.attrs, "shared_weights": _prefill_twin(ly.name)})
        if ly.repeat == "out" and ly.params
        else ly
        for ly in net.layers
    )
    return replace(net, layers=layers_)


def _prefill_twin(name: str) -> str:
    """The prefill layer whose weights a decode-step layer reuses."""
    return "prefill_lm_head" if name == "lm_head" else name.replace("decode_", "prefill_", 1)


def decoder_reference(cfg: DecoderConfig, seq_len: tuple[int, int] = DECODER_SEQ) -> float:
    """Closed-form MACs of a prompt of ``P`` tokens plus ``T`` decode steps, step ``j`` reading
    ``P + j`` cached positions (the exact sum, not the mean-length step the IR uses)."""
    layers, d, heads, kv_heads, ff, vocab = (
        cfg.layers,
        cfg.d,
        cfg.heads,
        cfg.kv_heads,
        cfg.ff,
        cfg.vocab,
    )
    llama = cfg.llama
    p, t = seq_len
    hd = d // heads
    proj = d * (heads + 2 * kv_heads) * hd + heads * hd * d
    mlp = 3 * d * ff if llama else 2 * d * ff
    per_token = layers * (proj + mlp)
    attn_per_key = layers * 2 * heads * hd  # Q.K^T and P.V per query token per key
    prefill = p * per_token + p * p * attn_per_key + d * vocab
    decode = t * (per_token + d * vocab) + attn_per_key * (t * p + t * (t + 1) // 2)
    return float(prefill + decode)


def kv_cache_bytes(network: Network) -> int:
    """Bytes of K/V cache the decode step reads: the ``K x N`` operands of its attention
    MatMuls (keys for ``Q.K^T``, values for ``P.V``) over all layers and key/value heads."""
    total = 0
    for ly in network.layers:
        if ly.kind == LayerKind.MATMUL and ly.repeat == "out":
            total += ly.groups * ly.k * ly.n * ly.bytes_per_elem
    return total


GPT2 = DecoderConfig(layers=12, d=768, heads=12, kv_heads=12, ff=3072, vocab=50257, max_pos=1024)
LLAMA_1B = DecoderConfig(layers=16, d=2048, heads=32, kv_heads=8, ff=8192, vocab=128256, llama=True)


@register(
    "gpt2",
    macs=decoder_reference(GPT2),
    params=124.44e6,
    source="params: Hugging Face gpt2 (124,439,808; Radford et al. 2019, the 117M/124M model); "
    "MACs: closed form, 128-token prompt + 128 decode steps over a growing K/V cache",
    aliases=("gpt-2", "gpt2-small"),
    description="GPT-2 124M: prefill of 128 tokens, per-token decode steps (seq_out)",
)
def gpt2() -> Network:
    return build_decoder("gpt2", GPT2, source="Radford et al. 2019")


@register(
    "llama-3.2-1b",
    macs=decoder_reference(LLAMA_1B),
    params=1.23e9,
    source="params: Meta Llama 3.2 model card (1.23 B; 1,235,814,400 with tied embeddings); "
    "MACs: closed form, 128-token prompt + 128 decode steps over a growing K/V cache",
    aliases=("llama-1b", "llama3.2-1b"),
    description="Llama-3.2-1B (16 x 2048, 32 heads, 8 KV heads): prefill + decode steps",
)
def llama_3_2_1b() -> Network:
    return build_decoder("llama-3.2-1b", LLAMA_1B, source="Meta Llama 3.2")
