"""The licence is stated once and agrees everywhere: the LICENSE file holds the MIT licence,
pyproject.toml declares MIT and ships that file (``license-files``: the wheel carries it under
``.dist-info/licenses/``, which tests/wheel_smoke.sh checks), and CITATION.cff says MIT too."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_license_file_pyproject_and_citation_agree():
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("MIT License\n") and "Permission is hereby granted, free of charge" in text
    assert re.search(r"^Copyright \(c\) \d{4} \S", text, re.MULTILINE), "the LICENSE names its copyright holder"
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    assert project["license"] == "MIT"
    assert project["license-files"] == ["LICENSE"]
    citation = (ROOT / "CITATION.cff").read_text(encoding="utf-8")
    assert re.search(r"^license: MIT$", citation, re.MULTILINE)
