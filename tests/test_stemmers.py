"""text/stemmers.py: one Snowball language imported alone gives the package's stems; a one-search process
imports only what it stems with, and the memory service leaves the search pipeline for the search."""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest
import snowballstemmer

from openclaw_cli.memory.text.scripts import SNOWBALL_NAMES
from openclaw_cli.memory.text.stemmers import PRIVATE_PACKAGE, stemmer
from tests.conftest import ROOT

EVAL_DIR = ROOT / "fixtures" / "eval"


def _eval_words() -> set[str]:
    """Every word of the eval set's memories, queries and distractors, casefolded."""
    words: set[str] = set()
    for path in sorted(EVAL_DIR.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                text = json.dumps(json.loads(line), ensure_ascii=False)
                words.update(re.findall(r"[^\W\d_]+", text.casefold()))
    return words


@pytest.mark.parametrize("language", sorted(SNOWBALL_NAMES.values()))
def test_each_language_stems_as_the_snowball_package_does(language: str) -> None:
    words = _eval_words()
    assert len(words) > 1000  # the comparison covers a real vocabulary
    ours, package = stemmer(language), snowballstemmer.stemmer(language).stemWord
    differing = {word: (ours(word), package(word)) for word in words if ours(word) != package(word)}
    assert differing == {}
    assert ours("running") == package("running")


def test_an_unknown_language_is_refused() -> None:
    with pytest.raises(ModuleNotFoundError):
        stemmer("klingon")


def _fresh(script: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=120, cwd=ROOT
    )


def test_english_stemming_imports_the_english_module_alone() -> None:
    script = (
        "import sys\n"
        "from openclaw_cli.memory.text.analysis import query_terms\n"
        "print(' '.join(query_terms('which colour themes does he like')))\n"
        "loaded = sorted(m for m in sys.modules if m.startswith(" + repr(PRIVATE_PACKAGE + ".") + "))\n"
        "print(' '.join(m.rsplit('.', 1)[1] for m in loaded))\n"
        "assert 'snowballstemmer' not in sys.modules\n"
    )
    proc = _fresh(script)
    assert proc.returncode == 0, proc.stderr
    terms, modules = proc.stdout.splitlines()
    assert "theme" in terms.split()  # stemmed: "themes" -> "theme"
    assert modules.split() == ["among", "basestemmer", "english_stemmer"]


def test_the_memory_service_leaves_the_search_pipeline_to_the_search() -> None:
    # A one-search process starts loading the models before it imports the pipeline (service.search).
    script = (
        "import sys\n"
        "import openclaw_cli.memory.service\n"
        "assert 'openclaw_cli.memory.search.pipeline' not in sys.modules, 'pipeline imported'\n"
        "assert 'numpy' not in sys.modules, 'numpy imported'\n"
    )
    proc = _fresh(script)
    assert proc.returncode == 0, proc.stderr
