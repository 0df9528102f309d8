"""Decks and first dealers from a counter-based hash: no random generator, no state.

Every deck is a function of ``(seed, game slot, episode, hand, attempt)`` alone, so game
``i``'s trajectory depends neither on the other games nor on the batch size, and is the same
on every device. Changing anything here changes every game a seed gives: don't.
"""

from __future__ import annotations

import numpy as np
import torch

from ..rules.cards import JACK, NUM_CARD_IDS, TABLE_SIZE

_MASK32 = 0xFFFFFFFF
_CARD_STRIDE = 64  # hash keys of one deck's cards: key * _CARD_STRIDE + card id (a stride above 52)
_MAX_DRAWS = 100  # a void deal has probability 1/270725: the draw loop runs once or twice


# The rounds of `mix` (shift, then multiplier; multipliers below 2**31), and its last shift.
_MIX_ROUNDS = ((16, 0x7FEB352D), (15, 0x2C1B3C6D), (16, 0x297A2D39))
_MIX_LAST_SHIFT = 15


def mix(x: torch.Tensor) -> torch.Tensor:
    """A 32-bit integer hash (xor-shift-multiply rounds); int64 tensors holding values below
    2**32, multipliers below 2**31 so nothing overflows."""
    x = x & _MASK32
    for shift, multiplier in _MIX_ROUNDS:
        x = ((x ^ (x >> shift)) * multiplier) & _MASK32
    return x ^ (x >> _MIX_LAST_SHIFT)


def hash_key(seed: int, *parts: torch.Tensor | int, device: torch.device) -> torch.Tensor:
    """The hash of ``seed`` and ``parts`` (tensors of one shape, or ints), element-wise. On a
    CPU the same values come from NumPy (`_hash_key_numpy`: the batch is small here, and
    a NumPy operation costs a fraction of a torch one)."""
    if torch.device(device).type == "cpu":
        return _hash_key_numpy(seed, parts)
    return _hash_key_torch(seed, parts, device)


def _hash_key_torch(seed: int, parts: tuple[torch.Tensor | int, ...], device: torch.device) -> torch.Tensor:
    """`hash_key` in torch (every device but a CPU)."""
    h = mix(torch.as_tensor(seed & _MASK32, device=device) ^ 0x5BD1E995)
    h = h ^ (seed >> 32)
    for part in parts:
        h = mix(h * 31 + torch.as_tensor(part, device=device) + 0x9E3779B)
    return h


def _mix_numpy(x: np.ndarray) -> np.ndarray:
    """`mix` of a uint32 array, in place (its products wrap modulo 2**32 exactly as
    ``mix`` masks them); returns ``x``."""
    for shift, multiplier in _MIX_ROUNDS:
        x ^= x >> shift
        x *= np.uint32(multiplier)
    x ^= x >> _MIX_LAST_SHIFT
    return x


def _hash_key_numpy(seed: int, parts: tuple[torch.Tensor | int, ...]) -> torch.Tensor:
    """`hash_key` on a CPU, in uint32 arithmetic: every step of ``hash_key`` is taken
    modulo 2**32 (``mix`` masks its input first), so wrapping gives the same values."""
    with np.errstate(over="ignore"):  # the wrap is the point (NumPy warns of it on scalars only)
        h = _mix_numpy(np.array((seed & _MASK32) ^ 0x5BD1E995, dtype=np.uint32))
        h ^= np.uint32((seed >> 32) & _MASK32)
        for part in parts:
            value = part.numpy() if isinstance(part, torch.Tensor) else np.asarray(part)
            h = _mix_numpy(h * np.uint32(31) + value.astype(np.int64).astype(np.uint32) + np.uint32(0x9E3779B))
    return torch.from_numpy(np.asarray(h, dtype=np.int64))


def first_dealers(seed: int, slot: torch.Tensor, episode: torch.Tensor, num_players: int) -> torch.Tensor:
    """(k,) the first dealer of each game's episode (R5)."""
    return hash_key(seed, slot, episode, -1, 0, device=slot.device) % num_players


def hashed_decks(
    seed: int, slot: torch.Tensor, episode: torch.Tensor, hand: torch.Tensor, rank: torch.Tensor, cut: bool
) -> tuple[torch.Tensor, torch.Tensor]:
    """(k, 52) decks and (k,) attempts: one deck per row, a permutation keyed by (seed, slot,
    episode, hand, attempt); a void deal (four Jacks on the table, R7) draws again with the
    next attempt. ``cut``: apply the R28 cut (``show_stock_bottom``). ``rank``: the (52,)
    rank table."""
    k, device = slot.shape[0], slot.device
    attempt = torch.zeros(k, dtype=torch.int64, device=device)
    todo = torch.arange(k, device=device)
    deck = None
    for _ in range(_MAX_DRAWS):
        key = hash_key(seed, slot[todo], episode[todo], hand[todo], attempt[todo], device=device)
        new = deck_order(key)
        if cut:
            new = cut_stock_bottom(new, rank)
        deck = new if deck is None else deck.index_copy_(0, todo, new)
        void = (rank[new[:, :TABLE_SIZE]] == JACK).all(1)
        if not bool(void.any()):
            return deck, attempt
        todo = todo[void]
        attempt[todo] += 1
    raise RuntimeError(f"could not draw a non-void deal in {_MAX_DRAWS} attempts")  # pragma: no cover


def deck_order(key: torch.Tensor) -> torch.Tensor:
    """(k, 52) int64: for each hash ``key`` (k,), the card ids in the order of the hashes
    ``mix(key * 64 + card)``: a deck (item 0 dealt first). On a CPU the same permutation comes
    from NumPy (`_deck_order_numpy`, a tenth of the time: ``torch.sort`` of small rows
    is slow there); elsewhere from `_deck_order_torch`. Both give the same decks
    (``tests/batched/test_batched.py``)."""
    return _deck_order_numpy(key) if key.device.type == "cpu" else _deck_order_torch(key)


def _deck_order_torch(key: torch.Tensor) -> torch.Tensor:
    """`deck_order` in torch: ``argsort`` of the (k, 52) hashes (below 2**32), as a plain
    sort of ``hash * 64 + card`` (unique keys, so no tie to break; the card comes back in the
    low bits), a quarter faster than the stable argsort."""
    cards = torch.arange(NUM_CARD_IDS, device=key.device)
    hashes = mix(key[:, None] * _CARD_STRIDE + cards)
    return torch.sort(hashes * _CARD_STRIDE + cards, dim=1).values & (_CARD_STRIDE - 1)


def _deck_order_numpy(key: torch.Tensor) -> torch.Tensor:
    """`deck_order` for a CPU ``key``, in NumPy: `mix` in uint32, whose products
    wrap modulo 2**32 exactly as ``mix`` masks them, then ``np.sort`` of the same unique keys
    as `_deck_order_torch`."""
    cards = np.arange(NUM_CARD_IDS, dtype=np.uint32)
    x = _mix_numpy(key.numpy().astype(np.uint32)[:, None] * np.uint32(_CARD_STRIDE) + cards)  # of (key * 64 + card) & _MASK32
    order = np.sort(x.astype(np.int64) * _CARD_STRIDE + cards, axis=1) & (_CARD_STRIDE - 1)
    return torch.from_numpy(order)


def cut_stock_bottom(deck: torch.Tensor, rank: torch.Tensor) -> torch.Tensor:
    """R28 cut, as ``pisti_env.game.deal.cut_stock_bottom``: if the last card is a Jack, move the last non-Jack to the
    end of the deck. Out of place."""
    is_jack = rank[deck] == JACK
    idx = torch.arange(NUM_CARD_IDS, device=deck.device).expand_as(deck)
    last_non_jack = torch.where(~is_jack, idx, -1).max(1).values  # (B,)
    need = is_jack[:, -1]
    # New order: every index except last_non_jack, then last_non_jack.
    after = idx >= last_non_jack[:, None]
    source = torch.where(after, (idx + 1).clamp(max=NUM_CARD_IDS - 1), idx)
    source[:, -1] = last_non_jack
    cut = deck.gather(1, source)
    return torch.where(need[:, None], cut, deck)
