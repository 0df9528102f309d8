"""Command-line flags generated from a dataclass: one flag per field, its help taken from the
field's entry in the class docstring, its type from the annotation. ``pisti-train`` builds its
whole command line this way from [`TrainConfig`][training.trainer.config.TrainConfig], and every CLI
takes the rule variants from [`pisti_env.rules.Settings`][pisti_env.rules.Settings]' own field list
(`add_settings_arguments`), so a new setting or config field is a flag without more code.

Flags are ``--field-name``; booleans get ``--x/--no-x``; ``X | None`` fields accept ``none``;
tuples take several values; ints accept ``1.2e7``.

Validation, shared by every CLI: `ArgumentParser` answers a bad flag with one line and
exit status 2; the ``type=`` checkers (`bounded` and its ``positive_int``, ``probability``
…, `seconds`, `writable_dir`, `writable_file`, `readable_file`,
`checkpoint_dir`, `torch_device`) refuse a bad value while parsing, before anything
runs; `check_player_specs` builds the players of a run up front; `fail` prints an
error found after parsing the same way, as one line stripped of terminal escapes
(`printable`); `format_duration` writes a duration in their messages.

The command-line grammar every ``pisti-*`` command follows (``docs/reliability.md``): ``--out DIR``
is a directory, a flag naming one file says what it is (``--replay-out FILE``); ``--quiet`` turns
progress off; ``--seed N`` (>= 0), ``--threads N``, ``--device D``; the rule variants are the
flags of `add_settings_arguments`.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import re
import stat
import sys
import tempfile
import traceback
import types
import typing
from typing import Any, Callable, Iterable, Mapping

from pisti_env.rules.settings import Settings
from pisti_env.util.regular_files import file_kind  # noqa: F401 - re-exported: the file checks below name what a path is

# The flag names of the settings whose field names are long; every other setting is ``--field-name``.
# One spelling each (the grammar: one flag for one meaning).
SETTINGS_FLAGS = {"num_players": ("--players",), "ten_diamonds_pisti_bonus": ("--ten-diamonds-bonus",)}

_ENTRY = re.compile(r"^(\s+)([a-z_][a-z0-9_]*):\s+(.*)$")
# A docstring's Markdown cross-reference ``[`shown`][target]`` (or an inline link ``[shown](url)``):
# the docs site renders it as a link, a terminal shows only what it shows.
_MARKDOWN_LINK = re.compile(r"\[([^\[\]]+)\](?:\[[^\[\]]*\]|\([^()\s]*\))")


def terminal_text(doc: str) -> str:
    """``doc`` (docstring text) as a terminal shows it: a Markdown link keeps its text alone."""
    return _MARKDOWN_LINK.sub(r"\1", doc)



def field_docs(cls: type) -> dict[str, tuple[str, str]]:
    """Per field of dataclass ``cls``: (section heading, help text) from its docstring, whose
    entries read ``name: text`` (continued on deeper-indented lines) under headings."""
    names = {f.name for f in dataclasses.fields(cls)}
    docs: dict[str, tuple[str, str]] = {}
    section, current, indent = "", None, None
    for line in (cls.__doc__ or "").splitlines()[1:]:
        match = _ENTRY.match(line)
        depth = len(line) - len(line.lstrip())
        if match and match.group(2) in names and (indent is None or depth == indent):
            indent, current = depth, match.group(2)
            docs[current] = (section, terminal_text(match.group(3).strip()))
        elif line.strip() and indent is not None and depth > indent and current:
            docs[current] = (docs[current][0], docs[current][1] + " " + terminal_text(line.strip()))
        elif line.strip() and (indent is None or depth < indent):
            section, current = line.strip().rstrip(":"), None
        else:
            current = None if not line.strip() else current
    return docs


def _int(text: str) -> int:
    try:
        return int(text)
    except ValueError:
        value = float(text)
        if not value.is_integer():
            raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
        return int(value)


def _optional(convert: Callable[[str], Any]) -> Callable[[str], Any]:
    def parse(text: str) -> Any:
        return None if text.strip().lower() == "none" else convert(text)

    parse.__name__ = getattr(convert, "__name__", "value")
    return parse


def _kind(annotation: Any) -> tuple[Any, bool]:
    """(base type, optional) of an annotation such as ``int | None``."""
    if typing.get_origin(annotation) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(annotation) if a is not type(None)]
        return args[0], len(args) < len(typing.get_args(annotation))
    return annotation, False


def add_dataclass_arguments(
    parser: argparse.ArgumentParser,
    cls: type,
    *,
    exclude: Iterable[str] = (),
    aliases: Mapping[str, tuple[str, ...]] | None = None,
    converters: Mapping[str, Callable[[str], Any]] | None = None,
    title: str | None = None,
    defaults: Mapping[str, Any] | None = None,
    names: Mapping[str, tuple[str, ...]] | None = None,
) -> list[str]:
    """Add a flag per field of ``cls`` (but ``exclude``), grouped by the docstring's headings
    (or all under ``title``); returns the fields added. Defaults are the dataclass's, help the
    docstring's. ``aliases`` give extra flag names, ``converters`` replace a field's parser,
    ``defaults`` replace a field's default for this command line, ``names`` replace a field's
    flag names (its only spellings)."""
    aliases, converters, defaults = aliases or {}, converters or {}, defaults or {}
    hints = typing.get_type_hints(cls)
    docs = field_docs(cls)
    groups: dict[str, Any] = {}
    added = []
    for f in dataclasses.fields(cls):
        if f.name in exclude:
            continue
        section, text = docs.get(f.name, ("", ""))
        heading = title or section or cls.__name__
        group = groups.get(heading) or groups.setdefault(heading, parser.add_argument_group(heading))
        flags = list((names or {}).get(f.name, ())) or [*aliases.get(f.name, ()), "--" + f.name.replace("_", "-")]
        if f.name in defaults:
            default = defaults[f.name]
        else:
            default = f.default if f.default is not dataclasses.MISSING else f.default_factory()  # type: ignore[misc]
        base, optional = _kind(hints[f.name])
        text = text.replace("%", "%%")
        if base is bool:
            group.add_argument(*flags, dest=f.name, action=argparse.BooleanOptionalAction, default=default,
                               help=f"{text} (default: {default})")
        else:
            nargs = None
            if typing.get_origin(base) is tuple:
                base, nargs = typing.get_args(base)[0], "+"
            convert = converters.get(f.name) or (_int if base is int else base)
            if optional:
                convert = _optional(convert)
            shown = " ".join(map(str, default)) if isinstance(default, tuple) else default
            group.add_argument(*flags, dest=f.name, type=convert, nargs=nargs, default=default,
                               metavar=getattr(base, "__name__", "VALUE").upper(), help=f"{text} (default: {shown})")
        added.append(f.name)
    return added


def values_of(args: argparse.Namespace, names: Iterable[str]) -> dict[str, Any]:
    """The parsed values of ``names`` (tuples for the several-valued flags)."""
    return {n: tuple(v) if isinstance(v := getattr(args, n), list) else v for n in names}


def _target(text: str) -> int | None:
    value = _int(text)
    return value or None


def add_settings_arguments(
    parser: argparse.ArgumentParser, exclude: Iterable[str] = (), defaults: Mapping[str, Any] | None = None
) -> list[str]:
    """The rule-variant flags, one per field of [`Settings`][pisti_env.rules.Settings] (but ``exclude``), named
    ``--players`` and ``--ten-diamonds-bonus`` for the two long field names; ``--target 0`` (or ``none``) plays
    single hands; ``defaults`` override the rules' defaults for this command line. Returns the
    setting names added."""
    return add_dataclass_arguments(
        parser, Settings, exclude=exclude, names=SETTINGS_FLAGS, converters={"target": _target},
        title="game settings (RULES.md)", defaults=defaults,
    )


# ---------------------------------------------------------------------- validation
# Every CLI answers bad input with one line on stderr and exit status 2 (never a traceback), and
# checks what it can before the run starts: the value flags through these ``type=`` functions
# (argparse names the flag in the message), the paths' access before anything is computed.


class ArgumentParser(argparse.ArgumentParser):
    """``argparse.ArgumentParser`` whose errors are one line, ``PROG: error: MESSAGE``, on
    stderr with exit status 2 (argparse's own prints the usage first, many lines for our CLIs);
    its help shows a docstring's Markdown links as their text (see `terminal_text`)."""

    def format_help(self) -> str:
        return terminal_text(super().format_help())

    def error(self, message: str) -> typing.NoReturn:  # type: ignore[override]
        self.exit(2, f"{self.prog}: error: {one_line(message)}\n")


# What a terminal would act on rather than show: ANSI/VT escape sequences (CSI ``ESC [ ... final``,
# OSC ``ESC ] ... BEL/ST`` such as a window title, and two-character ``ESC x``), every other C0/C1
# control character, and the Unicode direction overrides that reorder what a line appears to say.
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]|\x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?|\x1b[@-Z\\-_]|\x9b[0-?]*[ -/]*[@-~]")
_CONTROLS = re.compile(r"[\x00-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_SURROGATES = re.compile("[\ud800-\udfff]")  # a lone surrogate (JSON allows it) cannot be printed as UTF-8


def printable(value: Any, limit: int | None = None) -> str:
    """``str(value)`` made safe to print on a terminal: escape sequences removed, other control
    characters (newlines and tabs included) shown as a space, so text read from a file (a
    replay's names, a checkpoint's metadata) can neither restyle nor clear the screen, set the
    window title or break a line; a lone surrogate (which no UTF-8 output can hold) shows as
    U+FFFD. With ``limit``, at most that many characters (``…`` marks a
    cut). It is not markup escaping: print the result as plain text (``rich.text.Text``, or
    ``markup=False``)."""
    text = _SURROGATES.sub("\ufffd", _CONTROLS.sub(" ", _ESCAPES.sub("", str(value))))
    if limit is not None and len(text) > limit:
        text = text[: max(limit - 1, 0)] + "…"
    return text


def one_line(message: Any) -> str:
    """``message`` as one printable line (its lines joined with ``; ``, see `printable`)."""
    return "; ".join(printable(part).strip() for part in str(message).splitlines() if part.strip())


def format_duration(seconds: float) -> str:
    """A duration as the commands print it: ``3 h 05 min``, ``9 min 30 s``, ``45 s``."""
    seconds = max(0, round(seconds))
    hours, rest = divmod(seconds, 3600)
    minutes, secs = divmod(rest, 60)
    if hours:
        return f"{hours} h {minutes:02d} min"
    return f"{minutes} min {secs:02d} s" if minutes else f"{secs} s"


def fail(prog: str, error: Any, debug: bool | None = None) -> int:
    """Print ``error`` as the one-line answer ``PROG: error: ...`` on stderr; returns 2, the
    exit status of every CLI for bad input.

    ``debug`` is for a program with a ``--debug`` flag (``pisti-benchmark``, ``pisti-eval``):
    ``True`` prints the exception's whole traceback first, the exceptions it was raised from
    included (a player's own frames: the harness raises its one-line errors from what the player
    raised), each line through [`printable`][pisti_env.tools.flags.printable]; ``False`` ends the
    line with a pointer to the flag when there is such a cause to show."""
    text = one_line(error)
    if debug and isinstance(error, BaseException):
        for line in "".join(traceback.format_exception(error)).splitlines():
            print(printable(line), file=sys.stderr)
    elif debug is False and isinstance(error, BaseException) and error.__cause__ is not None:
        text += " (--debug prints its traceback)"
    print(f"{prog}: error: {text}", file=sys.stderr)
    return 2


def bounded(kind: type, low: float | None = None, high: float | None = None, *, low_open: bool = False,
            name: str | None = None) -> Callable[[str], Any]:
    """An argparse ``type=`` parsing an ``int`` (``1.2e7`` allowed) or a finite ``float`` within
    ``low..high`` (``low`` excluded with ``low_open``); ``name`` is what the usage calls it."""
    parse = _int if kind is int else float
    if low is not None and high is not None:
        allowed = f"in ({low}, {high}]" if low_open else f"in [{low}, {high}]"
    elif low is not None:
        allowed = f"> {low}" if low_open else f">= {low}"
    else:
        allowed = f"<= {high}" if high is not None else ""
    noun = "a whole number" if kind is int else "a number"

    def convert(text: str) -> Any:
        try:
            value = parse(text)
        except (ValueError, OverflowError, argparse.ArgumentTypeError):
            raise argparse.ArgumentTypeError(f"expected {noun} {allowed}, got {text!r}".replace("  ", " ")) from None
        if not math.isfinite(value) or (low is not None and (value <= low if low_open else value < low)) or (
            high is not None and value > high
        ):
            raise argparse.ArgumentTypeError(f"must be {allowed}, got {text!r}")
        return value

    convert.__name__ = name or kind.__name__
    return convert


positive_int = bounded(int, 1, name="positive int")
non_negative_int = bounded(int, 0, name="non-negative int")
positive_float = bounded(float, 0, low_open=True, name="positive float")
non_negative_float = bounded(float, 0, name="non-negative float")
probability = bounded(float, 0, 1, name="probability")
# A wait in seconds (``--delay``): finite, 0 .. an hour (``inf``, ``nan``, ``1e300`` and ``-1`` refused).
seconds = bounded(float, 0, 3600, name="seconds")


# Paths. The output rule every CLI follows: ``--out DIR`` is a directory (created if missing),
# a flag naming one file says so in its name (``--replay-out FILE``, ``--report-out FILE``); both
# are checked while parsing, before any work, by trying what the run will do: a probe file is
# created in the directory and removed at once (permission bits alone say nothing for root, a
# read-only mount or /proc). Nothing is created by the checks themselves.


def _nearest_existing(path: str) -> str:
    here = os.path.abspath(path)
    while not os.path.exists(here):
        parent = os.path.dirname(here)
        if parent == here:
            break
        here = parent
    return here


def _can_write_in(directory: str) -> bool:
    """Whether a file can be created in ``directory`` (tried, and removed at once)."""
    try:
        fd, probe = tempfile.mkstemp(dir=directory, prefix=".pisti-write-check-")
    except OSError:
        return False
    os.close(fd)
    os.unlink(probe)
    return True




def writable_dir(text: str) -> str:
    """An argparse ``type=``: a directory that exists and can be written, or can be created
    (its nearest existing ancestor is a directory a file can be created in). Nothing is
    created here."""
    if os.path.exists(text):
        if not os.path.isdir(text):
            raise argparse.ArgumentTypeError(f"{text!r} exists and is not a directory")
        if not _can_write_in(text):
            raise argparse.ArgumentTypeError(f"directory {text!r} is not writable")
        return text
    base = _nearest_existing(text)
    if not os.path.isdir(base):
        raise argparse.ArgumentTypeError(f"cannot create directory {text!r}: {base!r} is not a directory")
    if not _can_write_in(base):
        raise argparse.ArgumentTypeError(f"cannot create directory {text!r}: {base!r} is not writable")
    return text


def writable_file(text: str) -> str:
    """An argparse ``type=``: a regular file that can be written (an existing one, replaced
    when written, or a new one in a directory that exists or can be created). A directory,
    FIFO or device is refused. Nothing is created here."""
    if text.endswith(("/", os.sep)) or os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is a directory, not a file")
    if os.path.exists(text):
        mode = os.stat(text).st_mode
        if not stat.S_ISREG(mode):
            raise argparse.ArgumentTypeError(f"{text!r} is {file_kind(mode)}, not a regular file")
        try:
            os.close(os.open(text, os.O_WRONLY))  # no O_TRUNC: the file is left as it is
        except OSError:
            raise argparse.ArgumentTypeError(f"file {text!r} is not writable") from None
        return text
    try:
        writable_dir(os.path.dirname(os.path.abspath(text)))
    except argparse.ArgumentTypeError as error:
        raise argparse.ArgumentTypeError(f"cannot write {text!r}: {error}") from None
    return text


def readable_file(text: str) -> str:
    """An argparse ``type=``: an existing, readable regular file. A directory, FIFO (which
    would wait for a writer) or device (``/dev/zero`` never ends) is refused at once."""
    try:
        mode = os.stat(text).st_mode
    except OSError as error:
        raise argparse.ArgumentTypeError(f"cannot read {text!r}: {error.strerror}") from None
    if not stat.S_ISREG(mode):
        raise argparse.ArgumentTypeError(f"{text!r} is {file_kind(mode)}, not a regular file")
    if not os.access(text, os.R_OK):
        raise argparse.ArgumentTypeError(f"file {text!r} is not readable")
    return text


def torch_device(text: str) -> str:
    """An argparse ``type=``: a torch device string (``cpu``, ``cuda``, ``cuda:1``) this machine
    has. Imports torch (the commands that take ``--device`` need it anyway)."""
    import torch

    try:
        device = torch.device(text)
    except (RuntimeError, ValueError):
        raise argparse.ArgumentTypeError(f"not a torch device: {text!r} (e.g. cpu, cuda, cuda:1)") from None
    if device.type == "cuda" and (not torch.cuda.is_available() or (device.index or 0) >= torch.cuda.device_count()):
        raise argparse.ArgumentTypeError(f"{text!r}: this machine has {torch.cuda.device_count()} CUDA device(s)")
    return text


def checkpoint_dir(text: str) -> str:
    """An argparse ``type=``: a readable directory holding a checkpoint's ``metadata.json``
    (its contents are checked when it is loaded)."""
    if not os.path.isdir(text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a directory (a checkpoint directory is expected)")
    metadata = os.path.join(text, "metadata.json")
    if not os.path.isfile(metadata) or not os.access(metadata, os.R_OK):
        raise argparse.ArgumentTypeError(f"{text!r} is not a checkpoint directory: no readable metadata.json in it")
    return text


def check_player_specs(specs: Iterable[str], settings: Settings | None = None) -> None:
    """Build every player of ``specs`` once (a registered name with its options, or a
    checkpoint directory, checked against ``settings``), so a bad spec fails before a run,
    not hours into it. Raises the registry's ``ValueError``/``TypeError`` (or the checkpoint
    loader's ``CheckpointError``, a ``ValueError``)."""
    from pisti_env.agents import checkpoint_location, make_player

    for spec in specs:
        location = checkpoint_location(spec)
        if location is not None:
            try:
                checkpoint_dir(location[0])
            except argparse.ArgumentTypeError as error:
                raise ValueError(f"player {error}") from None
        make_player(spec, settings=settings)


def check_path(check: Callable[[str], str], text: str, flag: str) -> str:
    """``check(text)`` (one of the path ``type=`` functions above) for a path known only after
    parsing (a default built from other flags); its complaint as a ``ValueError`` naming ``flag``."""
    try:
        return check(text)
    except argparse.ArgumentTypeError as error:
        raise ValueError(f"argument {flag}: {error}") from None
