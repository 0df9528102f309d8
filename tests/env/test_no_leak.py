"""R30/R31: a seat's observation, action mask and rewards depend only on what it may know.

Method: stop a random game at a random moment, take the cards a seat cannot know (R31), deal
them differently (permute them among their positions in the physical deck), replay the same
plays from the same dealer and check that nothing the seat sees changes — its observation
(through the encoder and through the env), its action mask, the rewards. Conversely, a change
the seat *can* see (one card of its own hand swapped with an unknown one) must show, and the
permutations must change other seats' views or the true state in some trials, so the test is
not vacuous.

The bluff variant is one more axis of the settings matrix: there the unknown cards include
the face-down cards other seats played and nobody saw (R29), the partner's among them, and the
replay deals those again too.
"""

from __future__ import annotations

import random

import numpy as np

import pisti_env
from pisti_env import Game, ObservationEncoder, make_settings
from pisti_env.actions import BELIEVE, FACE_DOWN
from pisti_env import locations

from helpers import deck_with_prefix, legal_from_mask, rank, rules_unknown


def replay_game(settings, deck_ids: list[int], dealer: int, history: list[tuple[int, int]]) -> Game:
    g = Game(settings, deck=deck_ids, dealer=dealer)
    for seat, card in history:
        assert g.turn == seat, "the replay must stay legal"
        g.step(card)
    return g


def replay_env(kw: dict, deck_ids: list[int], dealer: int, actions, mapping: dict[int, int] | None = None):
    """Replays ``actions`` as (seat, action) through the env; with ``mapping`` (physical card ->
    the card dealt in its place, one deck) a card played face up or down (R29) is the card now
    at the same place. Returns (env, per-step rewards, per-step observation bytes per agent)."""
    e = pisti_env.env(reward="diff", **kw)
    e.reset(seed=12345, options={"deck": deck_ids, "dealer": dealer})
    rewards, observations = [], [{a: e.observe(a)["observation"].tobytes() for a in e.possible_agents}]
    for seat, action in actions:
        assert e.agent_selection == f"player_{seat}"
        if mapping is not None and action < BELIEVE:  # a card, face up or down: the same physical place
            action = (action - action % FACE_DOWN) + mapping.get(action % FACE_DOWN, action % FACE_DOWN)
        e.step(action)
        rewards.append(dict(e.rewards))
        observations.append({a: e.observe(a)["observation"].tobytes() for a in e.possible_agents})
    return e, rewards, observations


def check_plain(kw: dict) -> None:
    """Without bluffs: the unknown cards are permuted and the same plays replayed through the
    engine and through the env."""
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
        ea = pisti_env.env(reward="diff", **kw)
        ea.reset(seed=seed)
        k = rng.randrange(plays_per_hand)
        rewards_a = []
        obs_a = [{a: ea.observe(a)["observation"].tobytes() for a in ea.possible_agents}]
        for _ in range(k):
            mask = ea.observe(ea.agent_selection)["action_mask"]
            ea.step(int(rng.choice(np.flatnonzero(mask).tolist())))
            rewards_a.append(dict(ea.rewards))
            obs_a.append({a: ea.observe(a)["observation"].tobytes() for a in ea.possible_agents})
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
            eb, rewards_b, obs_b = replay_env(kw, new_ids, g.dealer, history)
            agent = f"player_{seat}"
            assert [o[agent] for o in obs_b] == [o[agent] for o in obs_a], f"seat {seat}: env observation leaks"
            oa, ob = ea.observe(agent), eb.observe(agent)
            assert ob["observation"].tobytes() == oa["observation"].tobytes()
            assert ob["action_mask"].tobytes() == oa["action_mask"].tobytes()
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


def random_run_with_claims(kw: dict, seed: int):
    """A random single hand through the env, stopped at a random moment; returns the env, the
    actions as (seat, action), the face-down plays, rewards and observations at every step."""
    rng = random.Random(seed)
    e = pisti_env.env(reward="diff", **kw)
    e.reset(seed=seed)
    game = e.unwrapped.game
    stop = rng.randrange(10, 70)
    actions, face_down, rewards = [], [], []
    obs = [{a: e.observe(a)["observation"].tobytes() for a in e.possible_agents}]
    while len(actions) < stop:
        left = game.in_hands + game.stock_size
        if left == 0 or (left == 1 and game.claimant < 0):
            break  # the hand's end makes every point public (R30): stop just before it
        seat = game.turn
        legal = legal_from_mask(e.observe(e.agent_selection))
        # Prefer claims so that face-down cards are common.
        downs = [a for a in legal if FACE_DOWN <= a < BELIEVE]
        action = rng.choice(downs) if downs and rng.random() < 0.6 else rng.choice(legal)
        if FACE_DOWN <= action < BELIEVE:
            face_down.append((seat, action - FACE_DOWN))
        actions.append((seat, action))
        e.step(action)
        rewards.append(dict(e.rewards))
        obs.append({a: e.observe(a)["observation"].tobytes() for a in e.possible_agents})
    return e, actions, face_down, rewards, obs


def check_with_face_down(kw: dict) -> None:
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
        ea, actions, face_down, rewards_a, obs_a = random_run_with_claims(kw, seed)
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
            eb, rewards_b, obs_b = replay_env(kw, new_ids, g.dealer, actions, mapping)
            agent = f"player_{seat}"
            assert [o[agent] for o in obs_b] == [o[agent] for o in obs_a], f"seat {seat}: the observation leaks"
            assert rewards_b == rewards_a, f"seat {seat}: the rewards depend on unseen cards"
            g2 = eb.unwrapped.game
            assert enc.encode(g2, seat).tobytes() == enc.encode(g, seat).tobytes()
            assert eb.observe(agent)["action_mask"].tobytes() == ea.observe(agent)["action_mask"].tobytes()
            # Converse: one card of the seat's own hand swapped with an unknown one shows.
            hand = g.hands[seat]
            candidates = [u for u in unknown if rank(u) != rank(hand[0])] if hand else []
            if candidates:
                h, u = hand[0], rng.choice(candidates)
                swapped = list(ids)
                swapped[ids.index(h)], swapped[ids.index(u)] = u, h
                try:
                    ec, _, _ = replay_env(kw, swapped, g.dealer, actions, {h: u, u: h})
                except ValueError:
                    continue  # the swap made an earlier play illegal (e.g. an R7 deal Jack): skip
                assert enc.encode(ec.unwrapped.game, seat).tobytes() != enc.encode(g, seat).tobytes()
                converse += 1
    assert face_down_unknown > 0 and moved > 0, "no unseen face-down card was ever dealt again: vacuous"
    if settings.partnerships:
        assert partner_face_down > 0, "never met a partner's face-down card"
    assert converse > 0


def test_R29_R30_R31_observation_is_independent_of_unknown_cards(settings_case) -> None:
    """Over the default settings matrix (``conftest.settings_case``: every table, with and
    without the shown stock bottom and bluffs): deal what a seat cannot know differently,
    replay the same plays: nothing the seat sees changes (observation, mask, rewards); a
    change it can see shows."""
    if settings_case.bluff:
        check_with_face_down(settings_case.kwargs)
    else:
        check_plain(settings_case.kwargs)


def test_R8_hidden_table_cards_known_to_capturing_side_only() -> None:
    """A crafted deal: the first capture takes the 3 never-turned table cards; the capturing
    side then knows them (the partner too), the other side does not (R8, R30, R31)."""
    # Table: 3C 4C 5C face down, 6C face up. 4 players, dealer 3, so seat 0 plays first.
    # Seat 0 gets 6D (captures the 4-card pile, R15: no pişti), seats 1-3 get the next cards.
    deck = deck_with_prefix(["3C", "4C", "5C", "6C", "6D", "7D", "8D", "9D"])
    g = pisti_env.new_game(num_players=4, partnerships=True, target=None, deck=deck, dealer=3)
    hidden = {pisti_env.parse_card(c) for c in ("3C", "4C", "5C")}
    enc = ObservationEncoder(g.settings)
    for seat in range(4):
        assert hidden <= set(g.unknown_cards(seat))
    g.step(pisti_env.parse_card("6D"))
    assert g.captured_count == [5, 0]
    for seat in range(4):
        u = set(g.unknown_cards(seat))
        assert u == rules_unknown(g, seat)
        if seat % 2 == 0:  # side 0 took them: both partners know them
            assert not hidden & u
            obs = enc.encode(g, seat)
            plane = obs[enc.layout["captured_side_0"]]
            assert all(plane[c] == 1 for c in hidden)
        else:
            assert hidden <= u
            obs = enc.encode(g, seat)
            plane = obs[enc.layout["captured_side_1"]]  # side +1 = side 0 seen from side 1
            assert not any(plane[c] for c in hidden)
            assert plane[pisti_env.parse_card("6C")] == 1 and plane[pisti_env.parse_card("6D")] == 1
