"""The state of B games as tensors, what a step returns, and the row helpers on both.

``BatchState``'s field names, shapes and dtypes are part of training checkpoints (they save
the engine state field by field): never rename or retype a field.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import torch

from ..rules.counters import Counter

CODE_WIDTH = 256  # ``code`` packs two byte-sized codes: location * CODE_WIDTH + playing seat
CODE_DTYPE = torch.int32  # codes and the indices built from them stay below 2**31; half the bytes of int64
# The (B, 52) fields a step owns once it has a fresh copy (``code``: the move makes one;
# ``deck``: `owned_copy` before a hand ends) and then updates in place: cheaper than a
# fresh tensor for every change.
OWNED_FIELDS = ("code", "deck")


@dataclass(frozen=True)
class BatchState:
    """The state of B games; every field is a tensor with the batch on dimension 0.

    ``code[b, card]`` is ``where * CODE_WIDTH + played_by``: the card's location code
    (`pisti_env.rules.locations`) and its playing-seat code, exactly as ``Game.where`` /
    ``Game.played_by`` of the Python engine (see the ``where`` and ``played_by`` properties);
    ``deck[b]`` this hand's deck (card ids, item 0 dealt first, after the R28 cut);
    ``side_counts[b, row, side]`` the per-side counters, rows named by
    [`pisti_env.rules.counters.Counter`][pisti_env.rules.counters.Counter] (the bluff rows only with the bluff variant);
    ``claimant``/``claim_card`` the pending claim (R29), as ``Game.claimant`` and
    ``Game.claim_card`` (always -1 without the variant).
    """

    code: torch.Tensor  # (B, 52) int32: location code * CODE_WIDTH + playing-seat code
    deck: torch.Tensor  # (B, 52) int64 card ids
    stock_pos: torch.Tensor  # (B,) next deck index to deal
    turn: torch.Tensor  # (B,) seat to move
    dealer: torch.Tensor  # (B,)
    in_hands: torch.Tensor  # (B,) cards held by all seats together
    hand_sizes: torch.Tensor  # (B, n)
    top: torch.Tensor  # (B,) top card of the pile (meaningless when the pile is empty)
    pile_size: torch.Tensor  # (B,)
    pile_hidden: torch.Tensor  # (B,) never-turned table cards in the pile (R8)
    pile_points_public: torch.Tensor  # (B,) points of the pile's public cards
    pile_points_hidden: torch.Tensor  # (B,) points of its never-turned cards
    last_capturer: torch.Tensor  # (B,) side, -1 = nobody yet
    side_counts: torch.Tensor  # (B, counter rows, sides) int64
    reward_base: torch.Tensor  # (B, sides) public totals at the last reward (R30)
    hands_completed: torch.Tensor  # (B,) in this episode
    episode: torch.Tensor  # (B,) episodes started in this slot (feeds the deck hash)
    attempt: torch.Tensor  # (B,) deck draws for this hand (> 0 after a void deal, R7)
    slot: torch.Tensor  # (B,) the game's slot number 0..B-1 (feeds the deck hash)
    claimant: torch.Tensor  # (B,) seat of the pending claim of a pişti (R29), -1: none
    claim_card: torch.Tensor  # (B,) its face-down card id, -1: none

    def replace(self, **changes: torch.Tensor) -> "BatchState":
        """A copy with ``changes`` (field name -> tensor); ``TypeError`` for a name that is not
        a field. ``dataclasses.replace`` without its per-field ``__init__`` (a step makes
        several copies, and at small batches Python's share of a step counts)."""
        unknown = changes.keys() - _FIELD_NAMES
        if unknown:
            raise TypeError(f"BatchState has no field {sorted(unknown)[0]!r}")
        copy = object.__new__(type(self))
        copy.__dict__.update(self.__dict__, **changes)  # frozen: written past __setattr__, as __init__ does
        return copy

    @property
    def where(self) -> torch.Tensor:
        """(B, 52) location codes, as ``Game.where``."""
        return self.code // CODE_WIDTH

    @property
    def played_by(self) -> torch.Tensor:
        """(B, 52) playing-seat codes, as ``Game.played_by``."""
        return self.code % CODE_WIDTH

    @property
    def public_total(self) -> torch.Tensor:
        """(B, sides) every point of each side that all seats can count (R30)."""
        return self.side_counts[:, Counter.MATCH_SCORES] + self.side_counts[:, Counter.PUBLIC_POINTS]


@dataclass(frozen=True)
class BatchStep:
    """What [`BatchedPisti.step`][pisti_env.batched.BatchedPisti.step] returns, for every game of the batch.

    ``seat``, ``observation`` and ``action_mask`` describe the seat to move next (in the new
    episode where ``done``); the mask has one entry per action (52, or 106 with the bluff
    variant, R29). ``rewards[b, s]`` is seat ``s``'s reward for this step (the AEC env's
    ``rewards``). ``done``: the episode ended at this step and the game restarted.
    ``hand_over``: a hand ended at this step; ``hand_result`` then holds its per-side
    breakdown (keys of `pisti_env.rules.counters.hand_result_keys`, as ``Game.hand_scores``).
    Where ``done``, ``match_scores`` and ``winner`` (a side, or -1 for a drawn single hand)
    describe the finished episode.
    """

    seat: torch.Tensor
    observation: torch.Tensor
    action_mask: torch.Tensor
    rewards: torch.Tensor
    done: torch.Tensor
    hand_over: torch.Tensor
    hand_result: dict[str, torch.Tensor]
    match_scores: torch.Tensor
    winner: torch.Tensor


FIELDS = tuple(f.name for f in dataclasses.fields(BatchState))
_FIELD_NAMES = frozenset(FIELDS)


def owned_copy(state: BatchState, fields: tuple[str, ...] = OWNED_FIELDS) -> BatchState:
    """``state`` with fresh copies of ``fields`` (some of `OWNED_FIELDS`): the only kind
    of state that the in-place transitions (the functions whose names end in ``_``, each
    naming the fields it writes) may be given. The pure step copies each field before the
    first function that writes it, so its input is never written to."""
    return state.replace(**{name: getattr(state, name).clone() for name in fields})


def select(mask: torch.Tensor, chosen: BatchState, other: BatchState) -> BatchState:
    """Field by field, the games of ``chosen`` where ``mask`` and of ``other`` elsewhere (a
    field both hold as the same tensor is kept as it is). Out of place."""
    fields = {}
    for name in FIELDS:
        x, y = getattr(chosen, name), getattr(other, name)
        fields[name] = x if x is y else torch.where(mask.view(-1, *(1,) * (x.dim() - 1)), x, y)
    return BatchState(**fields)


def take(state: BatchState, idx: torch.Tensor) -> BatchState:
    """The sub-batch of rows ``idx`` (fresh tensors)."""
    return BatchState(**{name: getattr(state, name).index_select(0, idx) for name in FIELDS})


def put_(owned: BatchState, idx: torch.Tensor, sub: BatchState, fields: tuple[str, ...] = FIELDS) -> BatchState:
    """``owned`` with rows ``idx`` of ``fields`` (default: all) replaced by the sub-batch
    ``sub``'s, the other fields kept as they are: the `OWNED_FIELDS` among ``fields``
    (the caller's own, as after `owned_copy`) are written in place, the others out of
    place."""
    changes = {}
    for name in fields:
        whole, part = getattr(owned, name), getattr(sub, name)
        changes[name] = whole.index_copy_(0, idx, part) if name in OWNED_FIELDS else whole.index_copy(0, idx, part)
    return owned.replace(**changes)
