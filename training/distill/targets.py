"""Search targets on the batched engine: every legal card's rollout value in self-play positions.

The search player (`pisti_env.agents.search`) values a card by playing it in sampled worlds and
rolling the hand out with the policy at every seat. Here the same rollouts run in the *real*
deals of many self-play games at once: for every position the policy meets (its own argmax at
every seat), each legal card is played and the hand rolled out to its end, giving
``q[k] = Q^pi(position, card_k)``, the hand's score difference (R22) of the mover's side after
card ``k`` and the policy's play from then on. One real deal is one sample of the seat's true
belief (what the other seats' plays reveal included, which the search's uniform worlds ignore);
a network regressing ``q`` on the seat's observation learns ``E[q | observation]``, the
search's value under that belief, amortised over many positions (`training.distill.fit`).

Rows move in lockstep: without claims (R29) every game of the batch holds as many cards at each
step, so a step branches every row into as many rollouts as the mover has cards, or none when
it holds one.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import torch

from pisti_env.agents.search import rollout_totals
from pisti_env.batched import BatchedPisti
from pisti_env.batched.state import take
from pisti_env.rules.cards import HAND_SIZE
from pisti_env.rules.settings import Settings


@dataclass
class SearchTargets:
    """Positions and the rollout value of each legal card.

    ``observation``: (N, packed size) uint8, the mover's observation in the engine's packed form
    (`pisti_env.batched.compact.expand` gives the float vector); ``cards``: (N, HAND_SIZE) the
    legal cards, padded with -1; ``q``: (N, HAND_SIZE) float32 each card's rollout value (0 where
    padded); ``policy_card``: (N,) the policy's own choice; ``seat``: (N,) the mover. Positions
    are listed step by step, the games of a step in batch order.
    """

    observation: torch.Tensor
    cards: torch.Tensor
    q: torch.Tensor
    policy_card: torch.Tensor
    seat: torch.Tensor

    def __len__(self) -> int:
        return int(self.cards.shape[0])

    @staticmethod
    def concat(parts: "list[SearchTargets]") -> "SearchTargets":
        return SearchTargets(*(torch.cat([getattr(p, f) for p in parts]) for f in FIELDS))


FIELDS = ("observation", "cards", "q", "policy_card", "seat")


def side_value(totals: torch.Tensor, side: torch.Tensor) -> torch.Tensor:
    """(rows,) the score difference of ``side`` (one per row): its total minus the mean of the
    other sides' (R22), as the search values a hand."""
    totals = totals.float()
    own = totals.gather(1, side[:, None])[:, 0]
    return own - (totals.sum(1) - own) / (totals.shape[1] - 1)


def generate(policy: Any, settings: Settings, games: int, seed: int, device: str = "cpu") -> SearchTargets:
    """Play ``games`` single hands of self-play with ``policy`` (argmax; ``act_batch``) at every
    seat, from the engine's deals for ``seed``, and value every legal card at every decision
    with two or more cards. Returns the targets of all ``games x decisions`` positions.

    Raises ``ValueError`` for the bluff variant (R29: claims break the lockstep) or a match.
    """
    if settings.bluff or settings.target is not None:
        raise ValueError("search targets are generated for single hands without the bluff variant (R29)")
    engine = BatchedPisti(games, device=device, seed=seed, **settings.to_dict())
    branches: dict[int, tuple[BatchedPisti, torch.Tensor]] = {}
    generator = torch.Generator(device=engine.device).manual_seed(seed)
    out = engine.reset()
    state = engine.state
    side_of = engine.side_of
    parts: list[SearchTargets] = []
    with torch.no_grad():
        while True:
            mask = out.action_mask
            chosen = policy.act_batch(out.observation, mask, generator)
            held = int(mask[0].sum())
            if held > 1:
                # Lockstep: every row's mover holds `held` cards; list them in card order.
                cards = torch.sort(torch.where(mask, torch.arange(mask.shape[1], device=mask.device), mask.shape[1]), 1).values[:, :held]
                if held not in branches:
                    branch = BatchedPisti(games * held, device=device, seed=seed, **settings.to_dict())
                    branches[held] = (branch, branch.observation_buffer())
                branch, buffer = branches[held]
                rows = torch.arange(games, device=engine.device).repeat_interleave(held)
                totals = rollout_totals(branch, buffer, policy, take(state, rows), cards.reshape(-1), generator)
                q = side_value(totals, side_of[out.seat].repeat_interleave(held)).view(games, held)
                pad = HAND_SIZE - held
                parts.append(SearchTargets(
                    observation=engine.observe(state, observation_format="uint8"),
                    cards=torch.nn.functional.pad(cards, (0, pad), value=-1),
                    q=torch.nn.functional.pad(q, (0, pad)),
                    policy_card=chosen.clone(),
                    seat=out.seat.clone(),
                ))
            state, out = engine.step_state(state, chosen)
            if bool(out.done.all()):
                return SearchTargets.concat(parts)
            if bool(out.done.any()):  # pragma: no cover - lockstep broken: a bug, not a condition
                raise AssertionError("the self-play hands ended at different steps")
