"""The ``npusched`` application object, its sub-applications' shared options and the helpers
every command module uses (``_common``: -q/-v/--plugin; ``_print_headline``)."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

import npusched
from npusched.errors import ConfigError

CONTEXT = {"help_option_names": ["-h", "--help"]}
EXIT_CODES = "Exit status: 0 ok, 1 internal error, 2 bad input, 130 interrupted."

app = typer.Typer(
    name="npusched",
    help="Simulate and schedule multi-tenant DNN inference on NPUs.",
    epilog=EXIT_CODES,
    no_args_is_help=True,
    add_completion=True,
    pretty_exceptions_enable=False,
    context_settings=CONTEXT,
    rich_markup_mode="markdown",  # docstring paragraphs re-wrap instead of keeping line breaks
)
models_app = typer.Typer(
    help="List, show and import DNN models.",
    no_args_is_help=True,
    rich_markup_mode="markdown",
    context_settings=CONTEXT,
)


app.add_typer(models_app, name="models")


# Choices are ``Literal`` types: Typer turns them into a fixed set of values, shown in
# ``--help``, completed by the shell and checked before the command runs.
Format = Literal["table", "json", "csv"]
FormatOpt = Annotated[Format, typer.Option("--format", "-f", help="Output: table, json or csv.")]
QuietOpt = Annotated[
    bool, typer.Option("--quiet", "-q", help="No progress bar or status lines on stderr.")
]
VerboseOpt = Annotated[
    bool,
    typer.Option("--verbose", "-v", help="Log details on stderr, and the elapsed time at the end."),
]
PluginOpt = Annotated[
    list[Path] | None,
    typer.Option(
        "--plugin",
        metavar="FILE.py",
        help="A Python file that registers policies, networks or devices (repeatable); see "
        "docs/api.md.",
    ),
]

#: what ``-q``/``-v`` asked for, read by :func:`main` when the command has returned
_STATE: dict[str, Any] = {"verbose": False, "t0": 0.0}


def _common(
    *, quiet: bool = False, verbose: bool = False, plugins: list[Path] | None = None
) -> bool:
    """Apply the shared options of a long command; returns whether to show progress."""
    if quiet and verbose:
        raise ConfigError("-q/--quiet and -v/--verbose: give at most one")
    if verbose:
        import logging

        logging.basicConfig(stream=sys.stderr, format="npusched: %(name)s: %(message)s")
        logging.getLogger("npusched").setLevel(logging.INFO)
        _STATE["verbose"] = True
    if plugins:
        from npusched.plugins import load_plugins

        load_plugins(plugins)
        if verbose:
            print(f"npusched: plugins loaded: {', '.join(map(str, plugins))}", file=sys.stderr)
    return not quiet
FigureFormatOpt = Annotated[
    Literal["png", "svg", "pdf"],
    typer.Option(
        "--figure-format",
        help="png, svg or pdf: figures also in this format (the report embeds SVGs).",
    ),
]


def _plain_help() -> None:
    """Help text as users type it: no ``<bool>`` after flags (``--quiet``, ``--help``: they take
    no value) and ``CONFIG`` rather than ``{config}`` for a required argument in usage lines.

    Typer >= 0.24 prints a type after every option and braces around required arguments; both
    are adjusted here on Typer's own parameter classes (skipped if a Typer version lacks them).
    """
    try:
        from typer.core import TyperArgument, TyperOption
    except ImportError:  # pragma: no cover - an older typer without these classes
        return
    show_type = getattr(TyperOption, "display_type_rich", None)
    if show_type is not None and not getattr(show_type, "_npusched", False):

        def display_type_rich(self: TyperOption, ctx: object) -> str | None:
            return None if self.is_flag else show_type(self, ctx)

        display_type_rich._npusched = True  # type: ignore[attr-defined]
        TyperOption.display_type_rich = display_type_rich  # type: ignore[method-assign]
    usage_name = getattr(TyperArgument, "_usage_display_name", None)
    if usage_name is not None and not getattr(usage_name, "_npusched", False):

        def _usage_display_name(self: TyperArgument) -> str:
            name = str(self.display_name_raw).upper()
            name = name if self.required else f"[{name}]"
            return name + ("..." if self.nargs != 1 else "")

        _usage_display_name._npusched = True  # type: ignore[attr-defined]
        TyperArgument._usage_display_name = _usage_display_name  # type: ignore[method-assign]


_plain_help()


def _version(value: bool) -> None:
    if value:
        from npusched import native

        mods = native.compiled()
        typer.echo(f"npusched {npusched.__version__}")
        typer.echo(f"compiled: {', '.join(mods)}" if mods else "compiled: none (pure Python)")
        raise typer.Exit()


@app.callback()
def root(
    version: Annotated[
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
    debug: Annotated[bool, typer.Option("--debug", help="Show tracebacks on errors.")] = False,
) -> None:
    """npusched: multi-tenant NPU scheduling simulator."""


# --- reproduce ---------------------------------------------------------------------------------
ConfigOpt = Annotated[
    Path | None,
    typer.Option(
        "--config", help="An edited suite file (default: the packaged one; see --export)."
    ),
]
ExportOpt = Annotated[
    Path | None,
    typer.Option("--export", help="Write the packaged suite file here for editing, and exit."),
]
SetOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--set",
        metavar="KEY=VALUE",
        help="Set a suite-file parameter (repeatable; dotted inside a table, e.g. setup.load=1.2; "
        "the value is read as TOML).",
    ),
]



def _print_headline(summary: dict[str, Any], title: str, out: Path) -> None:
    """Print a reproduction's ``headline`` (ours beside the paper's) and where the report is."""
    from npusched.report.tables import render

    rows = [
        {"quantity": key, "ours": val.get("ours"), "paper": val.get("paper")}
        for key, val in summary.get("headline", {}).items()
        if isinstance(val, dict)
    ]
    if rows:
        render(rows, "table", title=title)
    typer.echo(f"report: {Path(out) / 'report.md'} (tables, CSVs and plots in {out})")


