"""The one rule for the library's integer-like and sequence arguments (seeds, dealers, seats,
batch sizes, counts, actions' type, decks), so the env, [`Game`][pisti_env.game.Game], the
batched engine and the players accept and refuse the same values with the same words.

Integers: a Python ``int`` or a NumPy integer is accepted (and handed on as a plain ``int``);
``bool`` (Python's or NumPy's), floats (even ``3.0``), strings, ``None`` (where not documented
as allowed) and containers are refused with a ``TypeError`` naming the argument, what it must
be and what was given; a value outside the argument's range is a ``ValueError`` with the range.
(The env's ``step`` also takes a one-element integer array or tensor for an action, the
Gymnasium convention: `pisti_env.rules.actions.as_action_id` unwraps it first.)

Sequences (a deck): a ``list``, ``tuple``, ``range`` or other `collections.abc.Sequence`,
or a one-dimensional array; never a ``str``/``bytes``, a set (no order: which card is dealt
first?) or a mapping.
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping, Sequence, Set
from typing import Any


def is_integer(value: Any) -> bool:
    """Whether ``value`` is an integer by the rule above (``int`` or NumPy integer, not ``bool``)."""
    return isinstance(value, numbers.Integral) and not isinstance(value, bool) and type(value).__name__ != "bool_"


def check_int(
    value: Any,
    name: str,
    *,
    low: int | None = None,
    high: int | None = None,
    kind: str = "",
    none: bool = False,
) -> int:
    """``value`` as a plain ``int`` once checked, else an error naming ``name``.

    Args:
        value: the argument given.
        name: the argument's name as the caller wrote it (``"seed"``, ``"dealer of game 3"``).
        low: the smallest value allowed (``None``: no bound).
        high: the largest value allowed (``None``: no bound).
        kind: a word for what the int stands for, shown in the messages (``"seat"``).
        none: say in the message that ``None`` is allowed too (the caller handles ``None``
            itself; this only words the error).

    Raises ``TypeError`` when ``value`` is not an integer (bool, float, str, ...), ``ValueError``
    when it lies outside ``low..high``.
    """
    what = _describe(low, high, kind, none)
    if not is_integer(value):
        raise TypeError(f"{name} must be an int{' ' + kind if kind else ''}{what}, got {type(value).__name__} {value!r}")
    number = int(value)
    if (low is not None and number < low) or (high is not None and number > high):
        raise ValueError(f"{name} must be {'a ' + kind if kind else 'an int'}{what}, got {number}")
    return number


def _describe(low: int | None, high: int | None, kind: str, none: bool) -> str:
    if low is not None and high is not None:
        text = f" {low}..{high}"
    elif low is not None:
        text = f" >= {low}"
    elif high is not None:
        text = f" <= {high}"
    else:
        text = ""
    return text + (" or None" if none else "")


def check_sequence(value: Any, name: str, what: str) -> Sequence[Any]:
    """``value`` when it is an ordered sequence (list, tuple, range, a 1-D array); else a
    ``TypeError`` naming ``name``, ``what`` it must be and the type given. Strings, bytes, sets
    and mappings are refused: a string is one value, a set has no order, a mapping's order is
    its keys'."""
    ordered = isinstance(value, Sequence) or getattr(value, "ndim", None) == 1
    if isinstance(value, (str, bytes, bytearray, Set, Mapping)) or not ordered:
        raise TypeError(f"{name} must be {what}, got {type(value).__name__}")
    return value
