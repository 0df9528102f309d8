"""The pure step of the batched engine: ``(tables, state, actions) -> (next state, outcome)``.

`step` takes its own copy of each field it updates in place before it updates it
(`owned_copy`), so its input state is never written to, and
the same input always gives the same output: no random generator, no hidden state.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

from ..rules.cards import NUM_CARD_IDS
from ..rules.counters import Counter
from .hands import blank_state, deal_, end_hands_, start_hands_
from .moves import bluff_move, play_face_up
from .state import BatchState, owned_copy, select
from .tables import Tables


@dataclass(frozen=True)
class Outcome:
    """What a step did, besides the next state (see [`BatchStep`][pisti_env.batched.state.BatchStep],
    which adds the next seat's observation and mask)."""

    rewards: torch.Tensor  # (B, n) float32
    done: torch.Tensor  # (B,) bool: the episode ended (and a new one started)
    hand_over: torch.Tensor  # (B,) bool: a hand ended
    hand_result: dict[str, torch.Tensor]  # (B, S) each, zero where no hand ended
    match_scores: torch.Tensor  # (B, S) of the finished episode where done
    winner: torch.Tensor  # (B,) side, -1: none or a draw


def first_state(t: Tables, decks: torch.Tensor | None = None, dealers: torch.Tensor | None = None) -> BatchState:
    """B new episodes, dealt; optionally from given first-hand decks (B, 52) and dealers (B,),
    both already validated."""
    everything = torch.ones(t.batch_size, dtype=torch.bool, device=t.device)
    return start_hands_(t, blank_state(t), everything, new_episode=everything, decks=decks, dealers=dealers)


def quiet_outcome(t: Tables, state: BatchState, rewards: torch.Tensor | None = None) -> Outcome:
    """The outcome of no step at all: no rewards (or ``rewards``), nothing ended."""
    B, S, dev = t.batch_size, t.num_sides, t.device
    none = torch.zeros(B, dtype=torch.bool, device=dev)
    results = torch.zeros(len(t.result_keys), B, S, dtype=torch.int64, device=dev).unbind(0)  # one allocation
    return Outcome(
        rewards=torch.zeros(B, t.num_players, dtype=torch.float32, device=dev) if rewards is None else rewards,
        done=none,
        hand_over=none,
        hand_result=dict(zip(t.result_keys, results)),
        match_scores=state.side_counts[:, Counter.MATCH_SCORES],
        winner=torch.full((B,), -1, dtype=torch.int64, device=dev),
    )


def step(
    t: Tables, state: BatchState, a: torch.Tensor, active: torch.Tensor | None = None
) -> tuple[BatchState, Outcome]:
    """Every game's seat to move takes the legal action ``a[b]`` (the caller checks it);
    finished hands are scored and redealt, finished episodes restarted. ``state`` is not
    modified.

    ``active``: an optional (B,) bool mask; only those games move. The others keep their
    state bit for bit (`select` after the step) and get a
    quiet outcome: no rewards, no hand or episode ended. ``a`` must still be legal in every
    game (what [`BatchedPisti.step_state`][pisti_env.batched.BatchedPisti.step_state] ensures)."""
    moved, outcome = _step_all(t, state, a)
    if active is None:
        return moved, outcome
    quiet = quiet_outcome(t, state)
    keep = active[:, None]
    return select(active, moved, state), Outcome(
        rewards=outcome.rewards * keep,
        done=outcome.done & active,
        hand_over=outcome.hand_over & active,
        hand_result={k: torch.where(keep, v, quiet.hand_result[k]) for k, v in outcome.hand_result.items()},
        match_scores=torch.where(keep, outcome.match_scores, quiet.match_scores),
        winner=torch.where(active, outcome.winner, quiet.winner),
    )


def _step_all(t: Tables, state: BatchState, a: torch.Tensor) -> tuple[BatchState, Outcome]:
    """`step` for every game of the batch."""
    # The move makes a fresh ``code``: from here on the step owns it (deals write it in place).
    state = bluff_move(t, state, a) if t.settings.bluff else play_face_up(t, state, a)

    # R18: deal again when every hand is empty; R19–R26 when the stock is empty too.
    hands_empty = state.in_hands == 0
    if t.settings.bluff:  # R29: a pending claim is answered before any deal or hand end
        hands_empty = hands_empty & (state.claimant < 0)
    hand_over, any_hand_over = hands_empty, False  # all False unless some hand is empty
    if bool(hands_empty.any()):  # most steps: no hand is empty, one check (one GPU sync) in all
        stock_left = state.stock_pos < NUM_CARD_IDS
        need_deal = hands_empty & stock_left
        hand_over = hands_empty & ~stock_left
        if bool(need_deal.any()):
            state = deal_(t, state, need_deal)
        any_hand_over = bool(hand_over.any())
    if any_hand_over:
        # Ending and starting hands write the decks too (not copied before: hand ends are rare).
        state = owned_copy(state, ("deck",))
        state, hand_result, done, winner = end_hands_(t, state, hand_over)
        match_scores = state.side_counts[:, Counter.MATCH_SCORES]
        public_total = state.public_total
        rewards = _rewards(t, state, public_total, done, winner)
        state = state.replace(reward_base=public_total)
        if bool(done.any()):
            state = start_hands_(t, state, done, new_episode=done)
        return state, Outcome(rewards, done, hand_over, hand_result, match_scores, winner)
    # No hand ended: nothing is scored, no episode ends (the common case: few operations).
    public_total = state.public_total
    if t.reward_mode == "diff":  # ``done`` and ``winner`` unread
        quiet = quiet_outcome(t, state, _rewards(t, state, public_total, hand_over, hand_over))
    else:
        quiet = quiet_outcome(t, state)
        quiet = dataclasses.replace(quiet, rewards=_rewards(t, state, public_total, quiet.done, quiet.winner))
    return state.replace(reward_base=public_total), dataclasses.replace(quiet, hand_over=hand_over)


def _rewards(
    t: Tables, state: BatchState, public_total: torch.Tensor, done: torch.Tensor, winner: torch.Tensor
) -> torch.Tensor:
    """(B, n) per-seat rewards of this step, exactly as the AEC env computes them: the change
    of each side's public total (``public_total``, ``state.public_total``) against the others'
    mean (``"diff"``), or +1/0/-1 for a won/drawn/lost episode (``"win"``)."""
    if t.reward_mode == "diff":
        delta = (public_total - state.reward_base).float()  # (B, S)
        others = (delta.sum(1, keepdim=True) - delta) / (t.num_sides - 1)
        per_side = delta - others
    else:
        scores = state.side_counts[:, Counter.MATCH_SCORES]
        best = scores.max(1, keepdim=True).values
        won = winner[:, None] == t.side_ids
        draw_best = (winner < 0)[:, None] & (scores == best)
        per_side = torch.where(won, 1.0, torch.where(draw_best, 0.0, -1.0)) * done[:, None]
    return per_side if t.seats_are_sides else per_side.index_select(1, t.side_of)
