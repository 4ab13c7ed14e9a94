"""``npusched models ...`` and ``npusched profile``."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Annotated

import typer

from npusched.cli._app import (
    FormatOpt,
    PluginOpt,
    _common,
    app,
    models_app,
)
from npusched.errors import ConfigError


# --- models ------------------------------------------------------------------------------------
@models_app.command("list")
def models_list(fmt: FormatOpt = "table") -> None:
    """List the zoo networks with their layer count, MACs and parameters."""
    from npusched.models.zoo import get_network, list_networks
    from npusched.report.tables import render

    rows = [get_network(n).summary() for n in list_networks()]
    render(rows, fmt, title="npusched model zoo")


@models_app.command("show")
def models_show(name: str, fmt: FormatOpt = "table") -> None:
    """Print the layer table of zoo network NAME."""
    from npusched.hardware.summary import layer_rows
    from npusched.models.zoo import entry, get_network
    from npusched.report.tables import render

    net = get_network(name)
    desc = entry(name).description
    title = f"{net.name}: {net.macs:,} MACs, {net.params:,} params" + (f" ({desc})" if desc else "")
    render(layer_rows(net), fmt, title=title)


@models_app.command("import")
def models_import(
    file: Path,
    name: Annotated[str | None, typer.Option(help="Network name (default: file stem).")] = None,
    fmt: FormatOpt = "table",
) -> None:
    """Import a model and print its layer table: an ONNX file (``.onnx``) or a SCALE-Sim
    topology CSV (``.csv``: convolution or GEMM layout, SCALE-Sim's unpadded output sizes)."""
    from npusched.hardware.summary import layer_rows, load_network
    from npusched.report.tables import render

    net = load_network(file, name=name, zoo=False)
    symbolic = net.meta.get("symbolic_dims") if file.suffix.lower() != ".csv" else None
    if symbolic:
        # non-batch sizes are only right if these really are 1: say so instead of staying silent
        print(
            f"npusched: warning: {file}: symbolic dimensions taken as 1 (give them fixed sizes "
            f"in the model for exact layer sizes): {', '.join(map(str, symbolic))}",
            file=sys.stderr,
        )
    render(layer_rows(net), fmt, title=f"{net.name}: {net.macs:,} MACs, {net.params:,} params")


@models_app.command("export")
def models_export(
    name: str,
    out: Annotated[Path, typer.Option("--out", "-o", help="ONNX file to write.")],
    batch: Annotated[int, typer.Option("--batch", help="Batch size (input's first dim).")] = 1,
    input_size: Annotated[
        int | None, typer.Option("--input-size", help="Square input side in pixels.")
    ] = None,
    seed: Annotated[int, typer.Option(help="Seed of the random weights.")] = 0,
) -> None:
    """Export zoo network NAME as a runnable ONNX graph with seeded random weights (checked by
    onnx.checker and shape inference; ``models import`` reads it back with the same MACs and
    parameters)."""
    from npusched.models.onnx_export import export_onnx
    from npusched.models.zoo import get_network

    if batch < 1:
        raise ConfigError(f"--batch: {batch} is not a batch size; allowed: integers >= 1")
    if input_size is not None and input_size < 8:
        raise ConfigError(f"--input-size: {input_size} is too small; allowed: integers >= 8")
    path = export_onnx(get_network(name), out, batch=batch, input_size=input_size, seed=seed)
    print(f"wrote {path}")


# --- profile -----------------------------------------------------------------------------------
@models_app.command("exits")
def models_exits(
    name: str,
    n_exits: Annotated[int, typer.Option("--n-exits", help="Exits in total (>= 1).")] = 4,
    rates: Annotated[
        str | None,
        typer.Option(help="Exit rates, e.g. 5.1,16.9,9,69 (default: the paper's, if any)."),
    ] = None,
    device: Annotated[
        str | None, typer.Option(help="Also print the N_exits x B_max latency table (ms).")
    ] = None,
    b_max: Annotated[int, typer.Option("--b-max", help="Largest batch size.")] = 8,
    fmt: FormatOpt = "table",
) -> None:
    """Attach early exits to zoo network NAME (equidistant in FLOPs) and print them."""
    from npusched.hardware.summary import exit_rows
    from npusched.report.tables import render

    net, rows = exit_rows(name, n_exits, rates, device, b_max)
    render(rows, fmt, title=f"{net.name}: {len(net.exits)} exits")


@app.command("profile")
def profile_cmd(
    network: str,
    device: Annotated[
        str,
        typer.Option(
            help="Device: prema-npu (PREMA Table I), prema-npu-dfs, ab9, clocked, planaria, "
            "planaria-dfs, gemm-npu, zc706-npu, zcu104-npu, soc, or one a plugin registers "
            "(a wrong name lists every registered device)."
        ),
    ] = "prema-npu",
    batch: Annotated[list[int] | None, typer.Option(help="Batch size (repeatable).")] = None,
    fmt: FormatOpt = "table",
    layers: Annotated[bool, typer.Option("--layers/--no-layers", help="Per-layer rows.")] = True,
    subarrays: Annotated[
        int | None,
        typer.Option(help="Subarrays allocated (devices with a 'subarrays' axis: planaria 1-16)."),
    ] = None,
    compute_only: Annotated[
        bool,
        typer.Option(
            "--compute-only",
            help="Compute cycles only, as SCALE-Sim's COMPUTE_REPORT 'Total Cycles': the "
            "device's systolic array with no memory stalls and no accumulator limit, batch 1; "
            "JSON: {layers: [{name, compute_cycles}], total_compute_cycles}.",
        ),
    ] = False,
    plugin: PluginOpt = None,
) -> None:
    """Per-layer cycles and time of NETWORK on a device, and the total (isolated latency).

    NETWORK is a zoo name or a path to an ``.onnx`` file or a SCALE-Sim topology ``.csv``
    (imported as by ``models import``).
    Recurrent layers are listed once (one time step); totals unroll them at the network's
    default sequence lengths. JSON output is one object: device, totals and (with --layers)
    per-layer rows; CSV output is the per-layer rows (or the totals with --no-layers).
    """
    from npusched.hardware.summary import compute_only_summary, profile_summary
    from npusched.report.tables import render

    _common(plugins=plugin)
    if compute_only:
        co = compute_only_summary(network, device, batch)
        if fmt == "json":
            typer.echo(json.dumps(co.to_json(), indent=2))
        elif fmt == "csv":
            render(co.layers, fmt)
        else:
            title = f"{co.network}: compute cycles, {co.rows}x{co.cols} array"
            render(co.layers, fmt, title=title)
            total = [{"network": co.network, "total_compute_cycles": co.total_compute_cycles}]
            render(total, fmt, title="total")
        return
    ps = profile_summary(network, device, batch, subarrays=subarrays)
    if fmt == "json":
        typer.echo(json.dumps(ps.to_json(layers=layers), indent=2, default=float))
    elif fmt == "csv":
        render(ps.layers if layers else ps.totals, fmt)
    else:
        for b in ps.batches if layers else ():
            render(ps.layers_of(b), fmt, title=f"{ps.network} on {ps.device}, batch {b}")
        render(ps.totals, fmt, title="total (isolated latency)")


