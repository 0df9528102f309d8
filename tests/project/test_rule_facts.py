"""Every rule fact is written once (issue 11).

* The foundation modules (``pisti_env/rules/``: ``cards``, ``scoring``, ``locations``, ``actions``, ``counters``,
  ``settings``) own the rule values; an AST scan of every other module of ``pisti_env/`` and
  ``training/`` fails on a bare numeric literal that is a rule value in disguise (10, 20, 22, 52,
  104, 105, 106), on ``x % 13`` / ``x % 52``, and on a module constant that redefines a name the
  foundation owns. A 10 or 20 that is the whole value of a named constant or config field
  (``HANDS_SCALE = 10.0``, ``snapshot_every: int = 20``) is allowed: the name says what it is;
  22, 52, 104–106 (the 10♦, card and action counts) never are. Anything else needs an entry in
  ``ALLOWED`` with the reason it is not a rule value.
* The scoring functions agree with RULES.md on small hand-built cases, written here with the
  rules' own numbers: card points (R20), piştis (R13–R17), the majority (R21), bluff stakes (R29).
"""

from __future__ import annotations

import ast
import functools
from pathlib import Path

import pytest

from pisti_env import make_settings, parse_card
from pisti_env.rules.scoring import (
    CHALLENGE_FACTOR,
    POINTS,
    bluff_stake,
    card_points,
    captures,
    is_double_pisti,
    majority_points,
    majority_side,
    pisti_value,
)

ROOT = Path(__file__).resolve().parents[2]
SCANNED = ("pisti_env", "training")
FOUNDATION = {f"pisti_env/rules/{name}.py" for name in ("cards", "scoring", "locations", "actions", "counters", "settings")}
RULE_LITERALS = {10, 20, 22, 52, 104, 105, 106}  # pişti/bluff points, the 10♦, card and action counts
NEVER_NAMED = {22, 52, 104, 105, 106}  # no tunable takes these values: a named copy is a copy
RULE_MODULI = {13, 52}  # rank and card id of a card
# (module path, literal, why it is not a rule value). Prefer a named constant to an entry here.
ALLOWED: set[tuple[str, float, str]] = {
    ("training/trainer/checkpoint.py", 20, "1 << 20: the 1 MiB read size when hashing a file"),
    ("training/harness/stats.py", 10.0, "Elo's log base: 400 rating points per factor of 10 in odds"),
    ("pisti_env/util/regular_files.py", 20, "1 << 20: the 1 MiB read size when hashing a file"),
    ("pisti_env/policies/metadata.py", 20, "1 << 20: metadata.json's 1 MiB size limit"),
    ("pisti_env/tools/replay.py", 20, "1 << 20: a replay line's 1 MiB length limit"),
    ("pisti_env/drawing/layout.py", 10, "a font size or an offset in pixels"),
    ("pisti_env/drawing/layout.py", 52, "a side's block height in pixels at most"),
}


def scanned_modules() -> list[str]:
    paths = []
    for package in SCANNED:
        for path in sorted((ROOT / package).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            if rel not in FOUNDATION:
                paths.append(rel)
    return paths


def assigned_names(node: ast.stmt) -> list[str]:
    """The names a statement assigns (``A = ...``, ``A, B = ...``, ``a: int = ...``)."""
    if isinstance(node, ast.Assign):
        targets = node.targets
    elif isinstance(node, ast.AnnAssign):
        targets = [node.target]
    else:
        return []
    return [name.id for target in targets for name in ast.walk(target) if isinstance(name, ast.Name)]


@functools.cache
def foundation_names() -> frozenset[str]:
    """UPPER_CASE names the foundation modules define."""
    return frozenset(
        name
        for rel in FOUNDATION
        for node in ast.parse((ROOT / rel).read_text(encoding="utf-8")).body
        for name in assigned_names(node)
        if name.isupper()
    )


def _is_number(node: ast.AST) -> bool:
    return isinstance(node, ast.Constant) and type(node.value) in (int, float)


def _named_literals(tree: ast.Module) -> set[int]:
    """ids of literals that are the whole value of a module constant or a class field."""
    named = set()
    bodies = [tree.body] + [node.body for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    for body in bodies:
        for node in body:
            if isinstance(node, ast.Assign) and all(isinstance(t, ast.Name) for t in node.targets):
                value = node.value
            elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
                value = node.value
            else:
                continue
            if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.USub):
                value = value.operand
            if value is not None and _is_number(value):
                named.add(id(value))
    return named


def rule_literal_hits(rel: str, source: str, foundation: frozenset[str] | set[str]) -> list[str]:
    """``path:line what`` for every rule value written as a bare literal in ``source``, the text
    of module ``rel``."""
    tree = ast.parse(source, filename=rel)
    named = _named_literals(tree)
    allowed = {(path, literal) for path, literal, _ in ALLOWED}
    hits, moduli = [], set()
    for node in ast.walk(tree):
        if (
            isinstance(node, ast.BinOp) and isinstance(node.op, ast.Mod) and _is_number(node.right)
            and node.right.value in RULE_MODULI
            and not (isinstance(node.left, ast.Constant) and isinstance(node.left.value, str))  # "%d" % x
        ):
            hits.append(f"{rel}:{node.lineno} % {node.right.value}")
            moduli.add(id(node.right))
    for node in ast.walk(tree):
        if (
            _is_number(node) and node.value in RULE_LITERALS and id(node) not in moduli
            and (id(node) not in named or node.value in NEVER_NAMED) and (rel, node.value) not in allowed
        ):
            hits.append(f"{rel}:{node.lineno} {node.value!r}")
    for node in tree.body:
        for name in assigned_names(node):
            if name in foundation:
                hits.append(f"{rel}:{node.lineno} {name} redefines a foundation name")
    return sorted(set(hits), key=lambda hit: (int(hit.split(" ")[0].rsplit(":", 1)[1]), hit))


MODULES = scanned_modules()


@pytest.mark.parametrize("rel", MODULES)
def test_no_rule_value_as_a_bare_literal(rel):
    hits = rule_literal_hits(rel, (ROOT / rel).read_text(encoding="utf-8"), foundation_names())
    where = "pisti_env.rules.scoring/locations/actions/counters/cards"
    assert not hits, f"rule values written as bare literals (use {where}):\n" + "\n".join(hits)


def test_scan_finds_what_it_must():
    """The scan itself: a bare rule value, a rank modulus and a foundation name are caught; named
    constants, config fields and string formatting are not."""
    source = (
        "import x\nPISTI_POINTS = 10\nSCALE = 10.0\nclass C:\n    width: int = 20\n"
        "def f(c):\n    return c % 13 + 22 + '%d' % 13 + c % 52 - SCALE\nCARDS = 52\n"
    )
    assert rule_literal_hits("probe.py", source, {"PISTI_POINTS"}) == [
        "probe.py:2 PISTI_POINTS redefines a foundation name",
        "probe.py:7 % 13",
        "probe.py:7 % 52",
        "probe.py:7 22",
        "probe.py:8 52",
    ]


def test_allowlist_names_real_modules():
    assert {path for path, _, _ in ALLOWED} <= set(MODULES)


# --------------------------------------------------------------------------- scoring vs RULES.md


def card(text: str) -> int:
    return parse_card(text)


def test_R20_card_points():
    assert [card_points(card(c)) for c in ("AC", "AD", "JH", "JS", "2C", "10D")] == [1, 1, 1, 1, 2, 3]
    assert [card_points(card(c)) for c in ("2D", "10C", "KS", "QH", "9D", "3C")] == [0] * 6
    assert sum(card_points(c) for c in range(52)) == 13  # R20: 13 in all with one deck
    assert sum(POINTS) == 26 and POINTS[52 + card("10D")] == 3  # two decks: each copy scores


def test_R10_R11_captures():
    assert captures(card("7C"), card("7H")) and captures(card("JC"), card("7H"))
    assert not captures(card("8C"), card("7H")) and not captures(card("JC"), None)


@pytest.mark.parametrize(
    "played, lone, pile_size, kw, last_card, expected",
    [
        ("7C", "7H", 1, {}, False, 10),  # R13
        ("JC", "7H", 1, {}, False, 0),  # R13: a Jack on a lone non-Jack is a plain capture
        ("7C", "7H", 2, {}, False, 0),  # only a lone card
        ("7C", "7H", 4, {}, False, 0),  # R15: the initial four-card pile
        ("8C", "7H", 1, {}, False, 0),  # no capture
        ("JC", "JH", 1, {}, False, 20),  # R14 default
        ("JC", "JH", 1, {"double_pisti": 10}, False, 10),  # R14: an ordinary pişti
        ("JC", "JH", 1, {"double_pisti": 0}, False, 0),  # R14: no pişti at all
        ("7C", "7H", 1, {"last_card_pisti": False}, True, 0),  # R16
        ("JC", "JH", 1, {"last_card_pisti": False}, True, 0),  # R16
        ("7C", "7H", 1, {"last_card_pisti": True}, True, 10),  # R16 default
        ("10C", "10D", 1, {"ten_diamonds_pisti_bonus": 3}, False, 13),  # R17, the 10♦ lone
        ("10D", "10H", 1, {"ten_diamonds_pisti_bonus": 3}, False, 13),  # R17, the 10♦ played
        ("10D", "10H", 1, {}, False, 10),  # R17 off by default
        ("7C", "7H", 1, {"ten_diamonds_pisti_bonus": 3}, False, 10),  # no 10♦
        ("10D", "10H", 1, {"ten_diamonds_pisti_bonus": 3, "last_card_pisti": False}, True, 0),  # R16 first
    ],
)
def test_R13_to_R17_pisti_value(played, lone, pile_size, kw, last_card, expected):
    settings = make_settings(**kw)
    assert pisti_value(card(played), card(lone), pile_size, settings, last_card) == expected
    # Two decks (R27): physical indices of the second copies score alike.
    assert pisti_value(card(played) + 52, card(lone) + 52, pile_size, settings, last_card) == expected


def test_R14_double_pisti_counts_only_at_20():
    jc, jh = card("JC"), card("JH")
    assert is_double_pisti(jc, jh, make_settings())
    assert not is_double_pisti(jc, jh, make_settings(double_pisti=10))
    assert not is_double_pisti(card("7C"), card("7H"), make_settings())


@pytest.mark.parametrize(
    "captured, expected",
    [
        ([27, 25], [3, 0]),  # R21: 27 of 52 wins it
        ([26, 26], [0, 0]),  # a tie: nobody
        ([20, 18, 14], [3, 0, 0]),
        ([20, 20, 12], [0, 0, 0]),  # two sides tie for the most
        ([12, 20, 20], [0, 0, 0]),
        ([10, 12, 30], [0, 0, 3]),
        ([53, 51], [3, 0]),  # two decks (R27): strictly most of 104
    ],
)
def test_R21_majority(captured, expected):
    assert majority_points(captured) == expected
    assert majority_side(captured) == (expected.index(3) if 3 in expected else -1)


def test_R29_bluff_stakes():
    plain, doubled = make_settings(bluff=True), make_settings(bluff=True, bluff_jack_double=True)
    seven, jack = card("7H"), card("JH")
    assert bluff_stake(seven, plain) == 10 and bluff_stake(jack, plain) == 10  # believed: 10
    assert CHALLENGE_FACTOR * bluff_stake(seven, plain) == 20  # challenged: 20
    assert bluff_stake(seven, doubled) == 10  # bluff_jack_double: only on a lone Jack
    assert bluff_stake(jack, doubled) == 20 and CHALLENGE_FACTOR * bluff_stake(jack, doubled) == 40  # 20 / 40 / 40
