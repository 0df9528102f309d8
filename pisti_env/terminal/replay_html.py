"""A replay file as one self-contained HTML page (``pisti-replay FILE --html OUT.html``).

The page needs no server and no network: its style, script and every picture are inline, and
its Content-Security-Policy forbids anything else (no fetch, no external file, only its own
script and style, allowed by hash). Each game of the file is played through the engine again
([`pisti_env.tools.replay.iter_replay`][pisti_env.tools.replay.iter_replay], which checks every deck and result), and every record
becomes a frame: the table after the deal, after every move, at every hand's end (with the
hand's score breakdown and the match score) and at the game's end. A person steps through the
frames with buttons, the keyboard (←/→ a step, PgUp/PgDn a hand, Home/End, space plays: from the
first step again when at the last) or a slider; a file of several games gets a game chooser. A
page holds at most `MAX_PAGE_FRAMES` steps (every picture is inline): a larger choice of games
is refused before anything is drawn.

Frames are drawn from one point of view, chosen when the page is written: a seat's
(`seat_table`, from its [`SeatView`][pisti_env.SeatView]
only, so the page holds nothing that seat may not know, R30–R31: no other hand, no deck, no
seed, no face-down card it did not play) or all cards open (the spectator's,
`open_table`).

A replay file is untrusted input: every text taken from it (names, sources) is escaped, and each
frame is an inert ``<template>`` the script only clones, never parses from a string.
"""

from __future__ import annotations

import base64
import hashlib
import os
from dataclasses import dataclass
from typing import Any, Sequence

from ..views.view import SeatView
from ..tools.replay import RecordedGame, iter_replay
from .events import BLUFF_COLUMNS, SUMMARY_COLUMNS, describe_move, snapshot
from .screen import side_names
from ..util.atomic import write_bytes_atomic
from ..drawing.scene import open_table, seat_table
from ..drawing.svg import card_defs, table_svg, text


@dataclass(frozen=True)
class Frame:
    """One step of a game on the page: the record it follows (``kind``: ``hand``, ``action``,
    ``hand_end`` or ``end``), the hand it belongs to, a line telling what happened, the table's
    SVG (without card definitions) and, at a hand's end, the breakdown table's HTML."""

    kind: str
    hand: int
    note: str
    svg: str
    breakdown: str = ""


def _breakdown(result: Sequence[dict[str, Any]], sides: Sequence[str], match_scores: Sequence[int],
               target: int | None) -> str:
    """A finished hand's result per side (public once the hand is over, R30) as an HTML table,
    with the match scores after it."""
    columns = SUMMARY_COLUMNS + (BLUFF_COLUMNS if "bluff_points" in result[0] else ()) + (("total", "total"),)
    head = "".join(f"<th>{text(title)}</th>" for _, title in columns) + ("" if target is None else "<th>match</th>")
    rows = []
    for side, name in enumerate(sides):
        cells = "".join(f'<td data-field="{key}">{int(result[side][key])}</td>' for key, _ in columns)
        if target is not None:
            cells += f'<td data-field="match">{int(match_scores[side])}</td>'
        rows.append(f'<tr data-side="{side}"><th scope="row">{text(name)}</th>{cells}</tr>')
    return f'<table class="breakdown"><thead><tr><th>side</th>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def replay_frames(recorded: RecordedGame, names: Sequence[str], seat: int | None = None) -> list[Frame]:
    """Every frame of ``recorded``, from ``seat``'s view (``None``: all cards open).

    Raises [`ReplayError`][pisti_env.tools.replay.ReplayError] where the engine does not reproduce the
    record, ``ValueError`` for a seat the game does not have or names of the wrong length.
    """
    n = recorded.settings.num_players
    if seat is not None and not (isinstance(seat, int) and 0 <= seat < n):
        raise ValueError(f"seat must be 0..{n - 1} for this game (or None for all cards open), got {seat!r}")
    if len(names) != n:
        raise ValueError(f"names must give one name per seat ({n}), got {len(names)}")
    names = [str(name) for name in names]
    target = recorded.settings.target
    frames: list[Frame] = []
    before = None
    hand = 1
    for _, record, game in iter_replay(recorded):
        kind = record["type"]
        watcher = SeatView(game, 0 if seat is None else seat)  # a seat's view; spectators read public facts
        note, breakdown = "", ""
        if kind == "hand":
            hand = record["hand"]
            note = f"Hand {hand}: {names[record['dealer']]} deals."
        elif kind == "action":
            note = describe_move(before, watcher, record["seat"], record["action"], names, viewer=seat).plain
        elif kind == "hand_end":
            hand = record["hand"]
            note = f"Hand {hand} is over."
            breakdown = _breakdown(record["result"], side_names(names, watcher), record["match_scores"], target)
        else:
            note = "The game is over." if record["complete"] else "The game was left unfinished."
        last_move = note if kind == "action" else ""
        table = seat_table(watcher, names, last_move) if seat is not None else open_table(game, names, last_move)
        frames.append(Frame(kind, hand, note, table_svg(table, defs=False), breakdown))
        before = snapshot(watcher)
    return frames


_STYLE = """
body{margin:0;background:#102a1c;color:#eee;font-family:"DejaVu Sans",Verdana,Arial,sans-serif}
header,main,footer{max-width:980px;margin:0 auto;padding:8px 12px}
h1{font-size:18px;margin:6px 0}
.defs{position:absolute;width:0;height:0;overflow:hidden}
#stage svg{width:100%;max-width:800px;height:auto;display:block;border-radius:6px}
#note{font-size:15px;min-height:1.4em;margin:6px 0}
.controls{display:flex;flex-wrap:wrap;gap:6px;align-items:center;margin:6px 0}
button,select{font-size:14px;padding:4px 10px;border-radius:4px;border:1px solid #789;background:#234;color:#eee}
button:focus,select:focus,input:focus{outline:2px solid #ffd54f}
#slider{flex:1;min-width:200px}
#position{font-variant-numeric:tabular-nums}
table.breakdown{border-collapse:collapse;margin:8px 0;font-size:14px}
table.breakdown th,table.breakdown td{border:1px solid #567;padding:3px 8px;text-align:right}
table.breakdown th[scope=row]{text-align:left}
.help{color:#aaa;font-size:13px}
"""

_SCRIPT = """
(function () {
  "use strict";
  var games = Array.prototype.slice.call(document.querySelectorAll(".game"));
  var stage = document.getElementById("stage"), note = document.getElementById("note");
  var extra = document.getElementById("extra"), slider = document.getElementById("slider");
  var position = document.getElementById("position"), chooser = document.getElementById("game");
  var playButton = document.getElementById("play");
  var game = 0, step = 0, timer = null;
  function frames() { return games[game].querySelectorAll("template"); }
  function show(i) {
    var all = frames();
    step = Math.max(0, Math.min(all.length - 1, i));
    var frame = all[step].content.cloneNode(true);
    var text = frame.querySelector(".note"), table = frame.querySelector(".breakdown");
    stage.replaceChildren(frame.querySelector("svg"));
    note.textContent = text ? text.textContent : "";
    extra.replaceChildren();
    if (table) { extra.appendChild(table); }
    slider.max = String(all.length - 1);
    slider.value = String(step);
    position.textContent = "step " + (step + 1) + " / " + all.length + " \\u00b7 hand " + all[step].dataset.hand;
    document.body.dataset.step = String(step);
  }
  function handStart(direction) {
    var all = frames(), i = step + direction;
    while (i > 0 && i < all.length - 1 && all[i].dataset.kind !== "hand") { i += direction; }
    show(i);
  }
  function play() {
    if (timer) { clearInterval(timer); timer = null; playButton.textContent = "play"; return; }
    if (step >= frames().length - 1) { show(0); }  // at the end, play starts again from the first step
    playButton.textContent = "pause";
    timer = setInterval(function () {
      if (step >= frames().length - 1) { play(); } else { show(step + 1); }
    }, 700);
  }
  function chooseGame(g) { game = g; games.forEach(function (el, k) { el.hidden = k !== g; }); show(0); }
  var actions = {first: function () { show(0); }, prevhand: function () { handStart(-1); },
                 prev: function () { show(step - 1); }, next: function () { show(step + 1); },
                 nexthand: function () { handStart(1); }, last: function () { show(frames().length - 1); },
                 play: play};
  Array.prototype.forEach.call(document.querySelectorAll("button[data-action]"), function (b) {
    b.addEventListener("click", function () { actions[b.dataset.action](); });
  });
  slider.addEventListener("input", function () { show(parseInt(slider.value, 10)); });
  if (chooser) { chooser.addEventListener("change", function () { chooseGame(parseInt(chooser.value, 10)); }); }
  document.addEventListener("keydown", function (e) {
    if (e.target === chooser) { return; }
    var keys = {ArrowRight: "next", ArrowLeft: "prev", PageDown: "nexthand", PageUp: "prevhand",
                Home: "first", End: "last", " ": "play"};
    var name = keys[e.key];
    if (name) { e.preventDefault(); actions[name](); }
  });
  chooseGame(0);
})();
"""


# The step buttons: (action, label, tooltip with the key).
_BUTTONS = (("first", "|◀", "first (Home)"), ("prevhand", "◀◀ hand", "previous hand (PgUp)"),
            ("prev", "◀", "back (←)"), ("next", "▶", "forward (→)"), ("nexthand", "hand ▶▶", "next hand (PgDn)"),
            ("last", "▶|", "last (End)"))


def _csp_hash(source: str) -> str:
    return "'sha256-" + base64.b64encode(hashlib.sha256(source.encode("utf-8")).digest()).decode("ascii") + "'"


def _game_section(index: int, frames: Sequence[Frame]) -> str:
    parts = [f'<div class="game" data-game="{index}" hidden>']
    for i, f in enumerate(frames):
        parts.append(f'<template data-step="{i}" data-kind="{f.kind}" data-hand="{f.hand}">{f.svg}'
                     f'<p class="note">{text(f.note)}</p>{f.breakdown}</template>')
    parts.append("</div>")
    return "".join(parts)


def replay_page(games: Sequence[tuple[RecordedGame, Sequence[str]]], seat: int | None = None,
                title: str = "Pişti replay") -> str:
    """The HTML page of ``games`` (each a recorded game with a display name per seat), from
    ``seat``'s view or (``None``) with all cards open; see the module docstring."""
    return _page(games, seat, title)[0]


# A page holds every frame's picture inline (about 5 KB each): at most this many frames on one
# page (about 16 MB, a few times that while it is built), counted from the records before any
# picture is drawn. A file of more games is written a few games at a time (pisti-replay --game A-B).
MAX_PAGE_FRAMES = 3000


def page_frames(games: Sequence[tuple[RecordedGame, Sequence[str]]]) -> int:
    """The frames a page of ``games`` would hold (one per record after each game's header: the
    deals, the moves, the hands' ends and the game's end), counted without drawing any."""
    return sum(len(recorded.records) for recorded, _ in games)


def check_page_size(games: Sequence[tuple[RecordedGame, Sequence[str]]]) -> None:
    """Refuse (``ValueError`` naming the limit) a page of more than `MAX_PAGE_FRAMES` frames."""
    frames = page_frames(games)
    if frames > MAX_PAGE_FRAMES:
        raise ValueError(
            f"a replay page holds at most {MAX_PAGE_FRAMES} steps (about 16 MB) and these {len(games)} game(s) have "
            f"{frames}: write fewer games per page (pisti-replay --game K for one, --game A-B for a range)"
        )


def _page(games: Sequence[tuple[RecordedGame, Sequence[str]]], seat: int | None, title: str) -> tuple[str, int]:
    """`replay_page` and its number of frames."""
    if not games:
        raise ValueError("replay_page needs at least one game")
    check_page_size(games)
    view = "all cards open" if seat is None else f"seat {seat}'s view"
    sections, labels, count = [], [], 0
    for k, (recorded, names) in enumerate(games):
        frames = replay_frames(recorded, names, seat)
        count += len(frames)
        sections.append(_game_section(k, frames))
        source = recorded.header["meta"].get("source", "")
        label = f"Game {k + 1}: " + " · ".join(str(n) for n in names) + (f" ({source})" if source else "")
        labels.append(text(label, 120))
    if len(games) > 1:
        options = "".join(f'<option value="{k}">{label}</option>' for k, label in enumerate(labels))
        chooser = f'<label>game <select id="game">{options}</select></label>'
    else:
        chooser = f"<p>{labels[0]}</p>"
    csp = (f"default-src 'none'; script-src {_csp_hash(_SCRIPT)}; style-src {_csp_hash(_STYLE)}; "
           "img-src data:; base-uri 'none'; form-action 'none'")
    buttons = "".join(f'<button type="button" data-action="{a}" title="{t}">{label}</button>' for a, label, t in _BUTTONS)
    page = (
        "<!DOCTYPE html>\n"
        f'<html lang="en"><head><meta charset="utf-8">'
        f'<meta http-equiv="Content-Security-Policy" content="{csp}">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>{text(title)}</title><style>{_STYLE}</style></head><body>"
        f'<header><h1>{text(title)} <small>({view})</small></h1>{chooser}</header>'
        f'<svg class="defs" aria-hidden="true" xmlns="http://www.w3.org/2000/svg" '
        f'xmlns:xlink="http://www.w3.org/1999/xlink">{card_defs()}</svg>'
        f'<main><div class="controls">{buttons}<button type="button" id="play" data-action="play">play</button>'
        f'<input id="slider" type="range" min="0" max="0" value="0" aria-label="step">'
        f'<span id="position"></span></div>'
        f'<div id="stage"></div><p id="note" aria-live="polite"></p><div id="extra"></div>'
        f'<p class="help">Keys: ← → step · PgUp PgDn hand · Home End · space plays</p></main>'
        + "".join(sections)
        + f"<script>{_SCRIPT}</script></body></html>\n"
    )
    return page, count


def write_replay_html(path: str | os.PathLike, games: Sequence[tuple[RecordedGame, Sequence[str]]],
                      seat: int | None = None, title: str = "Pişti replay") -> int:
    """Write `replay_page` to ``path`` (its folder created); returns the number of frames."""
    page, count = _page(games, seat, title)
    # Whole or not at all, through an exclusively created temporary (never a link planted at a
    # fixed name); text UTF-8 cannot encode (a lone surrogate) is written as "?".
    write_bytes_atomic(path, page.encode("utf-8", errors="replace"))
    return count
