"""The table's picture (``pisti_env.drawing``) and the replay page (``pisti-replay --html``).

What the SVG shows is read back from its ``data-*`` attributes and compared with the game. The
no-leak tests (R30–R31) follow ``test_no_leak.py``: stop a random game, deal the cards a seat
cannot know differently (permuted among their deck positions, other seats' face-down cards
included, R29), replay the same moves, and require the seat's picture and its replay page to be
byte for byte the same, while the all-open picture and a change the seat can see do show.
Pixels (Pillow's frames, CairoSVG's rasterising) are tested in ``test_render_rgb.py``.
"""

from __future__ import annotations

import json
import random
import subprocess
import sys
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pytest

import pisti_env
from pisti_env import Game, make_settings
from pisti_env.rules.actions import BELIEVE, FACE_DOWN
from pisti_env.agents import SeatView
from pisti_env.rules.cards import card_to_text
from pisti_env.drawing import open_table, seat_table, table_svg
from pisti_env.terminal.replay_html import replay_frames, replay_page
from pisti_env.tools.replay import GameRecorder, parse_replay_lines
from pisti_env.terminal import replay_cli

from helpers import rank

SVG = "{http://www.w3.org/2000/svg}"
NAMES4 = ["north", "east", "south", "west"]


def names_for(game: Game) -> list[str]:
    return [f"p{i}" for i in range(game.num_players)]


def parse(svg: str) -> ET.Element:
    return ET.fromstring(svg)


def cards_of(root: ET.Element, role: str, seat: int | None = None) -> list[str]:
    found = [e for e in root.iter(f"{SVG}use") if e.get("data-role") == role]
    if seat is not None:
        found = [e for e in found if e.get("data-seat") == str(seat)]
    return [e.get("data-card") for e in found]


def side_fields(root: ET.Element, side: int) -> dict[str, str]:
    group = next(g for g in root.iter(f"{SVG}g") if g.get("data-role") == "side" and g.get("data-side") == str(side))
    return {t.get("data-field"): "".join(t.itertext()) for t in group.iter(f"{SVG}text")}


def role_text(root: ET.Element, role: str) -> str:
    return "".join(next(t for t in root.iter(f"{SVG}text") if t.get("data-role") == role).itertext())


def random_game(kw: dict, seed: int, prefer_claims: bool = True, stop: int | None = None) -> tuple[Game, list]:
    """A random game stopped before its hand's end (where every card becomes public, R30);
    returns the game and its actions as (seat, action)."""
    rng = random.Random(seed)
    g = Game(make_settings(**kw), seed=seed)
    stop = rng.randrange(6, 60) if stop is None else stop
    actions = []
    while len(actions) < stop:
        left = g.in_hands + g.stock_size
        if left == 0 or (left == 1 and g.claimant < 0):
            break
        legal = g.legal_actions()
        downs = [a for a in legal if FACE_DOWN <= a < BELIEVE]
        action = rng.choice(downs) if prefer_claims and downs and rng.random() < 0.6 else rng.choice(legal)
        actions.append((g.turn, action))
        g.step(action)
    return g, actions


def replay_with(kw: dict, deck: list[int], dealer: int, actions, mapping: dict[int, int]) -> tuple[Game, list]:
    """The same moves on another deck: a card (face up or down) is the card now at its place."""
    g = Game(make_settings(**kw), deck=deck, dealer=dealer)
    moved = []
    for seat, action in actions:
        assert g.turn == seat
        if action < BELIEVE:
            action = action - action % FACE_DOWN + mapping.get(action % FACE_DOWN, action % FACE_DOWN)
        moved.append((seat, action))
        g.step(action)
    return g, moved


def permuted(kw: dict, g: Game, actions, seat: int, rng: random.Random) -> tuple[Game, list, list[int]]:
    """``g`` dealt again with the cards ``seat`` cannot know permuted among their places (one deck)."""
    ids = list(g.deck)
    positions = sorted(ids.index(p) for p in g.unknown_cards(seat))
    perm = [ids[i] for i in positions]
    rng.shuffle(perm)
    new_ids, mapping = list(ids), {}
    for i, c in zip(positions, perm):
        new_ids[i] = c
        mapping[ids[i]] = c
    g2, moved = replay_with(kw, new_ids, g.dealer, actions, mapping)
    return g2, moved, new_ids


def recorded(kw: dict, deck: list[int], dealer: int, actions, names: list[str]):
    """The replay file of these moves (left unfinished: ``complete`` false), read back."""
    lines: list[str] = []
    rec = GameRecorder(make_settings(**kw), names, lambda r: lines.append(json.dumps(r)), deck=deck, dealer=dealer,
                       meta={"source": "test"})
    for _, action in actions:
        rec.step(action)
    rec.finish()
    return parse_replay_lines(lines)[0]


# ------------------------------------------------------------------ what the picture shows
@pytest.mark.parametrize("kw", [dict(target=None), dict(num_players=3), dict(num_players=4, partnerships=True),
                                dict(num_players=5, decks=2, show_stock_bottom=True)],
                         ids=["2p", "3p", "4p-partners", "5p-2decks-bottom"])
def test_seat_picture_shows_the_seats_knowledge(kw):
    """R30: the seat's own hand face up, other hands as backs with their counts, the pile's top
    card and count (never-turned table cards as backs, R8), stock, per-side counters, turn."""
    for seed in range(4):
        g, _ = random_game(kw, seed, prefer_claims=False)
        for seat in range(g.num_players):
            view = SeatView(g, seat)
            root = parse(table_svg(seat_table(view, names_for(g))))
            assert cards_of(root, "hand", seat) == [card_to_text(c) for c in view.hand]
            for other in range(g.num_players):
                if other != seat:
                    assert cards_of(root, "hand", other) == ["back"] * len(g.hands[other])
            pile = cards_of(root, "pile") + cards_of(root, "pile-top")
            if view.pile_size:
                assert cards_of(root, "pile-top") == [card_to_text(view.pile_top)]
                assert f"{view.pile_size - 1} under it" in role_text(root, "pile-count")
                # The pile's bottom cards are cut off in the fan; what is drawn is its top, backs first (R8).
                expected = ["back"] * view.pile_hidden + [card_to_text(c) for c in view.pile_known]
                assert pile == expected[-len(pile):]
            else:
                assert pile == []
            assert role_text(root, "stock") == f"stock {g.stock_size}"
            for side in range(g.num_sides):
                fields = side_fields(root, side)
                assert fields["captured"] == str(g.captured_count[side])
                assert fields["points"] == str(g.public_points[side])
                assert fields["pistis"] == str(view.pistis[side])
                assert fields.get("match", "0") == str(g.match_scores[side])
            turn = [e.get("data-seat") for e in root.iter(f"{SVG}rect") if e.get("data-role") == "turn"]
            assert turn == [str(g.turn)]
            if g.history:
                seat_played, card = g.history[-1]
                assert role_text(root, "last-move") == f"p{seat_played} played {pisti_env.card_to_symbol(card)}"
            if g.stock_bottom is not None and g.stock_size:
                assert cards_of(root, "stock-bottom") == [card_to_text(g.stock_bottom)]  # R28: shown to all


def test_open_picture_shows_every_hand_and_the_claim_card():
    """The spectator's picture shows every hand; a pending claim's face-down card (R29) is a back
    to the other seats, face up to its claimant and to the spectator."""
    kw = dict(num_players=4, partnerships=True, bluff=True, target=None)
    met = 0
    for seed in range(40):
        g, _ = random_game(kw, seed, stop=random.Random(seed).randrange(6, 40))
        root = parse(table_svg(open_table(g, NAMES4)))
        for seat in range(4):
            assert cards_of(root, "hand", seat) == [card_to_text(c) for c in g.hand_card_ids(seat)]
        if g.claimant < 0:
            assert cards_of(root, "claim") == []
            continue
        met += 1
        claim = card_to_text(g.claim_card)
        assert cards_of(root, "claim") == [claim]
        for seat in range(4):
            seen = cards_of(parse(table_svg(seat_table(SeatView(g, seat), NAMES4))), "claim")
            assert seen == [claim if seat == g.claimant else "back"], f"seat {seat}"
    assert met > 0, "no pending claim met: vacuous"


def test_bluff_picture_has_bluff_points_and_the_last_claim():
    kw = dict(bluff=True, target=None)
    met = 0
    for seed in range(40):
        g, _ = random_game(kw, seed)
        root = parse(table_svg(seat_table(SeatView(g, 0), ["a", "b"])))
        for side in range(2):
            assert side_fields(root, side)["bluff_points"] == str(g.bluff_points[side])
        if g.claims:
            met += 1
            claimant, answerer, lone, _, _ = g.claims[-1]
            line = role_text(root, "last-claim")
            lone_text = pisti_env.card_to_symbol(lone)
            assert line.startswith(f"{'ab'[claimant]} claimed a pişti on {lone_text}: {'ab'[answerer]}")
    assert met > 0


def test_names_are_escaped_and_the_svg_is_well_formed():
    names = ['<script>alert(1)</script>', 'a"b&c\x00']
    g, _ = random_game(dict(target=None), 3, prefer_claims=False)
    svg = table_svg(seat_table(SeatView(g, 0), names))
    root = parse(svg)  # well-formed XML despite the names
    assert "<script" not in svg and not list(root.iter(f"{SVG}script"))
    texts = " ".join("".join(t.itertext()) for t in root.iter(f"{SVG}text"))
    assert "<script>alert(1)</script>" in texts and 'a"b&c?' in texts


def test_seat_table_checks_names():
    g = Game(make_settings())
    with pytest.raises(ValueError, match="one name per seat"):
        seat_table(SeatView(g, 0), ["only one"])


def test_importing_pisti_env_imports_no_drawing_library():
    """Pillow (issue 50) and CairoSVG are imported when a frame is drawn, not before."""
    code = ("import sys, pisti_env; e = pisti_env.env(render_mode='rgb_array'); e.reset(seed=0); "
            "print(sorted(m for m in ('cairosvg', 'cairocffi', 'PIL', 'pisti_env.drawing') if m in sys.modules))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120).stdout
    assert out.strip() == "[]"


# ------------------------------------------------------------------ no leak (R30, R31)
NO_LEAK_CASES = [dict(target=None), dict(target=None, bluff=True), dict(num_players=3, target=None, bluff=True),
                 dict(num_players=4, partnerships=True, target=None, bluff=True, show_stock_bottom=True)]


@pytest.mark.parametrize("kw", NO_LEAK_CASES, ids=["2p", "2p-bluff", "3p-bluff", "4p-partners-bluff-bottom"])
def test_R30_R31_seat_picture_and_page_do_not_depend_on_unknown_cards(kw):
    """Permuting what a seat cannot know (other hands, stock, never-turned table cards, others'
    face-down cards, R8/R29/R31) and replaying the same moves leaves its picture and its whole
    replay page unchanged, byte for byte; the spectator's picture changes in some trials, and
    swapping a card of the seat's own hand with an unknown one changes its picture."""
    settings = make_settings(**kw)
    names = [f"seat{i}" for i in range(settings.num_players)]
    open_changed = page_open_changed = converse = face_down_moved = 0
    for trial in range(6):
        rng = random.Random(100 + trial)
        g, actions = random_game(kw, 500 + trial)
        for seat in range(settings.num_players):
            g2, moved, new_deck = permuted(kw, g, actions, seat, rng)
            face_down_moved += any(a != b for (_, a), (_, b) in zip(actions, moved) if FACE_DOWN <= a < BELIEVE)
            same = table_svg(seat_table(SeatView(g, seat), names))
            assert table_svg(seat_table(SeatView(g2, seat), names)) == same, f"seat {seat}: the picture leaks"
            open_changed += table_svg(open_table(g, names)) != table_svg(open_table(g2, names))
            # The replay page in the seat's view: every frame of the game so far.
            rec_a = recorded(kw, list(g.deck), g.dealer, actions, names)
            rec_b = recorded(kw, new_deck, g.dealer, moved, names)
            page = replay_page([(rec_a, names)], seat)
            assert replay_page([(rec_b, names)], seat) == page, f"seat {seat}: the replay page leaks"
            page_open_changed += replay_page([(rec_a, names)]) != replay_page([(rec_b, names)])
            # Converse: a card of its own hand swapped with an unknown one shows.
            hand = g.hands[seat]
            unknown = [u for u in g.unknown_cards(seat) if hand and rank(u) != rank(hand[0])]
            if unknown:
                h, u = hand[0], rng.choice(unknown)
                deck = list(g.deck)
                i, j = deck.index(h), deck.index(u)
                deck[i], deck[j] = u, h
                try:
                    g3, _ = replay_with(kw, deck, g.dealer, actions, {h: u, u: h})
                except (ValueError, AssertionError):
                    continue  # the swap changed an earlier move's legality (e.g. a deal Jack, R7)
                assert table_svg(seat_table(SeatView(g3, seat), names)) != same
                converse += 1
    assert open_changed > 0 and page_open_changed > 0, "the permutations never changed the true state: vacuous"
    assert converse > 0
    if settings.bluff:
        assert face_down_moved > 0, "no unseen face-down card was dealt again: vacuous"


# ------------------------------------------------------------------ the replay page
class _Elements(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict]] = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def elements(page: str) -> list[tuple[str, dict]]:
    parser = _Elements()
    parser.feed(page)
    return parser.tags


def test_replay_page_is_self_contained_and_escapes_the_replay():
    """No external resource, one inline script (allowed by hash), and names and sources from
    the (untrusted) replay file appear only as text."""
    evil = ['</script><script>alert(1)</script>', '<img src=x onerror=alert(2)>']
    g, actions = random_game(dict(target=None), 4, prefer_claims=False, stop=20)
    lines: list[str] = []
    deck = list(Game(g.settings, seed=4).deck)
    rec = GameRecorder(g.settings, evil, lambda r: lines.append(json.dumps(r)), deck=deck, dealer=g.dealer,
                       meta={"source": '"><iframe src="https://example.com">'})
    for _, action in actions:
        rec.step(action)
    rec.finish()
    game = parse_replay_lines(lines)[0]
    page = replay_page([(game, evil)])
    tags = elements(page)
    assert [t for t, _ in tags].count("script") == 1
    assert not any(t in ("img", "iframe", "link", "object", "embed") for t, _ in tags)
    for tag, attrs in tags:
        assert not any(k.startswith("on") for k in attrs), f"an event handler attribute on <{tag}>"
        for key in ("src", "href"):
            value = attrs.get(key) or attrs.get(f"xlink:{key}")
            assert value is None or value.startswith("#"), f"<{tag} {key}={value!r}>: an external reference"
    assert "&lt;/script&gt;&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "Content-Security-Policy" in page and "default-src 'none'" in page


def test_replay_frames_follow_the_records():
    g, actions = random_game(dict(target=None), 9, prefer_claims=False, stop=12)
    game = recorded(dict(target=None), list(Game(g.settings, seed=9).deck), g.dealer, actions, ["a", "b"])
    frames = replay_frames(game, ["a", "b"])
    assert [f.kind for f in frames] == ["hand"] + ["action"] * len(actions) + ["end"]
    assert frames[-1].note == "The game was left unfinished."
    with pytest.raises(ValueError, match="seat must be 0..1"):
        replay_frames(game, ["a", "b"], seat=2)


def test_pisti_replay_html_of_an_eval_file_with_hand_breakdowns(tmp_path, capsys):
    """``pisti-eval --save-games`` output opens: every game, with a breakdown per finished hand
    and the match score."""
    from training.harness.evaluate import main as eval_main

    out = tmp_path / "eval"
    assert eval_main(["greedy", "random", "--deals", "2", "--matches", "1", "--target", "51", "--workers", "1",
                      "--threads", "1", "--save-games", "1", "--out", str(out), "--no-plots", "--quiet",
                      "--bootstrap", "10"]) == 0
    html = tmp_path / "page.html"
    assert replay_cli.main([str(out / "games.jsonl"), "--html", str(html), "--seat", "1"]) == 0
    assert "Wrote" in capsys.readouterr().out
    page = html.read_text(encoding="utf-8")
    games = parse_replay_lines(open(out / "games.jsonl", encoding="utf-8"))
    assert page.count('class="game"') == len(games) >= 2
    hand_ends = sum(1 for game in games for _, r in game.records if r["type"] == "hand_end")
    assert page.count('<table class="breakdown">') == hand_ends
    assert "seat 1&#x27;s view" in page or "seat 1's view" in page
    assert replay_cli.main([str(out / "games.jsonl"), "--html", str(html), "--seat", "4"]) == 2
    assert "--seat must be 0..1" in capsys.readouterr().err
