"""Game replays: JSON lines that record a whole game, and the engine run again over them.

A replay file holds one or more games. Each line is one JSON object with a ``type``:

* ``game``: the start of a game: ``format`` (``"pisti-replay"``), ``version``, ``settings``
  (RULES.md's table, `Settings.to_dict`), the arguments the [`Game`][pisti_env.game.Game]
  was built with (``seed``, ``deck``, ``dealer``; ``null`` where not given), ``players`` (the
  spec of each seat) and ``meta`` (where it came from, names, versions, ...).
* ``hand``: a hand dealt: ``hand`` (1, 2, ...), ``dealer`` and ``deck`` (text codes, item 0
  dealt first, R6).
* ``action``: ``seat`` and ``action`` (the action id, R2/R29), with ``text`` for people.
* ``hand_end``: ``hand``, ``result`` (per side, [`Game.hand_scores`][pisti_env.game.Game.hand_scores]' keys) and
  ``match_scores`` after the hand.
* ``end``: ``hands``, ``match_scores``, ``winner`` (side or ``null``) and ``complete``
  (``false`` when the game was left before its end, e.g. a person quit ``pisti-play``).

[`GameRecorder`][pisti_env.tools.replay.GameRecorder] builds the game and writes these records as it is played.
[`read_replays`][pisti_env.tools.replay.read_replays] reads a file back, refusing a malformed or truncated one with a
[`ReplayError`][pisti_env.tools.replay.ReplayError] naming the line, and [`replay`][pisti_env.tools.replay.replay] (or [`iter_replay`][pisti_env.tools.replay.iter_replay], one record at
a time) plays a recorded game through the engine again, checking that every deck, hand result
and the final scores come out exactly as recorded. A replay is a spectator's record (every
deck in full): it is written for people and tools after the game, never shown to a player.
"""

from __future__ import annotations

import json
import os
import stat
from dataclasses import dataclass, field
from typing import Any, BinaryIO, Callable, Iterable, Iterator, Sequence, TextIO

from ..rules.actions import action_to_text
from ..rules.cards import card_to_text, parse_card
from ..util.regular_files import file_kind
from ..game.engine import Game
from ..rules.settings import make_settings, Settings

FORMAT = "pisti-replay"
VERSION = 1
RECORD_TYPES = ("game", "hand", "action", "hand_end", "end")
# A replay is untrusted input: a line may hold at most this many bytes (a record is well under a
# kilobyte; a game record with long names a few) and nest JSON arrays/objects this deep (the
# records nest three levels), so a crafted or corrupt file ends in a ReplayError, never in
# MemoryError or RecursionError.
MAX_LINE_BYTES = 1 << 20
MAX_DEPTH = 32

Record = dict[str, Any]


class ReplayError(ValueError):
    """A replay file that cannot be read, or a recorded game the engine does not reproduce.
    The message names the file and line (where there is one) and what is wrong."""


def _deck_codes(game: Game) -> list[str]:
    return [card_to_text(p) for p in game.deck]


class GameRecorder:
    """A [`Game`][pisti_env.game.Game] that records itself: build it here, then step it with `step`.

    Args:
        settings: the game's settings.
        players: the player spec (or a name) of each seat, recorded as they are.
        sink: called with each record (a dict) in order: ``list.append``, or
            `line_writer` of an open file.
        seed: the game's seed, passed to [`Game`][pisti_env.game.Game] and recorded (as
            ``deck`` and ``dealer`` are), so that [`replay`][pisti_env.tools.replay.replay]
            builds the very same game.
        deck: the first hand's deck (card ids or text codes, as [`Game`][pisti_env.game.Game]
            takes it), or ``None`` to shuffle with ``seed``.
        dealer: the first hand's dealer seat, or ``None`` to draw it from ``seed``.
        meta: anything JSON-able to keep with the game (source, names, versions, seating).

    The ``game`` record and the first ``hand`` record are written at once.
    """

    def __init__(
        self,
        settings: Settings,
        players: Sequence[str],
        sink: Callable[[Record], None],
        *,
        seed: int | None = None,
        deck: Sequence[int | str] | None = None,
        dealer: int | None = None,
        meta: dict[str, Any] | None = None,
    ) -> None:
        self.game = Game(settings, seed=seed, deck=deck, dealer=dealer)
        if len(players) != self.game.num_players:
            raise ValueError(f"players must name every seat: {self.game.num_players} seats, got {len(players)}")
        self._sink = sink
        self.ended = False
        sink({
            "type": "game", "format": FORMAT, "version": VERSION, "settings": settings.to_dict(),
            "seed": seed, "deck": None if deck is None else [card_to_text(parse_card(c)) for c in deck],
            "dealer": dealer, "players": [str(p) for p in players], "meta": dict(meta or {}),
        })
        self._hand_record()

    def _hand_record(self) -> None:
        game = self.game
        self._sink({"type": "hand", "hand": game.hands_completed + 1, "dealer": game.dealer, "deck": _deck_codes(game)})

    def step(self, action: int) -> None:
        """Take ``action`` for the seat to move ([`Game.step`][pisti_env.game.Game.step], whose errors leave both the
        game and the record unchanged) and record it, with a hand's end and the next deal."""
        game = self.game
        seat, hands = game.turn, game.hands_completed
        game.step(action)
        self._sink({"type": "action", "seat": seat, "action": int(action), "text": action_to_text(int(action))})
        if game.hands_completed > hands:
            self._sink({
                "type": "hand_end", "hand": game.hands_completed, "result": game.last_hand_result,
                "match_scores": list(game.match_scores),
            })
            if game.done:
                self.finish()
            else:
                self._hand_record()

    def finish(self, reason: str | None = None) -> None:
        """Write the ``end`` record (once): ``complete`` is false if the game is not over;
        ``reason`` (kept as the record's ``reason``) says why a game was left unfinished (a
        player that failed to move), for readers to show."""
        if self.ended:
            return
        self.ended = True
        game = self.game
        record = {
            "type": "end", "complete": game.done, "hands": game.hands_completed,
            "match_scores": list(game.match_scores), "winner": game.winner if game.done else None,
        }
        if reason is not None:
            record["reason"] = str(reason)
        self._sink(record)


def line_writer(stream: TextIO) -> Callable[[Record], None]:
    """A sink for [`GameRecorder`][pisti_env.tools.replay.GameRecorder] writing each record as a JSON line to ``stream`` and
    flushing it, so a game left half way still has its lines on disk."""

    def write(record: Record) -> None:
        stream.write(json.dumps(record, ensure_ascii=False) + "\n")
        stream.flush()

    return write


def write_records(records: Sequence[Record], path: str | os.PathLike, append: bool = False) -> None:
    """Write ``records`` (a recorder's output) to ``path`` as JSON lines, creating its folder."""
    folder = os.path.dirname(os.fspath(path))
    if folder:
        os.makedirs(folder, exist_ok=True)
    with open(path, "a" if append else "w", encoding="utf-8") as f:
        write = line_writer(f)
        for record in records:
            write(record)


# ---------------------------------------------------------------------------- reading
@dataclass
class RecordedGame:
    """One game of a replay file: its records with their line numbers (1-based)."""

    path: str
    header: Record
    header_line: int
    records: list[tuple[int, Record]] = field(default_factory=list)  # every record after the header

    @property
    def settings(self) -> Settings:
        return make_settings(**self.header["settings"])

    @property
    def players(self) -> list[str]:
        return list(self.header["players"])

    @property
    def end(self) -> Record:
        return self.records[-1][1]

    def actions(self) -> list[tuple[int, int]]:
        """``(seat, action)`` of every recorded action, in order."""
        return [(r["seat"], r["action"]) for _, r in self.records if r["type"] == "action"]


# The keys each record type needs, with the JSON types allowed.
_INT, _LIST, _DICT = (int,), (list,), (dict,)
_OPT_INT, _OPT_LIST = (int, type(None)), (list, type(None))
_FIELDS: dict[str, dict[str, tuple[type, ...]]] = {
    "game": {"format": (str,), "version": _INT, "settings": _DICT, "seed": _OPT_INT, "deck": _OPT_LIST,
             "dealer": _OPT_INT, "players": _LIST, "meta": _DICT},
    "hand": {"hand": _INT, "dealer": _INT, "deck": _LIST},
    "action": {"seat": _INT, "action": _INT},
    "hand_end": {"hand": _INT, "result": _LIST, "match_scores": _LIST},
    "end": {"complete": (bool,), "hands": _INT, "match_scores": _LIST, "winner": _OPT_INT},
}


def _shown(value: Any, limit: int = 60) -> str:
    """``repr(value)``, cut to ``limit`` characters: an error message quotes file content briefly."""
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _check_record(record: Any, where: str) -> Record:
    if not isinstance(record, dict):
        raise ReplayError(f"{where}: expected a JSON object, got {type(record).__name__}")
    kind = record.get("type")
    if not isinstance(kind, str) or kind not in _FIELDS:
        raise ReplayError(f"{where}: unknown record type {_shown(kind)}; expected one of {list(RECORD_TYPES)}")
    for key, types in _FIELDS[kind].items():
        if key not in record:
            raise ReplayError(f"{where}: a {kind!r} record needs {key!r}")
        value = record[key]
        if isinstance(value, bool) and bool not in types or not isinstance(value, types):
            allowed = " or ".join("null" if t is type(None) else t.__name__ for t in types)
            raise ReplayError(f"{where}: {kind} record's {key!r} must be {allowed}, got {_shown(value)}")
    if kind == "game":
        if not all(isinstance(p, str) for p in record["players"]):
            raise ReplayError(f"{where}: game record's 'players' must be a list of strings, got {_shown(record['players'])}")
        if record["format"] != FORMAT:
            raise ReplayError(f"{where}: not a pisti replay (format {_shown(record['format'])}, expected {FORMAT!r})")
        if record["version"] != VERSION:
            raise ReplayError(f"{where}: replay version {record['version']} is not supported (this code reads {VERSION})")
        try:
            make_settings(**record["settings"])
        except (TypeError, ValueError) as err:
            raise ReplayError(f"{where}: bad settings: {err}") from None
    return record


def _too_deep(line: str) -> bool:
    """Whether the JSON text ``line`` nests arrays/objects deeper than `MAX_DEPTH`
    (brackets inside strings do not count). Only lines with that many brackets are scanned."""
    if line.count("[") + line.count("{") <= MAX_DEPTH:
        return False
    depth, in_string, escaped = 0, False, False
    for ch in line:
        if in_string:
            if escaped:
                escaped = False
            elif ch == "\\":
                escaped = True
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                return True
        elif ch in "]}":
            depth -= 1
    return False


def _parse_line(line: str, where: str) -> Any:
    """The JSON value of one line, or a [`ReplayError`][pisti_env.tools.replay.ReplayError] saying why there is none."""
    if len(line) > MAX_LINE_BYTES:
        raise ReplayError(f"{where}: the line is longer than {MAX_LINE_BYTES} characters")
    if _too_deep(line):
        raise ReplayError(f"{where}: JSON nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(line)
    except json.JSONDecodeError as err:
        raise ReplayError(f"{where}: not valid JSON ({err.msg} at column {err.colno}): truncated or edited?") from None
    except (ValueError, RecursionError) as err:  # e.g. an integer of more digits than Python converts
        raise ReplayError(f"{where}: not a readable JSON record ({str(err).split(';')[0]})") from None


def parse_replay_lines(lines: Iterable[str] | TextIO, path: str = "<replay>") -> list[RecordedGame]:
    """The games in replay ``lines`` (a file's lines). Raises [`ReplayError`][pisti_env.tools.replay.ReplayError] naming the
    line for text that is not JSON (or nests deeper than `MAX_DEPTH`, or is longer than
    `MAX_LINE_BYTES`), a record of an unknown type or with missing or mistyped fields,
    records outside a game, and a file that ends inside a game (truncated)."""
    games: list[RecordedGame] = []
    current: RecordedGame | None = None
    line_no = 0
    for line_no, line in enumerate(lines, 1):
        where = f"{path}, line {line_no}"
        if not isinstance(line, str):
            raise ReplayError(f"{where}: expected a line of text, got {type(line).__name__}")
        if not line.strip():
            raise ReplayError(f"{where}: empty line (every line must be one JSON record)")
        record = _check_record(_parse_line(line, where), where)
        if record["type"] == "game":
            if current is not None:
                raise ReplayError(f"{where}: a new game starts before the game of line {current.header_line} "
                                  "has its 'end' record: that game is truncated")
            current = RecordedGame(path, record, line_no)
            continue
        if current is None:
            raise ReplayError(f"{where}: a {record['type']!r} record before any 'game' record")
        current.records.append((line_no, record))
        if record["type"] == "end":
            games.append(current)
            current = None
    if current is not None:
        raise ReplayError(
            f"{path}, line {line_no}: the file ends inside the game that starts at line "
            f"{current.header_line} (no 'end' record): the file is truncated"
        )
    if not games:
        raise ReplayError(f"{path}, line {line_no}: no game in the file")
    return games


def _text_lines(stream: BinaryIO, path: str) -> Iterator[str]:
    """The lines of ``stream`` as text, each read with a bound (`MAX_LINE_BYTES`), so a
    file without line breaks is refused after a megabyte instead of filling the memory."""
    line_no = 0
    while True:
        raw = stream.readline(MAX_LINE_BYTES + 1)
        if not raw:
            return
        line_no += 1
        if len(raw) > MAX_LINE_BYTES and not raw.endswith(b"\n"):
            raise ReplayError(f"{path}, line {line_no}: the line is longer than {MAX_LINE_BYTES} bytes")
        try:
            yield raw.decode("utf-8")
        except UnicodeDecodeError as err:
            raise ReplayError(f"{path}, line {line_no}: not UTF-8 text (byte {err.start + 1} of the line)") from None


def read_replays(path: str | os.PathLike) -> list[RecordedGame]:
    """The games of the replay file ``path``: a regular file (a directory, FIFO or device is a
    [`ReplayError`][pisti_env.tools.replay.ReplayError] at once, before anything is read); see `parse_replay_lines` for
    the errors of its content, which are all [`ReplayError`][pisti_env.tools.replay.ReplayError]. ``OSError`` if it cannot be
    opened (missing, no permission)."""
    name = os.fspath(path)
    # O_NONBLOCK: opening a FIFO without a writer returns at once (to be refused) instead of waiting.
    fd = os.open(name, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
    try:
        mode = os.fstat(fd).st_mode
        if not stat.S_ISREG(mode):
            raise ReplayError(f"{name}: not a replay file: it is {file_kind(mode)}, not a regular file")
        stream = os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise
    with stream:
        return parse_replay_lines(_text_lines(stream, name), name)


# ---------------------------------------------------------------------------- replaying
def iter_replay(recorded: RecordedGame) -> Iterator[tuple[int, Record, Game]]:
    """Play ``recorded`` through the engine again, one record at a time.

    Yields ``(line number, record, game)`` after applying each record (the ``game`` is the
    live engine state: read it before the next step). Raises [`ReplayError`][pisti_env.tools.replay.ReplayError] naming the
    line where the engine disagrees with the record: another deck or dealer, a seat out of
    turn, an illegal action, another hand result or final score.
    """
    header = recorded.header
    where0 = f"{recorded.path}, line {recorded.header_line}"
    try:
        game = Game(recorded.settings, seed=header["seed"], deck=header["deck"], dealer=header["dealer"])
    except (TypeError, ValueError, OverflowError) as err:
        raise ReplayError(f"{where0}: the engine cannot build this game: {err}") from None
    if len(header["players"]) != game.num_players:
        raise ReplayError(f"{where0}: 'players' names {len(header['players'])} seats, the game has {game.num_players}")
    for line_no, record in recorded.records:
        where = f"{recorded.path}, line {line_no}"
        kind = record["type"]
        if game.done and kind in ("hand", "action"):
            raise ReplayError(f"{where}: a {kind!r} record after the game's end")
        if kind == "hand":
            expected = (game.hands_completed + 1, game.dealer, _deck_codes(game))
            if (record["hand"], record["dealer"], record["deck"]) != expected:
                raise ReplayError(
                    f"{where}: the engine deals hand {expected[0]} from dealer {expected[1]} with another deck "
                    f"than recorded (hand {record['hand']}, dealer {record['dealer']}): another engine version?"
                )
        elif kind == "action":
            if record["seat"] != game.turn:
                raise ReplayError(f"{where}: seat {record['seat']} acts, but it is seat {game.turn}'s turn")
            try:
                game.step(record["action"])
            except (TypeError, ValueError) as err:
                raise ReplayError(f"{where}: the engine refuses this action: {err}") from None
        elif kind == "hand_end":
            if (record["hand"], record["result"], record["match_scores"]) != (
                game.hands_completed, game.last_hand_result, list(game.match_scores)
            ):
                raise ReplayError(
                    f"{where}: recorded result of hand {record['hand']} differs from the engine's "
                    f"(engine: {game.hands_completed} hands, last result {game.last_hand_result})"
                )
        elif kind == "end":
            got = (game.hands_completed, list(game.match_scores), game.winner if game.done else None, game.done)
            want = (record["hands"], record["match_scores"], record["winner"], record["complete"])
            if got != want:
                raise ReplayError(
                    f"{where}: recorded end (hands, match scores, winner, complete) {want} differs from the "
                    f"engine's {got}"
                )
        yield line_no, record, game


def replay(recorded: RecordedGame) -> Game:
    """Play ``recorded`` through the engine again and return the final game; raises
    [`ReplayError`][pisti_env.tools.replay.ReplayError] (naming the line) wherever the engine does not reproduce the record."""
    game = None
    for _, _, game in iter_replay(recorded):
        pass
    assert game is not None  # parse_replay_lines guarantees an 'end' record
    return game
