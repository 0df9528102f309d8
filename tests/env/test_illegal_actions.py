"""An illegal move never pays: the penalty of ``illegal_action="penalty"`` (pisti_env/envs/env.py).

With ``reward="diff"`` the offender's side ends the episode with what it collected so far plus
the penalty; that must be no more than it ends with in any continuation of the game from that
position. The tests check it against the worst of many continuations played out on copies of
the game (random ones, and ones where every seat plays to hurt the offender's side), over
random positions of 2, 3 and 4 players, partnerships, bluff, single hands and matches; and they
check the lemma the penalty rests on (`pisti_env.envs.env.hand_points_bound` bounds the points
a hand can still hand out, R13–R29) at every position of many games. Each check is shown to
fail with a penalty or bound that is too small.
"""

from __future__ import annotations

import importlib
import random

import numpy as np
import pytest

import pisti_env
from pisti_env import Game
from pisti_env.envs.env import hand_points_bound

from helpers import case

env_module = importlib.import_module("pisti_env.envs.env")  # pisti_env.env is the env() function

# Single hands and matches (short targets, so positions near a match's end come up), with
# partnerships, 3 and 4 separate sides, two decks, the scoring variants and the bluff variant.
CONFIGS = [
    "2p hand",
    "2p 51",
    "2p 51 margin5",
    "2p hand bluff jack-double",
    "2p 51 bluff",
    "3p hand",
    "3p 51",
    "3p hand bluff",
    "4p-partners hand",
    "4p-partners 51",
    "4p-partners 51 bluff",
    "4p-solo hand",
    "4p-solo 51 double10 bonus3",
    "5p-2decks hand",
]
POSITIONS_PER_CONFIG = 8
RANDOM_CONTINUATIONS = 6
ADVERSARIAL_CONTINUATIONS = 3


def relative(values, side: int) -> float:
    """``values[side]`` minus the mean of the other sides' values (the diff convention)."""
    others = [v for s, v in enumerate(values) if s != side]
    return values[side] - sum(others) / len(others)


def final_diff(game: Game, side: int) -> float:
    """What ``side`` collects over a finished episode with diff rewards: its final score
    difference (tests/env/test_env.py checks that the rewards add up to it)."""
    assert game.done
    return relative(game.match_scores, side)


def adversarial_action(game: Game, side: int, rng: random.Random) -> int:
    """The legal action after which ``side``'s relative public points (R30) are lowest, ties
    broken at random: the other sides hurt it and its own seats sabotage it."""
    before = relative(game.public_total, side)
    scored = []
    for action in game.legal_actions():
        copy = game.clone()
        copy.step(action)
        scored.append((relative(copy.public_total, side) - before, rng.random(), action))
    return min(scored)[2]


def worst_continuation(game: Game, side: int, rng: random.Random) -> float:
    """The lowest final score difference of ``side`` over random and adversarial play-outs."""
    worst = float("inf")
    for i in range(RANDOM_CONTINUATIONS + ADVERSARIAL_CONTINUATIONS):
        g = game.clone()
        while not g.done:
            if i < RANDOM_CONTINUATIONS:
                g.step(rng.choice(g.legal_actions()))
            else:
                g.step(adversarial_action(g, side, rng))
        worst = min(worst, final_diff(g, side))
    return worst


def random_position(e, seed: int, rng: random.Random) -> tuple[dict[str, float], list[int]]:
    """Reset ``e`` with ``seed`` and play random legal moves up to a random point of the
    episode (its very last move included). Returns every agent's rewards so far and the
    actions played."""
    e.reset(seed=seed)
    raw = e.unwrapped
    trial = raw.game.clone()
    actions = []
    while not trial.done:
        actions.append(rng.choice(trial.legal_actions()))
        trial.step(actions[-1])
    stop = rng.choice([len(actions) - 1, rng.randrange(len(actions))])
    totals = dict.fromkeys(e.possible_agents, 0.0)
    for action in actions[:stop]:
        e.step(action)
        for a in e.possible_agents:
            totals[a] += raw.rewards[a]
    return totals, actions[:stop]


def paying_illegal_moves(spec: str, seed: int) -> list[str]:
    """Random positions of ``spec`` at which the illegal move gives the offender more than the
    worst continuation found: a description of each (empty when the penalty holds)."""
    settings = case(spec).kwargs
    e = pisti_env.env(reward="diff", **settings)  # illegal_action="penalty" by default
    raw = e.unwrapped
    rng = random.Random(seed)
    found = []
    for p in range(POSITIONS_PER_CONFIG):
        totals, played = random_position(e, seed * 1000 + p, rng)
        game = raw.game
        offender = e.agent_selection
        side = raw.settings.side_of(raw.agent_name_mapping[offender])
        worst = worst_continuation(game, side, rng)
        # Rewards so far equal the public score difference now (the diff convention).
        assert totals[offender] == pytest.approx(relative(game.public_total, side), abs=1e-9)
        illegal = int(np.flatnonzero(e.observe(offender)["action_mask"] == 0)[0])
        with pytest.warns(UserWarning, match="illegal action"):
            e.step(illegal)
        assert all(e.terminations.values()) and e.infos[offender]["illegal_move"] is True
        # Per side the penalty step's rewards sum to 0, as every diff step's do.
        per_side = {raw.settings.side_of(raw.agent_name_mapping[a]): raw.rewards[a] for a in e.possible_agents}
        assert sum(per_side.values()) == pytest.approx(0.0, abs=1e-9)
        with_penalty = totals[offender] + raw.rewards[offender]
        if with_penalty > worst + 1e-9:
            found.append(f"{spec} seed {seed} position {p} after {len(played)} moves: "
                         f"illegal move ends at {with_penalty:g}, playing on can end at {worst:g}")
    return found


@pytest.mark.parametrize("spec", CONFIGS)
def test_R13_R29_illegal_move_never_pays_with_diff_rewards(spec):
    for seed in range(3):
        assert paying_illegal_moves(spec, seed) == []


def test_the_check_fails_with_a_too_small_penalty(monkeypatch):
    """Shows the check above has teeth: PettingZoo's usual −1 is often better than playing on."""
    monkeypatch.setattr(env_module, "illegal_action_penalty", lambda game, side: -1.0)
    found = [f for spec in ("2p hand", "3p 51", "4p-partners hand") for f in paying_illegal_moves(spec, 0)]
    assert found


@pytest.mark.parametrize("n", [2, 3, 4])
def test_illegal_move_never_pays_with_win_rewards(n):
    """reward="win": the offender's side gets −1, the lowest any game gives; the others +1
    (two sides, a forfeit) or 0 (three or more: none of them has won)."""
    e = pisti_env.env(num_players=n, reward="win", target=51)
    e.reset(seed=n)
    rng = random.Random(n)
    for _ in range(30):
        e.step(rng.choice(np.flatnonzero(e.observe(e.agent_selection)["action_mask"]).tolist()))
    raw = e.unwrapped
    offender = e.agent_selection
    side = raw.settings.side_of(raw.agent_name_mapping[offender])
    with pytest.warns(UserWarning, match="illegal action"):
        e.step(int(np.flatnonzero(e.observe(offender)["action_mask"] == 0)[0]))
    for a in e.possible_agents:
        own = raw.settings.side_of(raw.agent_name_mapping[a]) == side
        assert raw.rewards[a] == (-1.0 if own else 1.0 if raw.settings.num_sides == 2 else 0.0)


# --------------------------------------------------------------------------- the lemma

LEMMA_CONFIGS = CONFIGS + ["6p-2decks hand bluff", "2p hand double10 last-card-off", "4p-solo hand bluff jack-double"]


def hand_bound_violations(spec: str, seed: int, bound=hand_points_bound) -> int:
    """Positions of a random game of ``spec`` at which the points all sides add to their
    public totals (R30) by the end of the hand exceed ``bound`` at that position."""
    settings = case(spec).settings
    rng = random.Random(seed)
    g = Game(settings, seed=seed)
    violations = 0
    while not g.done:
        hands = g.hands_completed
        positions = []  # (sum of public totals, bound) at each position of this hand
        while g.hands_completed == hands:
            pending = g.pending_claim is not None
            public = g.public_total
            positions.append((sum(public), bound(settings, g.in_hands + g.stock_size, pending)))
            g.step(rng.choice(g.legal_actions()))
            # The penalty's proof also needs public totals never to go down (R30).
            assert all(after >= now for after, now in zip(g.public_total, public))
        at_end = sum(g.match_scores)  # the hand's end: all its points are in the match totals
        violations += sum(at_end - before > most for before, most in positions)
    return violations


@pytest.mark.parametrize("spec", LEMMA_CONFIGS)
def test_R20_R21_R29_hand_points_bound_holds_at_every_position(spec):
    for seed in range(6):
        assert hand_bound_violations(spec, seed) == 0


def test_the_lemma_check_fails_without_the_scoring_plays():
    """A bound without the pişti and claim term (card points and majority only) is too small
    once a hand has a pişti: the check above finds it."""
    def too_small(settings, plays, pending):
        return hand_points_bound(settings, 0, False)  # as if no play could still score

    assert sum(hand_bound_violations("2p hand", seed, too_small) for seed in range(6)) > 0
