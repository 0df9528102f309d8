"""Choosing actions from a policy's masked log-probabilities, one row per decision.

The one definition of how a bluff-variant policy plays its mixed decisions (R29), shared by the
checkpoint player (``pisti_env.policies.network.sample_bluffs``) and a policy
exported by ``pisti-export`` (`pisti_env.agents.exported.ExportedPolicy`), so that the
two play the same actions with the same generator.
"""

from __future__ import annotations

import torch

from ..rules.actions import BELIEVE, CHALLENGE, FACE_DOWN, NUM_PLAIN_ACTIONS


def draw_bluffs(logp: torch.Tensor, generator: torch.Generator | None = None) -> torch.Tensor:
    """One action per row of the masked log-probabilities ``logp`` (B, actions): the kind of
    action (face up, face down claiming a pişti, believe, challenge; R29) is drawn with its
    total probability (Gumbel-max, reproducible with ``generator``), then the most likely card
    of that kind is played. Drawing the kind keeps the mixed strategy (a claim that is always
    or never a bluff is exploitable); playing the kind's best card keeps the card choice as
    sharp as the argmax. Without the bluff variant (52 actions) this is the most likely card.

    An illegal action must have a log-probability far below any legal one (a masked
    ``log_softmax``): a kind with no legal action then has mass 0 and is never drawn.
    """
    if logp.shape[-1] == NUM_PLAIN_ACTIONS:
        return logp.argmax(-1)
    p = logp.exp()
    kinds = torch.stack([p[:, :FACE_DOWN].sum(1), p[:, FACE_DOWN:BELIEVE].sum(1), p[:, BELIEVE], p[:, CHALLENGE]], 1)
    uniform = torch.rand(kinds.shape, generator=generator, device=logp.device).clamp_(1e-10, 1.0)
    kind = (torch.log(kinds) - torch.log(-torch.log(uniform))).argmax(1)  # a kind of mass 0: log 0 = -inf, never
    up = logp[:, :FACE_DOWN].argmax(1)
    down = logp[:, FACE_DOWN:BELIEVE].argmax(1) + FACE_DOWN
    answers = torch.tensor([BELIEVE, CHALLENGE], device=logp.device).expand(len(kind), 2)
    return torch.cat([up[:, None], down[:, None], answers], 1).gather(1, kind[:, None]).squeeze(1)
