"""The documentation: the generated configuration reference matches the models, the tutorials'
Python runs, the README stays short and its links resolve, and the site builds strictly."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from npusched.experiments.schema import markdown_reference

ROOT = Path(__file__).resolve().parents[1]
DOCS = ROOT / "docs"


def test_config_reference_is_generated_from_the_models() -> None:
    page = (DOCS / "reference" / "config.md").read_text(encoding="utf-8")
    assert page == markdown_reference(), (
        "docs/reference/config.md is stale: "
        "python -m npusched.experiments.schema > docs/reference/config.md"
    )


def test_readme_is_short_and_its_links_exist() -> None:
    text = (ROOT / "README.md").read_text(encoding="utf-8")
    assert len(text.splitlines()) < 300
    assert 'pip install -e ".[solver]" && npusched models list' in text
    assert 'pip install -e ".[test]" && python -m pytest' in text
    for target in re.findall(r"\]\(([^)#]+)(?:#[^)]*)?\)", text):
        if "://" not in target:
            assert (ROOT / target).exists(), target


def _python_blocks(page: Path) -> str:
    return "\n".join(re.findall(r"```python\n(.*?)```", page.read_text(encoding="utf-8"), re.S))


@pytest.mark.parametrize(
    "page", ["run-a-config", "temporal-policy", "machine-policy", "add-a-network"]
)
def test_tutorial_code_runs(page: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    pytest.importorskip("onnx")
    from npusched.models.zoo import _ENTRIES
    from npusched.policies.base import POLICIES

    code = _python_blocks(DOCS / "tutorials" / f"{page}.md")
    assert code.strip()
    monkeypatch.chdir(tmp_path)
    entries, policies = dict(_ENTRIES), dict(POLICIES._factories)
    try:
        exec(compile(code, f"docs/tutorials/{page}.md", "exec"), {"__name__": "tutorial"})
    finally:  # the tutorials register a network and a policy: leave the registries as found
        _ENTRIES.clear()
        _ENTRIES.update(entries)
        POLICIES._factories.clear()
        POLICIES._factories.update(policies)


@pytest.mark.slow
def test_mkdocs_builds_strictly(tmp_path: Path) -> None:
    if shutil.which("mkdocs") is None:
        pytest.skip("mkdocs not installed (the [docs] extra)")
    out = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(tmp_path / "s")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        check=False,
    )
    assert out.returncode == 0, out.stderr[-2000:]
