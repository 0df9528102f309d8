"""A `pisti-benchmark` report read as untrusted input, for the leaderboard
([leaderboard][training.benchmark.leaderboard]), and its texts escaped for a page.

Each report is read as a regular file at its own name (never through a link, never a FIFO or
device, at most `MAX_REPORT_BYTES`: the checkpoints' reader, `read_regular` of
`pisti_env.util.regular_files`), parsed without NaN or infinities, and checked field by field
([`check_report`][training.benchmark.report_check.check_report]): a text that reaches the page
holding a control character is refused, naming the file and the field. Every text from a report
is escaped for where it lands: in a table cell ([`code`][training.benchmark.report_check.code]),
in a raw HTML block ([`html_code`][training.benchmark.report_check.html_code]).
"""

from __future__ import annotations

import html
import json
import math
import unicodedata
from typing import Any

from pisti_env.util.regular_files import read_regular

from .display_names import MAX_DISPLAY_CHARS
from .run import REPORT_FORMAT
from .tasks import DEAL_SETS, FULL, played_deal_set

MAX_REPORT_BYTES = 1_048_576  # 1 MiB: a report is a few kilobytes
MAX_TEXT_CHARS = 2000  # an agent, a command, how it was made
# Characters a page must not carry from a report: control characters (line breaks included),
# line and paragraph separators, and the marks that reorder what a reader sees (bidi controls).
_BIDI = set("\u200e\u200f\u202a\u202b\u202c\u202d\u202e\u2066\u2067\u2068\u2069")
# What a code span's text becomes inside <code>: every character Markdown or HTML reads as syntax.
_ENTITIES = {ch: f"&#{ord(ch)};" for ch in "&<>\"'`|\\*_[]{}()#+-.!~:"}


def _no_constant(name: str) -> None:
    raise ValueError(f"{name} is not a number JSON allows")


def read_report(path: str) -> dict[str, Any]:
    """The report at ``path``, read as untrusted input (see the module docstring) and checked
    ([`check_report`][training.benchmark.report_check.check_report]); a one-line ``ValueError``
    naming the file for anything wrong."""
    data = read_regular(path, MAX_REPORT_BYTES)
    try:
        report = json.loads(data.decode("utf-8"), parse_constant=_no_constant)
    except (ValueError, RecursionError) as error:  # JSONDecodeError and UnicodeDecodeError are ValueErrors
        problem = "nested too deeply" if isinstance(error, RecursionError) else str(error).splitlines()[0][:200]
        raise ValueError(f"{path}: not a JSON report ({problem})") from None
    return check_report(report, path)


def _bad(path: str, field: str, problem: str) -> ValueError:
    return ValueError(f"{path}: field {field} {problem}")


def _object(value: Any, path: str, field: str) -> dict[str, Any]:
    if not isinstance(value, dict):
        raise _bad(path, field, f"must be a JSON object, got {_kind(value)}")
    return value


def _kind(value: Any) -> str:
    return {dict: "an object", list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
        type(value), "a number")


def refused_character(text: str) -> str | None:
    """The first character of ``text`` that no page may carry (a control character, a line or
    paragraph separator, a direction override), or ``None``: the one rule for every text that
    reaches the leaderboard, checked here on a report and by ``pisti-benchmark``'s flags."""
    return next((ch for ch in text if ch in _BIDI or unicodedata.category(ch) in ("Cc", "Zl", "Zp")), None)


def _text(value: Any, path: str, field: str) -> str:
    """``value`` if it is a string of at most `MAX_TEXT_CHARS` without control characters."""
    if not isinstance(value, str):
        raise _bad(path, field, f"must be a string, got {_kind(value)}")
    if len(value) > MAX_TEXT_CHARS:
        raise _bad(path, field, f"is {len(value)} characters long, more than {MAX_TEXT_CHARS}")
    bad = refused_character(value)
    if bad is not None:
        raise _bad(path, field, f"holds the control character {ascii(bad)}: refused (a page must not carry it)")
    return value


def _number(value: Any, path: str, field: str, low: float = -math.inf) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not low <= value < math.inf:
        raise _bad(path, field, f"must be a finite number{f' >= {low}' if low > -math.inf else ''}, "
                                f"got {_kind(value) if not isinstance(value, (int, float)) else repr(value)}")
    return float(value)


def _stat(value: Any, path: str, field: str) -> None:
    stat = _object(value, path, field)
    _number(stat.get("mean"), path, f"{field}.mean")
    if stat.get("half_width") is not None:
        _number(stat["half_width"], path, f"{field}.half_width", 0.0)


def _array(value: Any, path: str, field: str) -> list[Any]:
    if not isinstance(value, list):
        raise _bad(path, field, f"must be an array, got {_kind(value)}")
    return value


def check_report(report: Any, path: str) -> dict[str, Any]:
    """``report`` (a parsed report from ``path``) if every field the leaderboard reads has its
    type and range, and every text that reaches the page (``agent``, ``display_name``, ``made_with``, each
    task's ``command`` and opponents) is one line of at most `MAX_TEXT_CHARS` characters
    without control characters; else a ``ValueError`` naming the file and the field."""
    report = _object(report, path, "(top level)")
    if report.get("format") != REPORT_FORMAT:
        raise ValueError(f"{path}: not a pisti-benchmark report")
    _text(report.get("agent"), path, "agent")
    if report.get("display_name") is not None:
        shown = _text(report["display_name"], path, "display_name")
        if not shown.strip() or len(shown) > MAX_DISPLAY_CHARS:
            raise _bad(path, "display_name", f"must be a name of 1 to {MAX_DISPLAY_CHARS} characters, "
                                             f"got {len(shown)}{' blank' if not shown.strip() else ''}")
    if report.get("made_with") is not None:
        _text(report["made_with"], path, "made_with")
    _object(report.get("versions"), path, "versions")
    for i, result in enumerate(_array(report.get("tasks"), path, "tasks")):
        where = f"tasks[{i}]"
        result = _object(result, path, where)
        task = _object(result.get("task"), path, f"{where}.task")
        for key in ("name", "id"):
            _text(task.get(key), path, f"{where}.task.{key}")
        if not isinstance(result.get("comparable"), bool):
            raise _bad(path, f"{where}.comparable", f"must be true or false, got {_kind(result.get('comparable'))}")
        count = result.get("count")
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise _bad(path, f"{where}.count", f"must be a whole number >= 0, got {_kind(count)} {count!r}"[:200])
        if result.get("deal_set", FULL) not in DEAL_SETS:
            raise _bad(path, f"{where}.deal_set", f"must be one of {list(DEAL_SETS)}")
        which, digest = played_deal_set(result)
        if digest is not None:
            _text(digest, path, f"{where}.task.{'deal_hash' if which == FULL else 'short_hash'}")
        _text(result.get("command"), path, f"{where}.command")
        _stat(result.get("panel_mean"), path, f"{where}.panel_mean")
        for j, opponent in enumerate(_array(result.get("opponents"), path, f"{where}.opponents")):
            opponent = _object(opponent, path, f"{where}.opponents[{j}]")
            _text(opponent.get("opponent"), path, f"{where}.opponents[{j}].opponent")
            _stat(opponent.get("metric"), path, f"{where}.opponents[{j}].metric")
    return report


def code(text: str) -> str:
    """``text`` as inline code on a Markdown page, in a table cell, read as nothing but text.

    Text without a backtick, ``|``, ``<``, ``&`` or a line break is a plain code span (a
    Markdown renderer escapes what is inside one); any other is an HTML ``<code>`` element
    whose every Markdown and HTML syntax character is an entity, so no backtick run can end
    the span, no ``|`` split the table cell, and no tag or entity reach the page."""
    if not any(ch in text for ch in "`|<>&\\\n\r"):
        return f"`{text}`"
    return "<code>" + "".join(_ENTITIES.get(ch, ch) for ch in text) + "</code>"


def html_code(text: str) -> str:
    """``text`` as an HTML ``<code>`` element inside a raw HTML block of a Markdown page (which
    no renderer reads as Markdown): its HTML characters as entities, so no tag or entity of
    the text reaches the page."""
    return f"<code>{html.escape(text, quote=True)}</code>"
