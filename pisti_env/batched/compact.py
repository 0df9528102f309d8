"""The ``"uint8"`` observation format of the batched engine: the float observation, packed.

The float observation ([`pisti_env.views.observation.ObservationLayout`][pisti_env.views.observation.ObservationLayout], the default) is a
card block of small counts (0/1 with one deck) followed by a short rest of counts, one-hots
and settings. The packed form holds the same vector in ``packed_size`` bytes per game: the
card block as one row of ``CARD_BYTES`` bytes per card id (its ``k`` card features, then
zeros: ``k`` is at most 15 with one deck), then the rest's float32 values as their native
bytes. It is cheaper to write than the float vector (one 16-byte element per card, a third to
a half of the float card block's bytes) and to store or move; a network reads it through
`expand`, which rebuilds the float vector bit for bit
(``tests/batched/test_batched_compact.py`` checks it against the float format).
"""

from __future__ import annotations

import torch

from ..rules.cards import NUM_CARD_IDS
from ..views.observation import ObservationLayout

FORMATS = ("float", "uint8")  # the observation formats of the batched engine; "float" is the default
CARD_BYTES = 16  # bytes of one card's row in the packed card block
FLOAT_BYTES = 4  # bytes of one float32 of the rest
PACKED_CARDS = CARD_BYTES * NUM_CARD_IDS  # bytes of the packed card block


def packed_size(layout: ObservationLayout) -> int:
    """Bytes per game of the packed form of observations of ``layout`` (one deck): the
    padded card block, then four per entry of the rest. Raises ``ValueError`` for a layout
    whose card rows do not fit (more than ``CARD_BYTES`` card features)."""
    if layout.num_card_features > CARD_BYTES:
        raise ValueError(f"the uint8 format holds at most {CARD_BYTES} card features, got {layout.num_card_features}")
    return PACKED_CARDS + FLOAT_BYTES * (layout.size - layout.cards_size)


def expand(packed: torch.Tensor, num_card_features: int) -> torch.Tensor:
    """The float32 observations (B, size) of ``packed`` (B, packed_size) uint8 observations.

    Args:
        packed: uint8 observations, one row per game, as ``BatchedPisti.step(...,
            observation_format="uint8")`` returns them.
        num_card_features: the layout's ``num_card_features`` (``k``; the float card block
            is 52 * k entries long).

    Raises ``TypeError`` for anything but a uint8 tensor and ``ValueError`` for a shape that
    cannot hold a packed card block and a float rest, or a ``num_card_features`` outside
    1..CARD_BYTES.
    """
    if not isinstance(packed, torch.Tensor) or packed.dtype != torch.uint8:
        got = packed.dtype if isinstance(packed, torch.Tensor) else type(packed).__name__
        raise TypeError(f"packed observations must be a uint8 tensor, got {got}")
    if isinstance(num_card_features, bool) or not isinstance(num_card_features, int) or not 1 <= num_card_features <= CARD_BYTES:
        raise ValueError(f"num_card_features must be an int in 1..{CARD_BYTES}, got {num_card_features!r}")
    rest_bytes = packed.shape[-1] - PACKED_CARDS if packed.dim() == 2 else -1
    if rest_bytes < 0 or rest_bytes % FLOAT_BYTES:
        raise ValueError(
            f"packed observations must have shape (B, {PACKED_CARDS} + 4 * size of the rest), got {tuple(packed.shape)}"
        )
    packed = packed.contiguous()
    B = packed.shape[0]
    cards = packed[:, :PACKED_CARDS].view(B, NUM_CARD_IDS, CARD_BYTES)[:, :, :num_card_features]
    return torch.cat([cards.reshape(B, -1).to(torch.float32), packed[:, PACKED_CARDS:].view(torch.float32)], 1)
