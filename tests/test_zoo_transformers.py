"""Transformers, the MLPerf models and the layer kinds they need: structure, the decode step's
K/V cache, sequence-length variants, and how the systolic cost model sees them. (Every network's
MACs / params against its reference are in ``test_zoo.py``.)"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from npusched.cli import main
from npusched.errors import ModelError
from npusched.hardware.profile import compile_profile
from npusched.hardware.systolic import SystolicArray
from npusched.models.ir import LayerKind
from npusched.models.zoo import canonical_name, get_network, reference
from npusched.models.zoo.transformer import (
    DECODER_SEQ,
    GPT2,
    LLAMA_1B,
    bert_reference,
    build_decoder,
    decoder_reference,
    default_kv_len,
    kv_cache_bytes,
)


def _attn(net_name: str, repeat: str | None) -> list:
    net = get_network(net_name)
    return [ly for ly in net.layers if ly.kind == LayerKind.MATMUL and ly.repeat == repeat]


# --- encoders ----------------------------------------------------------------------------------
def test_bert_base_attention_is_per_head() -> None:
    qk, pv = _attn("bert-base", None)[:2]
    assert (qk.m, qk.k, qk.n, qk.groups) == (384, 64, 384, 12)
    assert (pv.m, pv.k, pv.n, pv.groups) == (384, 384, 64, 12)
    assert qk.macs == pv.macs == 384 * 384 * 768
    net = get_network("bert-base")
    ops = [ly.attrs.get("op") for ly in net.layers if ly.kind == LayerKind.VECTOR]
    assert ops.count("layernorm") == 1 + 2 * 12 and ops.count("softmax") == 12
    assert [ly.attrs["post"] for ly in net.layers if ly.name == "l0_fc1"] == [("gelu",)]
    embeds = [ly for ly in net.layers if ly.kind == LayerKind.EMBED]
    assert [ly.input_elems for ly in embeds] == [384 * 768, 2 * 384 * 768]  # rows gathered
    assert all(ly.macs == 0 and ly.weight_elems == 0 for ly in embeds)


@pytest.mark.parametrize("seq", [1, 128, 512])
def test_bert_sequence_length_variant(seq: int) -> None:
    net = get_network(f"bert-base@{seq}")
    assert net.name == canonical_name(f"BERT@{seq}") == f"bert-base@{seq}"
    assert net.macs == bert_reference(12, 768, seq)[0]
    assert net.params == get_network("bert-base").params  # same weights
    assert reference(f"bert-base@{seq}") is None  # published figures are for 384
    assert get_network(f"bert-base@{seq}") is net  # cached


def test_bert_128_matches_the_common_figure() -> None:
    """BERT-base at 128 tokens is the often-quoted ~11.2 GMACs (22.4 GFLOPs)."""
    assert get_network("bert-base@128").macs == pytest.approx(11.2e9, rel=0.01)


@pytest.mark.parametrize("bad", ["bert-base@0", "bert-base@513", "bert-base@x", "vit-b16@3"])
def test_bad_variant_names(bad: str) -> None:
    with pytest.raises(ModelError, match="'@'"):
        get_network(bad)


def test_swin_window_attention() -> None:
    qk = _attn("swin-t", None)[0]
    # stage 1: 56 x 56 tokens in 64 windows of 7 x 7, 3 heads of 32
    assert (qk.m, qk.k, qk.n, qk.groups) == (49, 32, 49, 64 * 3)


# --- decoders and the K/V cache ----------------------------------------------------------------
def test_decode_step_structure() -> None:
    net = get_network("llama-3.2-1b")
    assert net.seq_len == DECODER_SEQ
    prompt, out = DECODER_SEQ
    kv = default_kv_len(prompt, out)
    assert kv == 192
    qk, pv = _attn("llama-3.2-1b", "out")[:2]
    # grouped-query attention: 8 K/V heads, the 4 query heads sharing each stacked into M
    assert (qk.m, qk.k, qk.n, qk.groups) == (4, 64, kv, 8)
    assert (pv.m, pv.k, pv.n, pv.groups) == (4, kv, 64, 8)
    pre = _attn("llama-3.2-1b", None)[0]
    assert (pre.m, pre.k, pre.n, pre.groups) == (4 * prompt, 64, prompt, 8)
    # decode steps repeat seq_out times; their weights are the prefill's (params counted once)
    steps = net.step_counts(seq_out=7)
    dec = np.array([ly.repeat == "out" for ly in net.layers])
    assert (steps[dec] == 7).all() and (steps[~dec] == 1).all()
    assert all(
        "shared_weights" in ly.attrs
        for ly in net.layers
        if ly.repeat and ly.params == 0 and ly.weight_elems
    )
    assert net.params == pytest.approx(1_235_814_400, abs=0)


@pytest.mark.parametrize("name, cfg", [("gpt2", GPT2), ("llama-3.2-1b", LLAMA_1B)])
def test_decoder_total_matches_the_exact_growing_cache_sum(name: str, cfg: object) -> None:
    """The step at the mean cache length reproduces the exact sum over positions P+1..P+T,
    less half a position per step (T = 128 is even: the mean 192.5 is built as 192)."""
    net = get_network(name)
    exact = decoder_reference(cfg)  # type: ignore[arg-type]
    c = cfg
    per_key = c.layers * 2 * c.heads * (c.d // c.heads)  # type: ignore[attr-defined]
    assert exact - net.macs == DECODER_SEQ[1] * per_key / 2
    assert net.macs == pytest.approx(exact, rel=1e-4)


@pytest.mark.parametrize("cfg", [GPT2, LLAMA_1B])
def test_kv_bytes_grow_with_position(cfg: object) -> None:
    """The decode step built at cache length p reads ``2 * L * H_kv * d_h * 2`` more bytes per
    position; the systolic array's DRAM traffic and cycles for the step grow with it."""
    c = cfg  # a DecoderConfig
    per_pos = 2 * c.layers * c.kv_heads * (c.d // c.heads) * 2  # type: ignore[attr-defined]
    dev = SystolicArray()
    positions = (129, 192, 512, 1024)
    nets = [build_decoder("dec", c, kv_len=p) for p in positions]  # type: ignore[arg-type]
    kv = [kv_cache_bytes(n) for n in nets]
    assert kv == [p * per_pos for p in positions]
    assert nets[0].meta["kv_bytes_per_position"] == per_pos
    moved, cycles = [], []
    for n in nets:
        dec = [i for i, ly in enumerate(n.layers) if ly.repeat == "out"]
        costs = dev.layer_costs(n, 1)
        moved.append(int(costs.bytes_moved[dec].sum()))
        cycles.append(int(costs.cycles[dec].sum()))
    assert moved == sorted(moved) and len(set(moved)) == len(moved)
    assert cycles == sorted(cycles) and cycles[-1] > cycles[0]
    # the extra traffic is at least the extra K/V bytes (the cache is read once per step)
    assert moved[-1] - moved[0] >= kv[-1] - kv[0]


def test_decode_seq_out_is_a_runtime_repeat() -> None:
    net = get_network("gpt2")
    prof = compile_profile(net, SystolicArray(), (1,))
    t1, t2 = prof.isolated_latency(1, seq_out=10), prof.isolated_latency(1, seq_out=20)
    t0 = prof.isolated_latency(1, seq_out=1)
    assert t2 - t1 == pytest.approx(t1 - t0 + (t1 - t0) / 9, rel=1e-9)  # linear in seq_out


# --- MLPerf models and the other layer kinds ---------------------------------------------------
def test_dlrm_embeddings_are_memory_only_vector_layers() -> None:
    net = get_network("dlrm")
    embs = [ly for ly in net.layers if ly.kind == LayerKind.EMBED]
    assert len(embs) == 26
    assert all(ly.input_elems == 128 and ly.output_elems == 128 and ly.macs == 0 for ly in embs)
    dot = next(ly for ly in net.layers if ly.name == "interact_dot")
    assert (dot.kind, dot.m, dot.k, dot.n) == (LayerKind.MATMUL, 27, 128, 27)
    assert net.index("top_fc0") and net.layers[net.index("top_fc0")].k == 479
    costs = SystolicArray().layer_costs(net, 1)
    i = net.index("emb0")
    assert costs.bytes_moved[i] == 2 * 128 * 2  # the row read and the row written


def test_unet3d_volumes() -> None:
    net = get_network("3d-unet")
    first, last = net.layers[0], net.layers[-1]
    assert (first.m, first.k, first.n) == (128**3, 27, 32)
    assert (last.m, last.k, last.n) == (128**3, 32, 3)
    up = next(ly for ly in net.layers if ly.name == "up1_tconv")
    assert (up.m, up.k, up.n) == (4**3, 320, 320 * 8)  # transposed 2x2x2: per input voxel


def test_retinanet_shares_head_weights_across_levels() -> None:
    net = get_network("retinanet")
    heads = [ly for ly in net.layers if ly.name.startswith("cls_p") and ly.name.endswith("_out")]
    assert [ly.m for ly in heads] == [100 * 100, 50 * 50, 25 * 25, 13 * 13, 7 * 7]
    assert [ly.params > 0 for ly in heads] == [True, False, False, False, False]
    assert heads[1].attrs["shared_weights"] == "cls_p3_out"


def test_attention_matmul_cost_scales_with_batch() -> None:
    """Q.K^T and P.V cost batch x heads separate GEMMs (each sample has its own keys)."""
    net = get_network("vit-b16")
    idx = [i for i, ly in enumerate(net.layers) if ly.kind == LayerKind.MATMUL]
    grid = SystolicArray().layer_costs_grid(net, (1, 4))
    assert (grid.cycles[1, idx] == 4 * grid.cycles[0, idx]).all()


# --- CLI ---------------------------------------------------------------------------------------
def test_cli_profile_variant(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["profile", "bert-base@64", "--batch", "1", "-f", "json", "--no-layers"])
    assert rc in (0, None)
    out = json.loads(capsys.readouterr().out)
    assert "bert-base@64" in json.dumps(out)


# --- end to end: every new network, every policy ------------------------------------------------
NEW_NETWORKS = (
    "bert-base",
    "bert-large",
    "bert-base@128",
    "vit-b16",
    "vit-l16",
    "deit-s",
    "swin-t",
    "gpt2",
    "llama-3.2-1b",
    "mobilenet-v2",
    "mobilenet-v3-large",
    "efficientnet-b1",
    "efficientnet-b2",
    "efficientnet-b3",
    "efficientnet-b4",
    "resnext-50",
    "retinanet",
    "3d-unet",
    "dlrm",
)


def test_every_new_network_runs_under_every_policy(tmp_path: Path) -> None:
    """A trace with one request of each new network (priorities 1/3/9, decode lengths for the
    LMs) runs to completion on ``prema-npu`` under every registered temporal policy."""
    import npusched.policies.temporal  # noqa: F401  (registers the built-in policies)
    from npusched.experiments.config import PolicyConfig, load_config
    from npusched.experiments.runner import run_config
    from npusched.policies.base import POLICIES

    rows = ["arrival_s,network,batch,priority,seq_out"]
    for i, name in enumerate(NEW_NETWORKS):
        seq = "16" if name in ("gpt2", "llama-3.2-1b") else ""
        rows.append(f"{0.001 * i},{name},{1 + i % 2},{(1, 3, 9)[i % 3]},{seq}")
    (tmp_path / "trace.csv").write_text("\n".join(rows) + "\n")
    (tmp_path / "run.toml").write_text(
        'name = "zoo"\nseed = 0\n[workload]\nkind = "trace"\npath = "trace.csv"\n'
        '[sim]\npredictor = "prema"\n'
    )
    base = load_config(tmp_path / "run.toml")
    for policy in POLICIES.names():
        cfg = base.model_copy(update={"policy": PolicyConfig(name=policy)})
        out = run_config(cfg, base_dir=tmp_path)
        assert out.summary["n_unfinished"] == 0, policy
        assert sorted(out.records["network"]) == sorted(NEW_NETWORKS), policy
        assert (out.records["latency_s"] >= out.records["isolated_s"] * (1 - 1e-9)).all()


EXAMPLE = Path(__file__).resolve().parent.parent / "examples" / "transformer_mix.toml"


def test_transformer_mix_example(tmp_path: Path) -> None:
    """The example runs through the CLI; on its seed P-PREMA beats NP-FCFS on ANTT."""
    from npusched.experiments.config import PolicyConfig, load_config
    from npusched.experiments.runner import run_config

    assert main(["run", str(EXAMPLE), "--out", str(tmp_path / "o"), "-q"]) in (0, None)
    summary = json.loads((tmp_path / "o" / "summary.json").read_text())
    assert summary["n_unfinished"] == 0
    cfg = load_config(EXAMPLE)
    assert cfg.policy.name == "P-PREMA"
    fcfs = run_config(cfg.model_copy(update={"policy": PolicyConfig(name="NP-FCFS")}))
    assert summary["antt"] < fcfs.summary["antt"]


@pytest.mark.parametrize("name", NEW_NETWORKS)
def test_cli_profiles_every_new_network(name: str, capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(["profile", name, "--batch", "1", "--batch", "4", "-f", "json", "--no-layers"])
    assert rc in (0, None)
    text = capsys.readouterr().out
    assert json.loads(text) and canonical_name(name) in text


@pytest.mark.parametrize("name", ["gpt2", "llama-3.2-1b", "retinanet"])
def test_shared_weights_name_an_identical_layer(name: str) -> None:
    """A layer that reuses another's weights names it, and reads a weight matrix of its shape."""
    net = get_network(name)
    by_name = {ly.name: ly for ly in net.layers}
    shared = [ly for ly in net.layers if "shared_weights" in ly.attrs]
    assert shared
    for ly in shared:
        twin = by_name[ly.attrs["shared_weights"]]
        assert net.index(twin.name) < net.index(ly.name)
        assert (twin.kind, twin.k, twin.n, twin.groups) == (ly.kind, ly.k, ly.n, ly.groups)
        assert ly.params == 0 and twin.params > 0
