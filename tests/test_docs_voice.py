"""The docs, comments and docstrings speak to users and maintainers: no internal tracker numbers.

A reader of the repository cannot open "issue 18" or "session 9", so text that cites them says
nothing; cite a file in the repository, a date or a commit instead. This walks every text file
the project writes (sources, tests, benchmarks, examples, scripts, docs, the README, CI) and
fails on such a citation, naming the line.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUFFIXES = {".py", ".md", ".ipynb", ".sh", ".toml", ".cu", ".cuh", ".h", ".go", ".rs", ".proto", ".txt"}
PLACES = ("cuzk", "tests", "benchmarks", "examples", "scripts", "docs", ".ci", "README.md", "pyproject.toml")
SKIP_PARTS = {"node_modules", "__pycache__", "target", ".numba-cache", "build"}

#: "issue 18", "issues #14", "Session 9", "sessions 6-8", "work period", "this session"
TRACKER = re.compile(r"\b[Ii]ssues? #?\d+\b|\b[Ss]essions? \d+\b|\bwork[- ]periods?\b|\bthis session\b")


def tracker_citations(text: str) -> list[tuple[int, str]]:
    """``(line number, line)`` for every line of ``text`` that cites a tracker number.

    >>> tracker_citations("fine: see docs/engine.md\\nfixed in issue 18 item 5\\n")
    [(2, 'fixed in issue 18 item 5')]
    >>> tracker_citations("gpu_session.sh; 'os.setsid' starts a new session")
    []
    """
    return [(i, line.strip()) for i, line in enumerate(text.splitlines(), 1) if TRACKER.search(line)]


def _files():
    for place in PLACES:
        path = ROOT / place
        if path.is_file():
            yield path
            continue
        for p in path.rglob("*"):
            if p.is_file() and p.suffix in SUFFIXES and not SKIP_PARTS & set(p.relative_to(ROOT).parts):
                yield p


def test_no_file_cites_an_issue_or_work_period_number():
    this = Path(__file__).resolve()
    found = [f"{p.relative_to(ROOT)}:{i}: {line[:100]}"
             for p in _files() if p.resolve() != this
             for i, line in tracker_citations(p.read_text(encoding="utf-8", errors="replace"))]
    assert not found, "cite files, dates or commits, not tracker numbers:\n" + "\n".join(found)
