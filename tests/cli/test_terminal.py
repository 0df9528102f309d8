"""Issue 15: pisti-play's parts without a terminal: the command parser and its checks, the
screen (R30–R31: only what the seat may know, byte for byte the same whatever the hidden cards
are), the moves told, and the hint's probabilities."""

from __future__ import annotations

import io
import random

import pytest
from rich.console import Console

from pisti_env import Game, make_settings, new_game
from pisti_env.rules.actions import BELIEVE, CHALLENGE, FACE_DOWN
from pisti_env.agents import SeatView
from pisti_env.rules.cards import card_to_symbol, card_to_text, parse_card
from pisti_env.terminal.commands import (
    BELIEVE_CMD, CHALLENGE_CMD, DOWN, HELP, HINT, LEGAL, PLAY, QUIT, Command, CommandError, legal_moves_text,
    parse_command, resolve_action,
)
from pisti_env.terminal.screen import CARD_BACK, render_screen
from pisti_env.terminal.session import PlaySession

from helpers import F, O, deck_from_plays, codes, to_claim

# ---------------------------------------------------------------------------- the parser


@pytest.mark.parametrize("text, command", [
    ("10D", Command(PLAY, card=parse_card("10D"))),
    (" js ", Command(PLAY, card=parse_card("JS"))),
    ("3", Command(PLAY, number=3)),
    ("d 7H", Command(DOWN, card=parse_card("7H"))),
    ("down 2", Command(DOWN, number=2)),
    ("?", Command(LEGAL)), ("h", Command(HINT)), ("HINT", Command(HINT)), ("help", Command(HELP)),
    ("q", Command(QUIT)), ("quit", Command(QUIT)),
    ("b", Command(BELIEVE_CMD)), ("believe", Command(BELIEVE_CMD)), ("C", Command(CHALLENGE_CMD)),
])
def test_parse_command(text, command):
    assert parse_command(text) == command


@pytest.mark.parametrize("text, why", [
    ("", "nothing typed"), ("   ", "nothing typed"), ("xx", "'xx' is not a move"), ("11D", "'11D' is not a move"),
    ("10D 7H", "one card at a time"), ("d", "names one card"), ("d 7H 8H", "names one card"),
    ("d zz", "'d zz' is not a move"),
])
def test_parse_command_refuses_malformed_input(text, why):
    with pytest.raises(CommandError, match=why):
        parse_command(text)
    with pytest.raises(TypeError):
        parse_command(3)  # type: ignore[arg-type]


def plain_game() -> Game:
    """2 players, dealer 0, table 2H 5S KD under 7C: seat 1 (F, first to play) holds 3C 7D 4H 5H,
    seat 0 the four nines."""
    return new_game(deck=deck_from_plays(codes("2H 5S KD 7C"), codes("7D 9C 3C 9D 4H 9H 5H 9S")), dealer=0,
                    target=None)


def test_resolve_action_plays_by_code_and_number():
    g = plain_game()
    view = SeatView(g, F)
    hand = view.hand
    assert resolve_action(parse_command(card_to_text(hand[2])), view) == hand[2]
    assert resolve_action(parse_command("1"), view) == hand[0]
    assert "Legal moves: 1) " + card_to_symbol(hand[0]) in legal_moves_text(view)
    assert "Face down" not in legal_moves_text(view)


@pytest.mark.parametrize("text, why", [
    ("5", r"there is no card number 5: your hand is 1\) "),
    ("0", "there is no card number 0"),
    ("KS", "K♠ is not in your hand"),
    ("b", "there is no claim to answer"),
    ("c", "there is no claim to answer"),
    ("d 1", r"face-down plays belong to the bluff variant \(R29"),
])
def test_resolve_action_refuses_with_why(text, why):
    g = plain_game()
    before = (list(map(list, g.hands)), list(g.pile), g.turn)
    with pytest.raises(CommandError, match=why):
        resolve_action(parse_command(text), SeatView(g, F))
    assert (list(map(list, g.hands)), list(g.pile), g.turn) == before  # nothing changes
    with pytest.raises(CommandError, match="not your turn"):
        resolve_action(parse_command("1"), SeatView(g, O))


def test_resolve_action_bluff_claim_and_answers():
    # F took the table with 7♦, O played the lone 9♣; F may claim (R29).
    g = to_claim("7D 9C 3C 9D 4H 9H 5H 9S")
    view = SeatView(g, F)
    assert resolve_action(parse_command("d 3C"), view) == FACE_DOWN + parse_card("3C")
    assert "Face down, claiming a pişti (R29): d 3C" in legal_moves_text(view)
    g.step(FACE_DOWN + parse_card("3C"))
    answer = SeatView(g, O)
    assert resolve_action(parse_command("b"), answer) == BELIEVE
    assert resolve_action(parse_command("challenge"), answer) == CHALLENGE
    assert legal_moves_text(answer) == "Legal moves: b (believe the claim)  c (challenge it)"
    with pytest.raises(CommandError, match="claims a pişti on 9♣: answer first"):
        resolve_action(parse_command("1"), answer)


def test_face_down_only_where_a_claim_is_allowed():
    g = new_game(deck=deck_from_plays(codes("2H 5S KD 7C"), codes("7D 9C 3C 9D 4H 9H 5H 9S")), dealer=0,
                 target=None, bluff=True)
    with pytest.raises(CommandError, match="only on a lone table card"):
        resolve_action(parse_command("d 1"), SeatView(g, F))  # four cards on the table


# ---------------------------------------------------------------------------- the screen

def plain(view: SeatView, names) -> str:
    return render_screen(view, names).plain


def test_screen_shows_the_seat_s_knowledge():
    g = plain_game()  # table: 2♥ 5♠ K♦ face down under 7♣ (R8)
    names = ["greedy (0)", "you"]
    text = plain(SeatView(g, F), names)
    assert f"Table:  {CARD_BACK} {CARD_BACK} {CARD_BACK} [7♣]   top card 7♣, 3 under it (3 face down)" in text
    assert "Your hand:  1) 3♣  2) 7♦  3) 4♥  4) 5♥" in text
    assert "greedy (0)  side 0  4 cards in hand" in text
    for hidden in ("2♥", "5♠", "K♦", "9♣", "9♦", "9♥", "9♠"):  # table backs and seat 0's hand
        assert hidden not in text
    assert "Stock:  40 cards" in text and "single hand" in text
    assert text.endswith("Your turn.")
    with pytest.raises(ValueError, match="one name per seat"):
        render_screen(SeatView(g, F), ["a"])


def test_screen_bluff_claim_shows_the_face_down_card_to_its_player_only():
    g = to_claim("7D 9C 3C 9D 4H 9H 5H 9S")
    g.step(FACE_DOWN + parse_card("3C"))
    names = ["you", "them"]
    claimant = plain(SeatView(g, F), ["them", "you"])
    answerer = plain(SeatView(g, O), names)
    assert "them played a card face down on 9♣, claiming a pişti; you answers" in answerer
    assert "3♣" not in answerer
    assert "(the face-down card: 3♣)" in claimant
    assert "answer the claim (b believe / c challenge)" in answerer
    g.step(CHALLENGE)
    after = plain(SeatView(g, O), names)
    assert "Last claim:  them on 9♣: you challenged, the card was 3♣ (a bluff)" in after
    assert "bluff pts" in after


# ---------------------------------------------------------------------------- R30-R31 byte for byte

class Scripted:
    """A player replaying given actions (mapped through ``mapping`` for a permuted world)."""

    name = "scripted"

    def __init__(self, queue: list, mapping: dict[int, int]) -> None:
        self.queue, self.mapping = queue, mapping

    def reset(self, seed=None) -> None:
        pass

    def act(self, view: SeatView) -> int:
        seat, action = self.queue.pop(0)
        assert seat == view.seat
        if action < BELIEVE:
            action = action - action % FACE_DOWN + self.mapping.get(action % FACE_DOWN, action % FACE_DOWN)
        return action


def _typed(action: int) -> str:
    if action == BELIEVE:
        return "b"
    if action == CHALLENGE:
        return "c"
    if action >= FACE_DOWN:
        return "d " + card_to_text(action - FACE_DOWN)
    return card_to_text(action)


def transcript(settings, deck, dealer, seat, actions, mapping) -> str:
    """Everything pisti-play shows the person in ``seat`` while ``actions`` are played (the
    person types its own, then quits), with colours, as bytes on a terminal."""
    queue = list(actions)
    inputs = ["?"] + [_typed(a) for s, a in actions if s == seat] + ["h", "q", "y"]
    out = io.StringIO()
    console = Console(file=out, force_terminal=True, color_system="truecolor", width=120)

    def read_line(prompt):
        console.print(prompt, end="", markup=False)
        typed = inputs.pop(0)
        if typed not in ("?", "h", "q", "y") and queue and queue[0][0] == seat:
            queue.pop(0)
        return typed

    names = [f"p{s}" if s != seat else "you" for s in range(settings.num_players)]
    players = [None if s == seat else Scripted(queue, mapping) for s in range(settings.num_players)]
    session = PlaySession(settings, seat, players, names, console, read_line, lambda r: None,
                          hint=lambda view: f"hint for {view.hand}", deck=deck, dealer=dealer)
    assert session.run() is False
    return out.getvalue()


@pytest.mark.parametrize("kw", [
    dict(num_players=2, target=None),
    dict(num_players=2, target=None, bluff=True),
    dict(num_players=4, partnerships=True, target=None, bluff=True),
    dict(num_players=3, target=None, show_stock_bottom=True),
])
def test_screens_are_identical_whatever_the_hidden_cards(kw):
    """R30-R31: play, stop at one of the person's turns, deal every card the person cannot know
    differently (permuted among its deck positions, face-down cards of other seats included),
    replay the same moves: the whole transcript is the same, byte for byte, colours included.
    Swapping a card of the person's own hand with a hidden one does change it (not vacuous)."""
    settings = make_settings(**kw)
    changed_world = converse = 0
    for trial in range(6):
        rng = random.Random(100 * trial + settings.num_players)
        g = Game(settings, seed=trial)
        ids, dealer = [p % 52 for p in g.deck], g.dealer
        seat = rng.randrange(settings.num_players)
        stop, actions = rng.randrange(2, 28), []
        while len(actions) < stop or g.turn != seat:
            legal = g.legal_actions()
            downs = [a for a in legal if FACE_DOWN <= a < BELIEVE]
            action = rng.choice(downs) if downs and rng.random() < 0.6 else rng.choice(legal)
            actions.append((g.turn, action))
            g.step(action)
        assert not g.done and g.hands_completed == 0
        unknown = g.unknown_cards(seat)
        positions = sorted(ids.index(p) for p in unknown)
        perm = [ids[i] for i in positions]
        rng.shuffle(perm)
        new_ids = list(ids)
        for i, c in zip(positions, perm):
            new_ids[i] = c
        mapping = {ids[i]: new_ids[i] for i in positions}
        try:
            Game(settings, deck=new_ids, dealer=dealer)
        except ValueError:  # four Jacks dealt to the table (R7): not a world of this game
            continue
        original = transcript(settings, ids, dealer, seat, actions, {})
        permuted = transcript(settings, new_ids, dealer, seat, actions, mapping)
        assert permuted == original, f"seat {seat} sees a hidden card"
        assert "Your hand:" in original and "\x1b[" in original  # the screens, in colour
        changed_world += new_ids != ids
        own = g.hands[seat]
        swap = [u for u in unknown if own and u % 52 != own[0] % 52]
        if swap:
            i, j = ids.index(own[0]), ids.index(swap[0])
            swapped = list(ids)
            swapped[i], swapped[j] = swapped[j], swapped[i]
            try:
                Game(settings, deck=swapped, dealer=dealer)
            except ValueError:
                continue
            own_map = {ids[i]: swapped[i], ids[j]: swapped[j]}
            mine = [(s, a) if s != seat else (s, a - a % FACE_DOWN + own_map.get(a % FACE_DOWN, a % FACE_DOWN)
                                              if a < BELIEVE else a) for s, a in actions]
            converse += transcript(settings, swapped, dealer, seat, mine, own_map) != original
    assert changed_world >= 3 and converse >= 3


# ---------------------------------------------------------------------------- the hint

def test_checkpoint_action_probabilities_fit_act():
    pytest.importorskip("torch")
    from pisti_env.agents import make_player
    from pisti_env.terminal.hint import Hinter, shipped_policy

    settings = make_settings()
    path, player = shipped_policy(settings)
    assert path.endswith("pisti-2p")
    g = Game(settings, seed=4)
    view = SeatView(g, g.turn)
    probs = player.action_probabilities(view)
    assert sorted(probs) == view.legal_actions
    assert sum(probs.values()) == pytest.approx(1.0, abs=1e-5)
    assert max(probs, key=probs.get) == player.act(view)
    text = Hinter(settings)(view)
    best = card_to_symbol(player.act(view))
    assert text.startswith(f"checkpoints/pisti-2p would play {best} (") or f"would play {best} (" in text
    assert "%" in text
    assert shipped_policy(make_settings(num_players=3)) is None
    # No shipped policy fits 3 players: expert answers instead, and the hinter says why.
    three = make_settings(num_players=3)
    game3 = Game(three, seed=1)
    hinter = Hinter(three)
    assert hinter(SeatView(game3, game3.turn)).startswith("expert would play ")
    assert hinter.note is not None and "no shipped policy was trained for this game" in hinter.note
    assert "No hint" in Hinter(settings, "smart")(view)  # a bad spec outside pisti-play (which refuses it up front)
    scripted = Hinter(settings, "greedy")(view)
    assert scripted == f"greedy would play {card_to_symbol(make_player('greedy', seed=0).act(view))}."


def test_result_line_and_hand_summary():
    from pisti_env.terminal.events import hand_summary, result_line

    assert result_line(0, ["you", "greedy (1)"], [160, 90], True).plain == "Match over: you win (160 – 90)."
    assert result_line(1, ["you", "greedy (1)"], [9, 17], False).plain == "Hand over: greedy (1) wins (9 – 17)."
    assert result_line(None, ["x", "y"], [5, 5], False).plain == "Hand over: a draw (5 – 5)."
    assert result_line(0, ["you + expert (2)", "p (1) + p (3)"], [8, 3], False).plain.startswith(
        "Hand over: you + expert (2) win (")
    g = Game(make_settings(target=None, bluff=True), seed=3)
    rng = random.Random(0)
    while not g.done:
        g.step(rng.choice(g.legal_actions()))
    text = hand_summary(g.last_hand_result, ["you", "them"], g.match_scores, 1, None).plain
    assert "── Hand 1 over ──" in text and "bluff pts" in text and "majority" in text
    total = [r["total"] for r in g.last_hand_result]
    assert text.splitlines()[2].split()[-1] == str(total[0]) and text.splitlines()[3].split()[-1] == str(total[1])


def test_piped_pisti_replay_sizes_its_lines_to_the_data_not_to_80_columns(tmp_path, capsys, monkeypatch):
    from pisti_env.terminal.replay_cli import main as replay_main
    from pisti_env.tools.replay import GameRecorder, write_records

    records: list[dict] = []
    names = ["a-rather-long-player-name-0", "a-rather-long-player-name-1", "a-rather-long-player-name-2"]
    recorder = GameRecorder(make_settings(num_players=3, target=None), names, records.append, seed=3)
    while not recorder.game.done:
        recorder.step(recorder.game.legal_actions()[0])
    write_records(records, tmp_path / "game.jsonl")
    monkeypatch.setenv("COLUMNS", "80")  # what a terminal of 80 columns would give; stdout here is no terminal
    assert replay_main([str(tmp_path / "game.jsonl"), "--no-color"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = next(i for i, line in enumerate(lines) if line.startswith("side") and "pişti pts" in line)
    columns = lines[header].split()[1:]
    assert columns[-1] == "total", lines[header : header + 2]  # the header on one line, not wrapped at 80
    rows = lines[header + 1 : header + 4]
    assert [row.split()[0] for row in rows] == names, rows
    assert all(len(row.split()) == len(columns) for row in rows), rows  # name, (seat), 7 numbers: one line each
    assert max(map(len, lines)) > 80


@pytest.mark.parametrize("bluff", [False, True])
def test_help_lists_the_bluff_commands_only_in_the_bluff_variant(bluff):
    inputs = ["help", "q", "y"]
    out = io.StringIO()
    console = Console(file=out, width=200, no_color=True)
    from pisti_env.agents import make_player

    settings = make_settings(num_players=2, target=None, bluff=bluff)
    session = PlaySession(settings, 0, [None, make_player("greedy", settings=settings)], ["you", "p1"], console,
                          lambda prompt: inputs.pop(0), lambda r: None, seed=1, dealer=1)  # seat 0 moves first
    assert session.run() is False and not inputs
    shown = out.getvalue()
    assert "Play a card: its code" in shown and "h  hint" in shown and "q  quit" in shown
    assert ("face down claiming a pişti" in shown) is bluff
    assert ("b believes a claim, c challenges it" in shown) is bluff
