"""Recurrent networks: GNMT (MLPerf and Wu et al. 2016) and PREMA's four LSTM RNNs
(RNN-SA, RNN-MT1/2, RNN-ASR).

Every recurrent layer describes **one time step** (``NetBuilder.recurrent``); layers that run
once per encoder step carry ``repeat="in"``, per decoder step ``repeat="out"`` (embedding look-up,
attention, output projection and softmax included), so :meth:`Network.expand` unrolls them with
the request's sequence lengths and ``total_macs(seq_in, seq_out)`` is linear in each length.

Conventions shared by the builders below:

* An embedding look-up is a vector op (a gather, no MACs) whose table counts as parameters.
* An LSTM step is one GEMM ``[x, h] @ W`` with ``K = input + hidden``, ``N = 4 * hidden`` and a
  ``4 * hidden`` bias; parameters per layer ``4 * (input + hidden + 1) * hidden``.
* A bidirectional layer is two cells per step (forward and backward); their cost is the same as
  running the backward pass after the forward one, which is what the hardware does.
* Attention over the encoder memory is sized at the network's default input length (the IR has
  fixed GEMM shapes); it is about 1% of a decoder step or less for every network here.
* Decoding is greedy (one hypothesis); a beam of ``k`` multiplies decoder work by ``k``.
"""

from __future__ import annotations

from npusched.models.builder import NetBuilder, Tensor
from npusched.models.ir import Network
from npusched.models.zoo.registry import register


def lstm_params(inp: int, hidden: int) -> int:
    """Closed-form parameters of one LSTM layer: ``4 * (input + hidden + 1) * hidden``."""
    return 4 * (inp + hidden + 1) * hidden


def lstm_macs(inp: int, hidden: int) -> int:
    """Closed-form MACs of one LSTM step: ``(input + hidden) * 4 * hidden``."""
    return (inp + hidden) * 4 * hidden


def _embed(b: NetBuilder, tok: Tensor, vocab: int, dim: int, repeat: str, name: str) -> Tensor:
    """Embedding look-up of one token per step (table of ``vocab x dim`` parameters)."""
    return b.vector(tok, "embedding", (dim,), params=vocab * dim, repeat=repeat, name=name)


# --- GNMT --------------------------------------------------------------------------------------
#: MLPerf Inference v0.5 GNMT = TensorFlow NMT ``ende_gnmt_model_4_layer`` (wmt16_gnmt_4_layer):
#: WMT16 BPE vocabulary ``vocab.bpe.32000`` (32k merges; 36,548 tokens, the size with which the
#: model has MLPerf's published 210 M parameters), no output-layer bias.
GNMT_MLPERF_VOCAB = 36548
#: Wu et al. 2016: 32k shared wordpieces.
GNMT_WU_VOCAB = 32000


def build_gnmt(
    name: str,
    *,
    layers: int = 4,
    hidden: int = 1024,
    vocab: int = GNMT_MLPERF_VOCAB,
    seq_len: tuple[int, int] = (25, 25),
    meta: dict[str, str] | None = None,
) -> Network:
    """GNMT encoder-decoder (TF NMT ``gnmt_v2`` attention, as MLPerf uses it).

    Encoder: ``layers`` LSTM layers, the first bidirectional (its two outputs concatenated), the
    rest unidirectional with residual adds from the third layer on; the attention memory layer
    (keys, 1024 x 1024, no bias) runs on every encoder output. Decoder: ``layers`` LSTM layers,
    each fed the previous layer's output concatenated with the attention context; normed
    Bahdanau attention queried by the bottom layer; output projection to ``vocab`` (no bias).
    """
    b = NetBuilder(name, (1,), seq_len=seq_len, meta={"task": "translation", **(meta or {})})
    u = seq_len[0]
    # encoder, one source token per step
    tok = b.input((1,))
    x = _embed(b, tok, vocab, hidden, "in", "enc_embed")
    fw = b.recurrent(x, hidden, repeat="in", name="enc_l0_fw")
    bw = b.recurrent(x, hidden, repeat="in", name="enc_l0_bw")
    x = b.recurrent(
        fw, hidden, repeat="in", extra_inputs=(bw,), extra_features=hidden, name="enc_l1"
    )
    for i in range(2, layers):
        y = b.recurrent(x, hidden, repeat="in", name=f"enc_l{i}")
        x = b.vector([x, y], "add", repeat="in", name=f"enc_res{i}")
    b.fc(x, hidden, bias=False, repeat="in", name="attn_memory")
    # decoder, one target token per step; the attention context of step t-1 feeds layer 0
    tok = b.input((1,))
    x = _embed(b, tok, vocab, hidden, "out", "dec_embed")
    x = b.recurrent(x, hidden, repeat="out", extra_features=hidden, name="dec_l0")
    q = b.fc(x, hidden, bias=False, repeat="out", name="attn_query")
    # normed Bahdanau: score_j = g * v/|v| . tanh(key_j + query + b); params v, g, b
    e = b.vector(
        q, "attn_tanh", (u, hidden), params=2 * hidden + 1, repeat="out", name="attn_energy"
    )
    s = b.matmul(e, (hidden, 1), repeat="out", name="attn_score")
    p = b.vector(s, "softmax", (1, u), repeat="out", name="attn_softmax")
    ctx = b.matmul(p, (u, hidden), repeat="out", name="attn_context")
    for i in range(1, layers):
        y = b.recurrent(
            x, hidden, repeat="out", extra_inputs=(ctx,), extra_features=hidden, name=f"dec_l{i}"
        )
        x = y if i < 2 else b.vector([x, y], "add", repeat="out", name=f"dec_res{i}")
    logits = b.fc(x, vocab, bias=False, repeat="out", name="proj")
    b.vector(logits, "softmax", repeat="out", name="proj_softmax")
    return b.build()


def gnmt_reference(
    layers: int, hidden: int, vocab: int, seq_len: tuple[int, int]
) -> tuple[float, float]:
    """Closed-form ``(MACs, params)`` of :func:`build_gnmt` at ``seq_len`` (independent of the
    builder: per-step LSTM GEMMs, attention and projection, embeddings as parameters only)."""
    h, (s_in, s_out) = hidden, seq_len
    enc_step = 2 * lstm_macs(h, h) + lstm_macs(2 * h, h) + (layers - 2) * lstm_macs(h, h) + h * h
    dec_step = layers * lstm_macs(2 * h, h) + h * h + 2 * s_in * h + h * vocab
    enc_params = 2 * lstm_params(h, h) + lstm_params(2 * h, h) + (layers - 2) * lstm_params(h, h)
    dec_params = layers * lstm_params(2 * h, h)
    attn_params = 2 * h * h + 2 * h + 1
    params = enc_params + dec_params + attn_params + 3 * vocab * h  # 2 embeddings + projection
    return float(s_in * enc_step + s_out * dec_step), float(params)


GNMT_SEQ = (25, 25)
_GNMT_MACS, _ = gnmt_reference(4, 1024, GNMT_MLPERF_VOCAB, GNMT_SEQ)  # params: published


@register(
    "gnmt",
    macs=_GNMT_MACS,
    params=210e6,
    source=(
        "params: MLPerf Inference paper (Reddi et al., ISCA 2020) Table I, GNMT 210 M (the "
        "TF NMT ende_gnmt_model_4_layer: 4+4 LSTM layers of 1024, vocabulary 36,548, "
        "embeddings included); MACs: closed form at the default 25 source / 25 target tokens "
        "(no published count): 47.2 M per source token, 88.8 M per target token"
    ),
    aliases=("gnmt-mlperf", "nmt"),
    description="GNMT as in MLPerf Inference v0.5: 4-layer encoder/decoder, 1024 hidden",
)
def gnmt() -> Network:
    return build_gnmt(
        "gnmt",
        seq_len=GNMT_SEQ,
        meta={"source": "MLPerf Inference v0.5 GNMT (TF NMT wmt16_gnmt_4_layer)"},
    )


_GNMT8_MACS, _GNMT8_PARAMS = gnmt_reference(8, 1024, GNMT_WU_VOCAB, GNMT_SEQ)


@register(
    "gnmt-8",
    macs=_GNMT8_MACS,
    params=_GNMT8_PARAMS,
    source=(
        "closed form of Wu et al. 2016 (arXiv:1609.08144): 8 encoder layers (first "
        "bidirectional, residual from the third), 8 decoder layers with attention, 1024 units, "
        "32k wordpieces; 4(in+h+1)h per LSTM layer, embeddings counted as parameters; default "
        "25 source / 25 target tokens"
    ),
    aliases=("gnmt-wu", "gnmt8"),
    description="GNMT of Wu et al. 2016: 8-layer encoder/decoder, 1024 hidden, 32k vocabulary",
)
def gnmt8() -> Network:
    return build_gnmt(
        "gnmt-8",
        layers=8,
        vocab=GNMT_WU_VOCAB,
        seq_len=GNMT_SEQ,
        meta={"source": "Wu et al. 2016, Google's Neural Machine Translation System"},
    )


# --- PREMA RNN-MT: two instances of one attention seq2seq translation model --------------------
#: TF NMT tutorial (Luong, Brevdo & Zhao 2017; the codebase of MLPerf's GNMT), standard attention
#: model with ``standard_hparams/iwslt15.json``: bidirectional 1-layer encoder (512 per direction),
#: 2-layer LSTM decoder of 512 with attention input feeding, scaled Luong attention over the 1024-d
#: encoder memory, attention layer 512, vocabularies 17,191 (source) / 7,709 (target), no biases on
#: the projections. (MLPerf's 4-layer GNMT would take ~80 ms per sentence at batch 1 on PREMA's
#: Table I NPU, outside the 0.5-45 ms PREMA reports for its DNNs; this model takes ~9 ms.)
MT_HIDDEN, MT_SRC_VOCAB, MT_TGT_VOCAB = 512, 17191, 7709
#: Default lengths: the median English sentence of the translation length models (16 words);
#: en->de output about 1.1x the input, en->ko about 0.95 x^0.9 (PREMA Fig. 9).
MT1_SEQ = (16, 18)
MT2_SEQ = (16, 11)


def build_seq2seq(name: str, seq_len: tuple[int, int]) -> Network:
    """RNN-MT: see :data:`MT_HIDDEN` for the architecture; one ``"in"`` step per source word
    (embedding, both encoder directions, memory projection), one ``"out"`` step per target word
    (embedding, two LSTM layers, attention, attention layer, projection, softmax)."""
    h, w = MT_HIDDEN, 2 * MT_HIDDEN
    b = NetBuilder(
        name,
        (1,),
        seq_len=seq_len,
        meta={"task": "translation", "source": "TF NMT attention seq2seq, iwslt15 hparams"},
    )
    u = seq_len[0]
    x = _embed(b, b.input((1,)), MT_SRC_VOCAB, h, "in", "enc_embed")
    fw = b.recurrent(x, h, repeat="in", name="enc_fw")
    bw = b.recurrent(x, h, repeat="in", name="enc_bw")
    mem = b.vector([fw, bw], "concat", (w,), repeat="in", name="enc_out")
    b.fc(mem, h, bias=False, repeat="in", name="attn_memory")
    # decoder: [embedding(y_{t-1}), attention_{t-1}] -> LSTM -> LSTM
    x = _embed(b, b.input((1,)), MT_TGT_VOCAB, h, "out", "dec_embed")
    x = b.recurrent(x, h, repeat="out", extra_features=h, name="dec_l0")
    x = b.recurrent(x, h, repeat="out", name="dec_l1")
    e = b.matmul(x, (h, u), repeat="out", name="attn_score")  # g * (h_t . keys)
    p = b.vector(e, "softmax", params=1, repeat="out", name="attn_softmax")
    ctx = b.matmul(p, (u, w), repeat="out", name="attn_context")
    a = b.vector([x, ctx], "concat", (h + w,), repeat="out", name="attn_concat")
    a = b.fc(a, h, bias=False, act="tanh", repeat="out", name="attn_layer")
    logits = b.fc(a, MT_TGT_VOCAB, bias=False, repeat="out", name="proj")
    b.vector(logits, "softmax", repeat="out", name="proj_softmax")
    return b.build()


def seq2seq_reference(seq_len: tuple[int, int]) -> tuple[float, float]:
    """Closed-form ``(MACs, params)`` of :func:`build_seq2seq` at ``seq_len``."""
    h, w, (s_in, s_out) = MT_HIDDEN, 2 * MT_HIDDEN, seq_len
    enc_step = 2 * lstm_macs(h, h) + w * h
    dec_step = (
        lstm_macs(2 * h, h) + lstm_macs(h, h) + s_in * (h + w) + (h + w) * h + h * MT_TGT_VOCAB
    )
    params = (
        (MT_SRC_VOCAB + MT_TGT_VOCAB) * h
        + 2 * lstm_params(h, h)
        + lstm_params(2 * h, h)
        + lstm_params(h, h)
        + w * h
        + 1
        + (h + w) * h
        + h * MT_TGT_VOCAB
    )
    return float(s_in * enc_step + s_out * dec_step), float(params)


_MT_SOURCE = (
    "closed form (no published count) of the TF NMT attention seq2seq with standard_hparams/"
    "iwslt15.json (bi-LSTM encoder 2x512, 2-layer LSTM decoder 512, scaled Luong attention, "
    "vocabularies 17,191/7,709); 4(in+h+1)h per LSTM layer, embeddings counted as parameters; "
    "PREMA Sec. III instantiates the translation model twice; default lengths {}"
)
_MT1_MACS, _MT1_PARAMS = seq2seq_reference(MT1_SEQ)
_MT2_MACS, _MT2_PARAMS = seq2seq_reference(MT2_SEQ)


@register(
    "rnn-mt1",
    macs=_MT1_MACS,
    params=_MT1_PARAMS,
    source=_MT_SOURCE.format(MT1_SEQ),
    aliases=("rnn-mt-1", "prema-mt1"),
    description="PREMA RNN-MT1: attention seq2seq translation (English-to-German instance)",
)
def rnn_mt1() -> Network:
    return build_seq2seq("rnn-mt1", MT1_SEQ)


@register(
    "rnn-mt2",
    macs=_MT2_MACS,
    params=_MT2_PARAMS,
    source=_MT_SOURCE.format(MT2_SEQ),
    aliases=("rnn-mt-2", "prema-mt2"),
    description="PREMA RNN-MT2: the same translation model, a second instance (other language)",
)
def rnn_mt2() -> Network:
    return build_seq2seq("rnn-mt2", MT2_SEQ)


# --- PREMA RNN-SA ------------------------------------------------------------------------------
#: MLPerf (training v0.5) sentiment-analysis LSTM, PaddlePaddle ``stacked_lstm_net``: IMDB word
#: dictionary (5,148 words), embedding 256, three FC + LSTM layers with ``hid_dim = 1024`` gate
#: units (``dynamic_lstm(size=1024)`` = 4 x 256 hidden), max-pool over time, FC softmax (2 classes).
SA_VOCAB, SA_EMBED, SA_HIDDEN, SA_GATES, SA_LAYERS = 5148, 256, 256, 1024, 3
SA_SEQ = (16, 16)


def build_rnn_sa() -> Network:
    """RNN-SA: each "FC + LSTM" pair of the Paddle model is one recurrent step GEMM (the FC is
    the cell's input projection): ``K = input + 256``, ``N = 1024``. Layer ``i > 1`` reads the
    previous FC output (1024) and LSTM output (256). The output is produced after the last input
    step (PREMA Fig. 8b), so every per-step layer repeats with the input length."""
    b = NetBuilder(
        "rnn-sa",
        (1,),
        seq_len=SA_SEQ,
        meta={"task": "sentiment", "source": "MLPerf sentiment_analysis stacked_lstm_net"},
    )
    x = _embed(b, b.input((1,)), SA_VOCAB, SA_EMBED, "in", "embed")
    extra = 0
    for i in range(SA_LAYERS):
        x = b.recurrent(x, SA_HIDDEN, repeat="in", extra_features=extra, name=f"lstm{i + 1}")
        extra = SA_GATES
    pooled = b.vector(x, "max_over_time", (SA_GATES + SA_HIDDEN,), repeat="in", name="seq_pool")
    y = b.fc(pooled, 2, name="fc")
    b.vector(y, "softmax", name="softmax")
    return b.build()


def _sa_reference() -> tuple[float, float]:
    k = [SA_EMBED] + [SA_GATES + SA_HIDDEN] * (SA_LAYERS - 1)
    step = sum((ki + SA_HIDDEN) * SA_GATES for ki in k)
    params = sum((ki + SA_HIDDEN + 1) * SA_GATES for ki in k) + SA_VOCAB * SA_EMBED
    fc = (SA_GATES + SA_HIDDEN) * 2
    return float(SA_SEQ[0] * step + fc), float(params + fc + 2)


_SA_MACS, _SA_PARAMS = _sa_reference()


@register(
    "rnn-sa",
    macs=_SA_MACS,
    params=_SA_PARAMS,
    source=(
        "closed form of the MLPerf sentiment-analysis LSTM (mlcommons/training "
        "sentiment_analysis/paddle stacked_lstm_net: embedding 256, 3 x FC(1024) + LSTM(256), "
        "max-pool, FC 2) at the default 16-word input (output length = input length)"
    ),
    aliases=("rnn-sentiment", "prema-sa"),
    description="PREMA RNN-SA: LSTM sentiment analysis (IMDB), unrolled over the input",
)
def rnn_sa() -> Network:
    return build_rnn_sa()


# --- PREMA RNN-ASR: Listen, Attend and Spell ---------------------------------------------------
#: Chan et al. 2016: 40 log-mel features per 10 ms frame; a BLSTM and three pyramidal BLSTM
#: layers (256 per direction) reduce time 8x; a 2-layer LSTM speller (512) with MLP attention
#: and an MLP character distribution. Characters: 26 letters, space, apostrophe, sos/eos/unk/pad.
ASR_FEATS, ASR_LISTEN, ASR_PYRAMID, ASR_SPELL, ASR_EMBED, ASR_VOCAB = 40, 256, 3, 512, 256, 32
#: Default lengths: 55 listener steps (one step = 8 frames = 80 ms, so 4.4 s of audio) and 33
#: speller steps (the rnn-asr length model's medians).
ASR_SEQ = (55, 33)


def _cell_step(b: NetBuilder, src: Tensor, extra: list[Tensor], owner: str, name: str) -> Tensor:
    """A later time step (within one listener step) of the LSTM cell ``owner``: the same
    ``[x, h] @ W`` GEMM, emitted as a MatMul that re-reads ``owner``'s weight matrix (it is
    charged as an operand) so the shared weights are not counted as new parameters."""
    k = src.shape[-1] + len(extra) * ASR_LISTEN + ASR_LISTEN
    y = b.matmul(
        Tensor(src.producer, (k,)),  # the step's [x, h] row (with the extra inputs' features)
        (k, 4 * ASR_LISTEN),
        extra_inputs=extra,
        name=name,
        repeat="in",
        attrs={"cell": "lstm", "hidden": ASR_LISTEN, "shares_weights_with": owner},
    )
    return Tensor(y.producer, (ASR_LISTEN,))


def build_rnn_asr() -> Network:
    """RNN-ASR (LAS). One ``"in"`` step is one listener output, i.e. 8 input frames: the bottom
    BLSTM runs 8 steps, the pyramid layers 4, 2 and 1 (each reading two concatenated outputs of
    the layer below), all in both directions; then the attention key projection. One ``"out"``
    step is one character of the speller."""
    b = NetBuilder(
        "rnn-asr",
        (ASR_FEATS,),
        seq_len=ASR_SEQ,
        meta={
            "task": "speech",
            "source": "Listen, Attend and Spell (Chan et al. 2016)",
            "seq_in_unit": "listener steps of 8 frames (80 ms)",
            "seq_out_unit": "characters",
        },
    )
    u = ASR_SEQ[0]
    frame = b.input((ASR_FEATS,))
    width = 2 * ASR_LISTEN
    below: list[Tensor] = []
    for level in range(ASR_PYRAMID + 1):
        outs: list[Tensor] = []
        for t in range(2 ** (ASR_PYRAMID - level)):
            # level 0 reads one frame; a pyramid level reads 2 steps x (fw, bw) of the one below
            src, extra = (frame, []) if level == 0 else (below[4 * t], below[4 * t + 1 : 4 * t + 4])
            for d in ("fw", "bw"):
                nm = f"listen{level}_t{t}_{d}"
                if t == 0:
                    y = b.recurrent(
                        src,
                        ASR_LISTEN,
                        repeat="in",
                        extra_inputs=extra,
                        extra_features=len(extra) * ASR_LISTEN,
                        name=nm,
                    )
                else:
                    y = _cell_step(b, src, extra, f"listen{level}_t0_{d}", nm)
                outs.append(y)
        below = outs
    top = b.vector(below, "concat", (width,), repeat="in", name="listen_out")
    b.fc(top, ASR_SPELL, repeat="in", name="attn_key")  # psi(h_u), once per listener output
    # speller: [embedding(y_{i-1}), c_{i-1}] -> LSTM -> LSTM -> s_i
    x = _embed(b, b.input((1,)), ASR_VOCAB, ASR_EMBED, "out", "embed")
    x = b.recurrent(x, ASR_SPELL, repeat="out", extra_features=width, name="spell1")
    s = b.recurrent(x, ASR_SPELL, repeat="out", name="spell2")
    q = b.fc(s, ASR_SPELL, repeat="out", name="attn_query")  # phi(s_i)
    e = b.matmul(q, (ASR_SPELL, u), repeat="out", name="attn_energy")
    p = b.vector(e, "softmax", repeat="out", name="attn_softmax")
    ctx = b.matmul(p, (u, width), repeat="out", name="attn_context")
    # CharacterDistribution: MLP over [s_i, c_i]
    h = b.vector([s, ctx], "concat", (ASR_SPELL + width,), repeat="out", name="char_in")
    h = b.fc(h, ASR_SPELL, act="relu", repeat="out", name="char_mlp")
    logits = b.fc(h, ASR_VOCAB, repeat="out", name="char_out")
    b.vector(logits, "softmax", repeat="out", name="char_softmax")
    return b.build()


def _asr_reference() -> tuple[float, float]:
    """Closed form of :func:`build_rnn_asr` at :data:`ASR_SEQ`."""
    h, w, sp = ASR_LISTEN, 2 * ASR_LISTEN, ASR_SPELL
    u, out = ASR_SEQ
    listen_step = 8 * 2 * lstm_macs(ASR_FEATS, h) + (4 + 2 + 1) * 2 * lstm_macs(2 * w, h) + w * sp
    spell_step = (
        lstm_macs(ASR_EMBED + w, sp)
        + lstm_macs(sp, sp)
        + sp * sp  # query
        + 2 * u * sp  # energies (u x 512) and context (u x 512)
        + (sp + w) * sp
        + sp * ASR_VOCAB
    )
    params = (
        2 * lstm_params(ASR_FEATS, h)
        + ASR_PYRAMID * 2 * lstm_params(2 * w, h)
        + (w * sp + sp)  # key projection
        + ASR_VOCAB * ASR_EMBED
        + lstm_params(ASR_EMBED + w, sp)
        + lstm_params(sp, sp)
        + (sp * sp + sp)  # query projection
        + ((sp + w) * sp + sp)
        + (sp * ASR_VOCAB + ASR_VOCAB)
    )
    return float(u * listen_step + out * spell_step), float(params)


_ASR_MACS, _ASR_PARAMS = _asr_reference()


@register(
    "rnn-asr",
    macs=_ASR_MACS,
    params=_ASR_PARAMS,
    source=(
        "closed form of Listen, Attend and Spell (Chan et al., ICASSP 2016): 40 log-mel "
        "features, BLSTM + 3 pyramidal BLSTM layers of 256 per direction (8x time reduction), "
        "2-layer LSTM speller of 512, MLP attention and character distribution, 32 characters; "
        "4(in+h+1)h per LSTM layer; default 55 listener steps (4.4 s of audio) and 33 characters"
    ),
    aliases=("rnn-las", "las", "prema-asr"),
    description="PREMA RNN-ASR: Listen, Attend and Spell speech recognition",
)
def rnn_asr() -> Network:
    return build_rnn_asr()
