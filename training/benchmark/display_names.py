"""Short names for agents, for the leaderboard's tables and charts: what a reader scans, while
the full spec (a path, a factory) stays in the report and in the command that reproduces a row.

[display_name][training.benchmark.display_names.display_name] reads the spec as text only (a
report is read where its files may not exist): a registered player or a shipped policy keeps
its spec (`greedy`, `pimc:n=32`, `pisti-2p`); a `module:function` factory shows its function; a
path (an agent file, a checkpoint directory) shows its last part without the agent files'
suffix, and keeps its options (`runs/a.pt:play=sample` is `a:play=sample`). A report may
carry its own `display_name` instead (checked by the leaderboard, at most
`MAX_DISPLAY_CHARS` characters).
"""

from __future__ import annotations

import re

from pisti_env.agents.registry import AGENTS, SHIPPED_POLICIES

from .agents import FACTORY

MAX_DISPLAY_CHARS = 40  # a name a table cell and a chart's axis hold on one line
# What an agent file's name ends with, dropped from its short name: pisti-export's TorchScript
# and ONNX, an SB3 MaskablePPO zip, a checkpoint's weights.
AGENT_FILE_SUFFIXES = (".pt", ".onnx", ".zip", ".safetensors")
_SEPARATORS = re.compile(r"[\\/]")


def display_name(spec: str, kind: str | None = None) -> str:
    """The short name of the agent ``spec`` (see the module docstring).

    Args:
        spec: the agent as given to `pisti-benchmark` (a report's `agent`).
        kind: the form `pisti-benchmark` loaded it as (a task result's `agent_kind`:
            `"factory"` for a `module:function`), or `None` to tell from the text.

    Returns the spec itself when no shorter name can be read from it.
    """
    if not isinstance(spec, str):
        raise TypeError(f"an agent spec must be a string, got {type(spec).__name__}")
    text = spec.strip()
    name = text.partition(":")[0].strip()
    if name.lower() in AGENTS or name in SHIPPED_POLICIES:
        return text
    if kind == "factory" or (kind is None and FACTORY.match(text)):
        return text.rpartition(":")[2] or text
    path, options = _path_and_options(text)
    last = _SEPARATORS.split(path.rstrip("/\\"))[-1]
    for suffix in AGENT_FILE_SUFFIXES:
        if last.lower().endswith(suffix) and len(last) > len(suffix):
            last = last[: -len(suffix)]
            break
    if not last:
        return text
    return f"{last}:{options}" if options else last


def _path_and_options(text: str) -> tuple[str, str]:
    """A path spec split at its last ``:`` when what follows is options (``play=sample``), as
    the checkpoint loader splits it; a drive letter's colon (``C:\\runs\\a.pt``) stays."""
    head, colon, tail = text.rpartition(":")
    if colon and head and "=" in tail and not _SEPARATORS.search(tail):
        return head, tail
    return text, ""
