"""The ``search`` player (issue 49): policy rollouts on the batched engine, departing from the
policy's choice only on evidence.

Each property fails if broken: never an illegal action (2, 3, 4 players, partnerships, the
departure path forced open with ``z=0, margin=0``); the same seed gives the same worlds and
choice, another seed other worlds; permuting the cards the seat cannot see (R31) changes
neither; the batched rollouts equal the Python engine's, world by world and card by card; and
with the real game as its one world (every card open) it plays the perfect-information best
card of hand-made positions, where the policy's own choice is not that card.
"""

from __future__ import annotations

import random

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import pisti_env.agents.search as search_module  # noqa: E402
from pisti_env import Game, make_settings  # noqa: E402
from pisti_env.agents import SeatView, make_player  # noqa: E402
from pisti_env.agents.pimc import play_out_hand  # noqa: E402
from pisti_env.agents.search import SearchAgent, decide  # noqa: E402
from pisti_env.rules.cards import parse_cards  # noqa: E402

TWO = make_settings(num_players=2, target=None)


def record_values(monkeypatch) -> list[np.ndarray]:
    """The value tables `decide` is given, in order."""
    seen: list[np.ndarray] = []
    real = search_module.decide

    def spy(values, base, z=search_module.DEFAULT_Z, margin=search_module.DEFAULT_MARGIN):
        seen.append(values.copy())
        return real(values, base, z, margin)

    monkeypatch.setattr(search_module, "decide", spy)
    return seen


def play_to(game: Game, steps: int, seed: int = 0) -> Game:
    """``game`` after ``steps`` random plays and then as many more as it takes to reach a
    decision with two legal cards or more."""
    rng = random.Random(seed)
    for _ in range(steps):
        game.step(rng.choice(game.legal_actions()))
    while len(game.legal_actions()) < 2:
        game.step(game.legal_actions()[0])
    return game


def value(result: list[dict[str, int]], side: int) -> float:
    """The hand's score difference of ``side`` (R22): its total minus the others' mean."""
    own = result[side]["total"]
    return own - (sum(r["total"] for r in result) - own) / (len(result) - 1)


@pytest.mark.parametrize("kw", [dict(num_players=2), dict(num_players=3), dict(num_players=4),
                                dict(num_players=4, partnerships=False)], ids=["2p", "3p", "4p-partners", "4p-solo"])
def test_never_an_illegal_action(kw):
    settings = make_settings(target=None, **kw)
    # z=0, margin=0: the best mean always wins, so the departures are exercised too.
    player = make_player("search:worlds=2,z=0,margin=0", seed=1, settings=settings)
    other = make_player("greedy", seed=2, settings=settings)
    game = play_to(Game(settings, seed=4), 20)  # the hand's second half: shorter rollouts
    while not game.done:
        view = SeatView(game, game.turn)
        action = (player if game.turn == 0 else other).act(view)
        assert action in view.legal_actions, (action, view.legal_actions)
        game.step(action)


def test_the_same_seed_gives_the_same_worlds_and_choice(monkeypatch):
    seen = record_values(monkeypatch)
    game = play_to(Game(TWO, seed=5), 9)
    view = SeatView(game, game.turn)
    choices = [make_player("search:worlds=4,z=0,margin=0", seed=seed, settings=TWO).act(view) for seed in (3, 3, 4)]
    assert choices[0] == choices[1] and choices[0] in view.legal_actions
    assert np.array_equal(seen[0], seen[1])
    assert not np.array_equal(seen[0], seen[2])  # another seed deals other worlds


def test_the_choice_ignores_where_the_unseen_cards_really_are(monkeypatch):
    """The no-leak test (R31): the real game and copies with the cards the seat cannot see dealt
    again give the same worlds, values and choice."""
    seen = record_values(monkeypatch)
    for steps in (14, 27):
        game = play_to(Game(TWO, seed=steps), steps, seed=steps)
        seat = game.turn
        games = [game] + [game.determinize(seat, random.Random(k)) for k in range(2)]
        assert len({tuple(g.deck[g.stock_pos:]) for g in games}) == 3  # the permutations differ
        start = len(seen)
        choices = [make_player("search:worlds=4,z=0,margin=0", seed=9, settings=TWO).act(SeatView(g, seat))
                   for g in games]
        assert len(set(choices)) == 1, steps
        assert all(np.array_equal(seen[start], values) for values in seen[start + 1:]), steps


@pytest.mark.parametrize("kw, steps", [(dict(num_players=2), 2), (dict(num_players=2), 23),
                                       (dict(num_players=4), 30)], ids=["2p-early", "2p-late", "4p-partners"])
def test_batched_rollouts_equal_the_python_engines(kw, steps):
    settings = make_settings(target=None, **kw)
    game = play_to(Game(settings, seed=steps), steps)
    view = SeatView(game, game.turn)
    player = SearchAgent(seed=0, worlds=2, settings=settings)
    worlds = [view.determinize(random.Random(k)) for k in range(3)]
    legal, values = player.action_values(view, worlds)
    assert values.shape == (3, len(legal)) and len(legal) > 1
    policy = player._policy  # the same checkpoint, playing through each seat's view of the world
    for w, world in enumerate(worlds):
        for i, action in enumerate(legal):
            copy = world.clone()
            copy.step(action)
            assert values[w, i] == value(play_out_hand(copy, policy, 0, view.hands_completed), view.side), (w, action)


HAND_MADE = [
    # (deck: the table's four cards, the last face up (R6, R8), then the deal one card at a
    # time from seat 1, the first player (R5, R6), the rest shuffled with the given seed;
    # the root's own choice: the lowest or the highest legal card).
    # The 7C on top; seat 1 holds AC 2C 7D 3C: only the capture (R10) scores, and it is not
    # the lowest card.
    ("2S 3S 4S 7C  AC 5H 2C 6H 7D 8H 3C 9S", 2, "lowest"),
    # The 9S on top of three hidden cards worth 6 points (R8, R20); seat 1 holds 5C 3D 4D JH:
    # taking them with the Jack (R11) is not the best card in this deal, the 5C is.
    ("10D AH 2C 9S  3D 6S 4D 7S JH 8S 5C KS", 1, "highest"),
    # The last round of a hand (40 random plays): every card gives the same hand, so the
    # search keeps the root's choice.
    (None, 40, "highest"),
]


def hand_made(deck_head: str | None, seed: int) -> Game:
    if deck_head is None:
        return play_to(Game(TWO, seed=11), seed, seed=3)
    head = parse_cards(deck_head.split())
    rest = [c for c in range(52) if c not in head]
    random.Random(seed).shuffle(rest)
    return Game(TWO, deck=head + rest, dealer=0)


class WeakAtTheRoot:
    """The shipped policy in the rollouts, but the lowest or highest legal card (R9) as its own
    choice at the root (a batch of one row): the search must find the better card itself."""

    name = "weak-at-the-root"

    def __init__(self, policy, root: str):
        self.policy, self.root = policy, root

    def act_batch(self, observation, mask, generator):
        if observation.shape[0] == 1:
            held = mask.to(torch.uint8)
            return held.argmax(1) if self.root == "lowest" else mask.shape[1] - 1 - held.flip(1).argmax(1)
        return self.policy.act_batch(observation, mask, generator)


@pytest.mark.parametrize("position", range(len(HAND_MADE)))
def test_one_open_world_picks_the_perfect_information_best_card(position):
    deck_head, seed, root = HAND_MADE[position]
    game = hand_made(deck_head, seed)
    view = SeatView(game, game.turn)
    legal = view.legal_actions
    policy = make_player("pisti-2p", settings=TWO)
    exact = []
    for action in legal:  # brute force on the Python engine: the card, then the policy to the hand's end
        copy = game.clone()
        copy.step(action)
        exact.append(value(play_out_hand(copy, policy, 0, game.hands_completed), view.side))
    rooted = min(legal) if root == "lowest" else max(legal)
    best = legal[int(np.argmax(exact))] if max(exact) > exact[legal.index(rooted)] else rooted
    player = SearchAgent(seed=0, policy=WeakAtTheRoot(policy, root), margin=0.0, settings=TWO)
    assert player.choose_in_worlds(view, [game]) == best, (legal, exact)
    assert (best != rooted) == (position < 2), (legal, exact)  # the hand-made positions test a departure


def test_decide_departs_only_on_evidence():
    rng = np.random.default_rng(0)
    noise = rng.normal(0, 10, size=(8, 1))  # world luck, common to every card
    values = noise + np.array([0.0, 1.0, -3.0]) + rng.normal(0, 3, size=(8, 3))
    assert decide(values, base=0, z=2.0, margin=0.5) == 0  # 8 worlds: 1 point is not evidence
    many = np.random.default_rng(1)
    values = many.normal(0, 10, size=(4000, 1)) + np.array([0.0, 1.0, -3.0]) + many.normal(0, 3, size=(4000, 3))
    assert decide(values, base=0, z=2.0, margin=0.5) == 1  # 4000 worlds: it is
    assert decide(values, base=1, z=2.0, margin=0.5) == 1
    assert decide(np.array([[1.0, 5.0, 5.0]]), base=0, z=2.0, margin=0.5) == 1  # one (open) world: exact, ties low


def test_options_and_refusals():
    player = make_player("search:worlds=8,policy=pisti-2p,z=1.5,margin=0", seed=0, settings=TWO)
    assert (player.worlds, player.policy_spec, player.z, player.margin) == (8, "pisti-2p", 1.5, 0.0)
    with pytest.raises(ValueError, match="worlds' must be an int >= 2"):
        make_player("search:worlds=1")
    with pytest.raises(ValueError, match="'z' must be a number >= 0"):
        make_player("search:z=-1")
    with pytest.raises(ValueError, match="bluff variant"):
        make_player("search", settings=make_settings(num_players=2, bluff=True))
    with pytest.raises(ValueError, match="one deck"):
        make_player("search", settings=make_settings(num_players=5))
    bluff = make_settings(num_players=2, bluff=True, target=None)
    game = Game(bluff, seed=0)
    with pytest.raises(ValueError, match="bluff variant"):
        make_player("search").act(SeatView(game, game.turn))
    with pytest.raises(ValueError, match="must have a batched form"):
        make_player("search:policy=pimc", settings=TWO).act(SeatView(Game(TWO, seed=0), Game(TWO, seed=0).turn))
