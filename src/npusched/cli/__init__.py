"""The ``npusched`` command (thin: parses arguments, calls the library, prints).

Exit status: 0 ok, 1 internal error (a bug: one line naming the exception; ``--debug`` shows
the traceback), 2 bad input (one line ``npusched: error: FILE: field: what is wrong; allowed:
...``, checked before any work), 130 interrupted (Ctrl-C). Conventions (``docs/cli.md``):
``-h``/``--help`` everywhere, ``-f/--format table|json|csv`` on every command that prints a
table, ``-q``/``-v`` on every long command, ``--plugin FILE.py`` to load a user's policies and
networks, shell completion (``--install-completion``).
"""

from __future__ import annotations

import sys
import time

import typer

from npusched.cli._app import _STATE, app
from npusched.errors import NpuschedError

# the command modules register their commands on import, in the order --help lists them
from npusched.cli import models, run, reproduce  # noqa: F401  isort: skip

__all__ = ["app", "main"]


def main(argv: list[str] | None = None) -> int:
    """Console entry point; returns the exit status."""
    args = sys.argv[1:] if argv is None else argv
    debug = "--debug" in args
    if debug:  # accepted anywhere (``npusched run x.toml --debug``), not only before the command
        args = ["--debug", *(a for a in args if a != "--debug")]
    # an empty --out would become Path("") == "." (the current directory): refuse it here,
    # before the argument parser turns it into a path
    for i, a in enumerate(args):
        if a == "--out=" or (a in ("--out", "-o") and i + 1 < len(args) and not args[i + 1]):
            print("npusched: error: --out: empty path; name an output directory", file=sys.stderr)
            return 2
    _STATE.update(verbose=False, t0=time.perf_counter())
    try:
        rv = app(args=args, prog_name="npusched", standalone_mode=False)
        # typer turns Ctrl-C into an exit code it *returns* here (commands return None)
        if isinstance(rv, int) and not isinstance(rv, bool) and rv != 0:
            if rv == 130:
                print("npusched: error: interrupted", file=sys.stderr)
            return rv
    except typer.Exit as e:
        return int(getattr(e, "exit_code", 0) or 0)
    except typer.Abort:
        print("npusched: error: aborted", file=sys.stderr)
        return 130
    except NpuschedError as e:
        if debug:
            raise
        print(f"npusched: error: {e}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("npusched: error: interrupted", file=sys.stderr)
        return 130
    except OSError as e:
        # a path that cannot be read or written (a file where a directory belongs, a full
        # disk): the environment or the input, not a bug; one line, naming the path if known
        if debug:
            raise
        where = f"{e.filename}: " if e.filename is not None else ""
        print(f"npusched: error: {where}{e.strerror or e}", file=sys.stderr)
        return 2
    except Exception as e:
        if debug:
            raise
        if hasattr(e, "format_message") and hasattr(e, "exit_code"):
            # A usage error from the argument parser (typer/click): one line, no traceback.
            msg = _choice_message(e) or e.format_message()
            if type(e).__name__ == "NoArgsIsHelpError":
                print(msg, file=sys.stderr)
                return 2
            first = msg.strip().splitlines()[0] if msg.strip() else type(e).__name__
            ctx = getattr(e, "ctx", None)
            if first.startswith("No such command") and hasattr(ctx, "command"):
                try:
                    names = ctx.command.list_commands(ctx)  # type: ignore[union-attr]
                except Exception:  # pragma: no cover - not a group
                    names = []
                if names:
                    first = f"{first.rstrip('.')}; allowed: {', '.join(names)}"
            print(f"npusched: error: {first}", file=sys.stderr)
            return 2
        return _internal(e)
    if _STATE["verbose"]:
        print(f"npusched: done in {time.perf_counter() - _STATE['t0']:.1f} s", file=sys.stderr)
    return 0


def _internal(e: BaseException) -> int:
    """An internal error (a bug, not bad input): one line, exit status 1; the traceback is
    behind ``--debug``."""
    text = str(e).strip().splitlines()[0] if str(e).strip() else ""
    print(f"npusched: error: {type(e).__name__}: {text} (rerun with --debug)", file=sys.stderr)
    return 1


def _choice_message(e: Exception) -> str | None:
    """``--scenario 'Z'; allowed: A, B, C`` for a value outside an option's choices (the
    parser's own words otherwise: ``None``)."""
    import re

    param = getattr(e, "param", None)
    m = re.search(r"'(.*)' is not one of (.*?)\.?$", str(getattr(e, "message", "")))
    if param is None or m is None:
        return None
    name = max(getattr(param, "opts", None) or [str(getattr(param, "name", ""))], key=len)
    allowed = ", ".join(x.strip().strip("'") for x in m.group(2).split(","))
    return f"{name} {m.group(1)!r}; allowed: {allowed}"
