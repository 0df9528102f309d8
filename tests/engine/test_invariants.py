"""Invariants under random legal play, over every sensible combination of settings.

After every step: card conservation (every physical card in exactly one place, location codes
consistent with the containers), hand sizes and the seat to move as R6/R18/R27 prescribe,
per-side counters consistent with the captured cards. At every hand end: the R20–R23 totals,
and a hand result equal to what an independent shadow tally (fed only with the cards played
and the pile they landed on) computes from the rules (R10–R19). At match end: R24–R26.
The AEC env's ``diff`` rewards add up to the final score difference.
The checker itself is ``tests/referee.py`` (the soak, ``benchmarks/soak.py``, runs it too).
The bluff variant (R29) is one more axis of the settings matrix: with bluffs an independent
shadow tally that also follows claims and answers checks the counters and hand results.
"""

from __future__ import annotations

import itertools
import random

import numpy as np
import pytest

import pisti_env
from pisti_env import make_settings
from pisti_env.rules.scoring import POINTS

from helpers import card_points, cases, final_diff, matrix
from referee import play_and_check, play_and_check_bluff


def test_R20_point_table_matches_rules() -> None:
    assert [card_points(p) for p in range(104)] == list(POINTS)
    assert sum(card_points(c) for c in range(52)) == 13  # R20: 13 in all with one deck


# ----------------------------------------------------------------------- random play, every variant
VARIANTS = list(
    itertools.product(
        (20, 10, 0),  # double_pisti
        (True, False),  # last_card_pisti
        (0, 3),  # ten_diamonds_pisti_bonus
        (False, True),  # show_stock_bottom
        ((None, 0), (51, 0), (51, 2)),  # target, win_margin
    )
)


BLUFF_VARIANTS = list(itertools.product(
    (False, True),  # bluff_jack_double
    (True, False),  # last_card_pisti
    ((20, 0, False), (0, 3, True), (10, 3, False)),  # double_pisti, 10♦ bonus, show_stock_bottom
    ((None, 0), (51, 2)),  # target, win_margin
))


@pytest.mark.parametrize("settings_case", matrix())  # 2–6 players, partnerships, two decks; bluff off/on
def test_R6_R22_R23_R27_R29_invariants_under_random_play_all_variants(settings_case) -> None:
    """Every scoring variant, match length and the shown stock bottom; with bluffs the R29
    variants (bluff_jack_double) instead of the pişti-only ones and the bluff shadow tally."""
    table = settings_case.kwargs
    n = table["num_players"]
    if not settings_case.bluff:
        total_steps = 0
        for i, (dp, lcp, bonus, ssb, (target, margin)) in enumerate(VARIANTS):
            settings = make_settings(**table, double_pisti=dp, last_card_pisti=lcp, ten_diamonds_pisti_bonus=bonus,
                                     show_stock_bottom=ssb, target=target, win_margin=margin)
            total_steps += play_and_check(settings, seed=1000 * n + i)
        assert total_steps >= len(VARIANTS) * 48
        return
    claims = 0
    for i, (jd, lcp, (dp, bonus, ssb), (target, margin)) in enumerate(BLUFF_VARIANTS):
        settings = make_settings(**table, bluff_jack_double=jd, last_card_pisti=lcp, double_pisti=dp,
                                 ten_diamonds_pisti_bonus=bonus, show_stock_bottom=ssb, target=target,
                                 win_margin=margin)
        for k in range(3):
            claims += play_and_check_bluff(settings, seed=500 * n + 31 * i + k)
    assert claims > 3 * len(BLUFF_VARIANTS)


def test_R25_R26_long_match_with_margin() -> None:
    """A default-target match (151) with a margin: several hands, ends exactly per R25/R26."""
    for seed in range(3):
        play_and_check(make_settings(num_players=2, target=151, win_margin=2), seed=77 + seed)
        play_and_check(make_settings(num_players=3, target=101, win_margin=5), seed=88 + seed)


# --------------------------------------------------------------------------- AEC env
ENV_CASES = cases(
    "2p hand", "2p 51 margin2 bonus3", "3p 51 last-card-off", "4p-partners 51 double10 stock-bottom",
    "4p-solo hand double0", "6p-2decks 51 margin2", "5p-2decks hand stock-bottom",
)


@pytest.mark.parametrize("settings_case", ENV_CASES)
def test_env_diff_rewards_sum_to_final_score_difference(settings_case) -> None:
    kw = settings_case.kwargs
    for seed in range(2):
        e = pisti_env.env(reward="diff", **kw)
        e.reset(seed=seed)
        rng = random.Random(seed)
        game = e.unwrapped.game
        side_of = game.side_of
        agents = list(e.possible_agents)
        per_step = {a: 0.0 for a in agents}
        public_before = list(game.public_total)
        while not game.done:
            agent = e.agent_selection
            seat = agents.index(agent)
            assert seat == game.turn
            mask = e.observe(agent)["action_mask"]
            assert sorted(np.flatnonzero(mask).tolist()) == game.legal_actions()
            for other in agents:
                if other != agent:
                    assert not e.observe(other)["action_mask"].any()
            e.step(int(rng.choice(np.flatnonzero(mask).tolist())))
            # Each step's reward is the change in (own public points - mean of the others').
            pub = list(game.public_total)
            for a in agents:
                side = side_of[agents.index(a)]
                others_now = [x for i, x in enumerate(pub) if i != side]
                others_before = [x for i, x in enumerate(public_before) if i != side]
                expected = (pub[side] - sum(others_now) / len(others_now)) - (
                    public_before[side] - sum(others_before) / len(others_before)
                )
                assert e.rewards[a] == pytest.approx(expected, abs=1e-9)
                per_step[a] += e.rewards[a]
            public_before = pub
        for a in agents:
            assert per_step[a] == pytest.approx(final_diff(game, side_of[agents.index(a)]), abs=1e-6)


@pytest.mark.parametrize("settings_case", ENV_CASES[:4])
def test_env_agent_iter_last_rewards_sum_to_final_score_difference(settings_case) -> None:
    """The canonical AEC loop (``agent_iter``/``last``) sees the same episode totals."""
    kw = settings_case.kwargs
    e = pisti_env.env(reward="diff", **kw)
    e.reset(seed=5)
    rng = random.Random(5)
    game = e.unwrapped.game
    agents = list(e.possible_agents)
    totals = {a: 0.0 for a in agents}
    for agent in e.agent_iter(max_iter=100_000):
        obs, reward, term, trunc, info = e.last()
        totals[agent] += reward
        if term or trunc:
            e.step(None)
        else:
            e.step(int(rng.choice(np.flatnonzero(obs["action_mask"]).tolist())))
    assert game.done and e.agents == []
    for a in agents:
        assert totals[a] == pytest.approx(final_diff(game, game.side_of[agents.index(a)]), abs=1e-6)
