"""The no-leak checks of R30/R31, shared by the observation formats (``test_no_leak.py`` runs
them on ``pisti_v0``'s Dict observation, ``test_flat_observation.py`` on its flat form).

Method: stop a random game at a random moment, take the cards a seat cannot know (R31), deal
them differently (permute them among their positions in the physical deck), replay the same
plays from the same dealer and check that nothing the seat sees changes — its observation
(through the encoder and through the env), its action mask, the rewards. Conversely, a change
the seat *can* see (one card of its own hand swapped with an unknown one) must show, and the
permutations must change other seats' views or the true state in some trials, so the test is
not vacuous.

What a seat sees through the env is read the same way in both formats: ``seat_vector`` (the
Dict's ``"observation"``, or the flat observation itself) and ``seat_mask`` (the Dict's
``"action_mask"``, or ``infos[agent]["action_mask"]`` of the flat form).
"""

from __future__ import annotations

import random

import numpy as np

import pisti_env
from pisti_env import Game, ObservationEncoder, make_settings
from pisti_env.rules.actions import BELIEVE, FACE_DOWN
from pisti_env.rules import locations

from helpers import rank, rules_unknown


def seat_vector(e, agent: str) -> np.ndarray:
    """``agent``'s observation vector from ``e``, whatever its ``observation_format``."""
    obs = e.observe(agent)
    return obs["observation"] if isinstance(obs, dict) else obs


def seat_mask(e, agent: str) -> np.ndarray:
    """``agent``'s action mask from ``e``: in the Dict observation, or in the flat form's info."""
    if e.unwrapped.observation_format == "flat":
        return e.infos[agent]["action_mask"]
    return e.observe(agent)["action_mask"]


def seen(e) -> dict[str, bytes]:
    """Every agent's observation vector and mask now, as bytes."""
    return {a: seat_vector(e, a).tobytes() + seat_mask(e, a).tobytes() for a in e.possible_agents}


def replay_game(settings, deck_ids: list[int], dealer: int, history: list[tuple[int, int]]) -> Game:
    g = Game(settings, deck=deck_ids, dealer=dealer)
    for seat, card in history:
        assert g.turn == seat, "the replay must stay legal"
        g.step(card)
    return g


def replay_env(kw: dict, deck_ids: list[int], dealer: int, actions, mapping: dict[int, int] | None = None,
               observation_format: str = "dict"):
    """Replays ``actions`` as (seat, action) through the env; with ``mapping`` (physical card ->
    the card dealt in its place, one deck) a card played face up or down (R29) is the card now
    at the same place. Returns (env, per-step rewards, per-step observation bytes per agent)."""
    e = pisti_env.env(reward="diff", observation_format=observation_format, **kw)
    e.reset(seed=12345, options={"deck": deck_ids, "dealer": dealer})
    rewards, observations = [], [seen(e)]
    for seat, action in actions:
        assert e.agent_selection == f"player_{seat}"
        if mapping is not None and action < BELIEVE:  # a card, face up or down: the same physical place
            action = (action - action % FACE_DOWN) + mapping.get(action % FACE_DOWN, action % FACE_DOWN)
        e.step(action)
        rewards.append(dict(e.rewards))
        observations.append(seen(e))
    return e, rewards, observations


def check_plain(kw: dict, observation_format: str = "dict") -> None:
    """Without bluffs: the unknown cards are permuted and the same plays replayed through the
    engine and through the env (built with ``observation_format``)."""
    settings = make_settings(**kw)
    enc = ObservationEncoder(settings)
    n = settings.num_players
    plays_per_hand = 52 * settings.decks - 4
    other_changed = state_changed = converse_checked = hidden_unknown_seen = 0
    trials = 15
    for trial in range(trials):
        seed = 7919 * trial + 31 * n + (1 if settings.show_stock_bottom else 0)
        rng = random.Random(seed)
        # The original game, through the env, stopped at a random moment of the hand.
        ea = pisti_env.env(reward="diff", observation_format=observation_format, **kw)
        ea.reset(seed=seed)
        k = rng.randrange(plays_per_hand)
        rewards_a = []
        obs_a = [seen(ea)]
        for _ in range(k):
            mask = seat_mask(ea, ea.agent_selection)
            ea.step(int(rng.choice(np.flatnonzero(mask).tolist())))
            rewards_a.append(dict(ea.rewards))
            obs_a.append(seen(ea))
        g = ea.unwrapped.game
        assert not g.done and len(g.history) == k
        ids = [p % 52 for p in g.deck]
        history = list(g.history)

        # Sanity: replaying the original deck gives the very same state.
        same = replay_game(settings, ids, g.dealer, history)
        assert [sorted(p % 52 for p in h) for h in same.hands] == [sorted(p % 52 for p in h) for h in g.hands]

        for seat in range(n):
            unknown = g.unknown_cards(seat)
            assert len(unknown) == len(set(unknown))
            assert set(unknown) == rules_unknown(g, seat), f"seat {seat}: unknown_cards disagrees with R8/R28/R31"
            assert all(g.played_by[p] == locations.NOBODY for p in unknown), "a played card cannot be unknown"
            hidden_unknown_seen += any(p in g.deck[:4] for p in unknown)

            # Deal the unknown cards differently: permute them among their deck positions.
            positions = sorted(g.deck.index(p) for p in unknown)
            perm = [ids[i] for i in positions]
            rng.shuffle(perm)
            new_ids = list(ids)
            for i, c in zip(positions, perm):
                new_ids[i] = c
            g2 = replay_game(settings, new_ids, g.dealer, history)
            assert enc.encode(g2, seat).tobytes() == enc.encode(g, seat).tobytes(), f"seat {seat} sees the unknown cards"
            assert (g2.legal_actions() if g2.turn == seat else None) == (g.legal_actions() if g.turn == seat else None)
            assert g2.turn == g.turn
            other_changed += any(
                enc.encode(g2, o).tobytes() != enc.encode(g, o).tobytes() for o in range(n) if o != seat
            )
            state_changed += [sorted(p % 52 for p in h) for h in g2.hands] != [
                sorted(p % 52 for p in h) for h in g.hands
            ] or [p % 52 for p in g2.deck] != ids

            # The same through the env's observe (deck/dealer reset options), at every step so
            # far, with identical rewards for every agent (diff rewards count public points).
            eb, rewards_b, obs_b = replay_env(kw, new_ids, g.dealer, history, observation_format=observation_format)
            agent = f"player_{seat}"
            assert [o[agent] for o in obs_b] == [o[agent] for o in obs_a], f"seat {seat}: env observation leaks"
            assert seat_vector(eb, agent).tobytes() == seat_vector(ea, agent).tobytes()
            assert seat_mask(eb, agent).tobytes() == seat_mask(ea, agent).tobytes()
            assert rewards_b == rewards_a, f"seat {seat}: the reward stream depends on unknown cards"

            # Converse: swap one card of the seat's own hand with one unknown card of another id.
            hand = g.hands[seat]
            if hand:
                h = rng.choice(hand)
                candidates = [u for u in unknown if u % 52 != h % 52]
                u = rng.choice(candidates)
                i, j = g.deck.index(h), g.deck.index(u)
                swapped = list(ids)
                swapped[i], swapped[j] = swapped[j], swapped[i]
                g3 = replay_game(settings, swapped, g.dealer, history)
                assert enc.encode(g3, seat).tobytes() != enc.encode(g, seat).tobytes()
                if g.turn == seat:
                    assert g3.legal_actions() != g.legal_actions()
                converse_checked += 1
    assert other_changed > 0, "permuting the unknown cards never changed another seat's view: vacuous"
    assert state_changed > 0, "permuting the unknown cards never changed the true state: vacuous"
    assert converse_checked >= trials
    assert hidden_unknown_seen > 0


def random_run_with_claims(kw: dict, seed: int, observation_format: str = "dict"):
    """A random single hand through the env, stopped at a random moment; returns the env, the
    actions as (seat, action), the face-down plays, rewards and observations at every step."""
    rng = random.Random(seed)
    e = pisti_env.env(reward="diff", observation_format=observation_format, **kw)
    e.reset(seed=seed)
    game = e.unwrapped.game
    stop = rng.randrange(10, 70)
    actions, face_down, rewards = [], [], []
    obs = [seen(e)]
    while len(actions) < stop:
        left = game.in_hands + game.stock_size
        if left == 0 or (left == 1 and game.claimant < 0):
            break  # the hand's end makes every point public (R30): stop just before it
        seat = game.turn
        legal = np.flatnonzero(seat_mask(e, e.agent_selection)).tolist()
        # Prefer claims so that face-down cards are common.
        downs = [a for a in legal if FACE_DOWN <= a < BELIEVE]
        action = rng.choice(downs) if downs and rng.random() < 0.6 else rng.choice(legal)
        if FACE_DOWN <= action < BELIEVE:
            face_down.append((seat, action - FACE_DOWN))
        actions.append((seat, action))
        e.step(action)
        rewards.append(dict(e.rewards))
        obs.append(seen(e))
    return e, actions, face_down, rewards, obs


def check_with_face_down(kw: dict, observation_format: str = "dict") -> None:
    """With bluffs (R29): deal what a seat cannot know differently (permuting it among its deck
    positions, the face-down cards of other seats included), replay the same actions: the
    seat's observation at every step, its mask and its rewards are unchanged. Swapping a card
    of its own hand with an unknown one does show."""
    settings = make_settings(**kw)
    n = settings.num_players
    enc = ObservationEncoder(settings)
    face_down_unknown = partner_face_down = moved = converse = 0
    for trial in range(8):
        seed = 1000 * trial + 17 * n + settings.show_stock_bottom
        rng = random.Random(seed)
        ea, actions, face_down, rewards_a, obs_a = random_run_with_claims(kw, seed, observation_format)
        g = ea.unwrapped.game
        ids = list(g.deck)  # one deck: physical index = card id
        for seat in range(n):
            unknown = g.unknown_cards(seat)
            assert set(unknown) == rules_unknown(g, seat, face_down), f"seat {seat}: unknown_cards disagrees with R8/R28/R29/R31"
            assert all(g.played_by[p] == locations.NOBODY for p in unknown)
            hidden_down = [p for p in unknown if g.where[p] in range(locations.PILE_DOWN, locations.CAPT_DOWN + 6)]
            face_down_unknown += bool(hidden_down)
            if settings.partnerships:
                partner = (seat + 2) % 4
                partner_face_down += any(g.where[p] in (locations.PILE_DOWN + partner, locations.CAPT_DOWN + partner) for p in unknown)
            positions = sorted(ids.index(p) for p in unknown)
            perm = [ids[i] for i in positions]
            rng.shuffle(perm)
            new_ids = list(ids)
            mapping = {}
            for i, c in zip(positions, perm):
                new_ids[i] = c
                mapping[ids[i]] = c
            moved += any(mapping[p] != p for p in hidden_down)
            eb, rewards_b, obs_b = replay_env(kw, new_ids, g.dealer, actions, mapping, observation_format)
            agent = f"player_{seat}"
            assert [o[agent] for o in obs_b] == [o[agent] for o in obs_a], f"seat {seat}: the observation leaks"
            assert rewards_b == rewards_a, f"seat {seat}: the rewards depend on unseen cards"
            g2 = eb.unwrapped.game
            assert enc.encode(g2, seat).tobytes() == enc.encode(g, seat).tobytes()
            assert seat_mask(eb, agent).tobytes() == seat_mask(ea, agent).tobytes()
            # Converse: one card of the seat's own hand swapped with an unknown one shows.
            hand = g.hands[seat]
            candidates = [u for u in unknown if rank(u) != rank(hand[0])] if hand else []
            if candidates:
                h, u = hand[0], rng.choice(candidates)
                swapped = list(ids)
                swapped[ids.index(h)], swapped[ids.index(u)] = u, h
                try:
                    ec, _, _ = replay_env(kw, swapped, g.dealer, actions, {h: u, u: h}, observation_format)
                except ValueError:
                    continue  # the swap made an earlier play illegal (e.g. an R7 deal Jack): skip
                assert enc.encode(ec.unwrapped.game, seat).tobytes() != enc.encode(g, seat).tobytes()
                converse += 1
    assert face_down_unknown > 0 and moved > 0, "no unseen face-down card was ever dealt again: vacuous"
    if settings.partnerships:
        assert partner_face_down > 0, "never met a partner's face-down card"
    assert converse > 0
