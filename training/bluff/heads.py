"""R29's research heads (the answer and claim heads, their views, the averaged heads, the
network-heads extension `ClaimHeads`): they live in `pisti_env.policies.claim_heads`,
since a checkpoint with them loads and plays without the trainer; this module re-exports them
for code that imports them from here. How they are trained is `training.bluff`'s
(`.average`, `.extension`).
"""

from pisti_env.policies.claim_heads import (
    CLAIM_HEADS, AveragedHead, ClaimChanceView, ClaimHeads, ClaimView, lone_rank, without_claim_heads,
)

__all__ = [
    "CLAIM_HEADS", "AveragedHead", "ClaimChanceView", "ClaimHeads", "ClaimView", "lone_rank", "without_claim_heads",
]
