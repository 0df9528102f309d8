"""The bluff variant's research (R29) as a trainer extension (`training.trainer.extension`).

What a run with R29's research options adds to the core PPO loop:

* warm starts: an ``init_from`` policy's answer and claim heads (or its fictitious-play average,
  whose newest member starts this run's heads) are taken where this run has such heads and
  dropped where it has none or plays solved claims; a head this run has and the start lacks
  starts fresh;
* ``freeze_answer_head``: the answer head is not trained (and has no optimizer state);
* ``answer_ent_coef``: the answers' entropy weighted apart (an extra loss term);
* ``average_heads_every``: fictitious play for the claims and answers
  (`training.bluff.average`): the head average is offered a copy after every that many
  updates, the seats off the learner's side in self-play games decide their claims and
  answers with it (a seat controller), the magnet may use it (``average_heads_magnet``), the
  run ships the averaged policy, and the average is saved with the trainer state
  (``trainer.average`` in the metadata, ``average.*`` tensors).
"""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING, Any, Mapping

import torch

from pisti_env.rules.actions import BELIEVE, FACE_DOWN
from pisti_env.policies.claim_heads import without_claim_heads
from pisti_env.policies.metadata import MAX_COUNT, CheckpointError, _fail, _integer, _mapping, _sequence
from pisti_env.policies.network import PolicyNetwork
from pisti_env.policies.spec import MAX_AVERAGE_HEADS, NetworkSpec

from training.trainer.extension import SeatController, TrainerExtension

from .average import HeadAverage

if TYPE_CHECKING:  # pragma: no cover
    from training.trainer.config import TrainConfig
    from training.trainer.train import Trainer


class AveragedSeats(SeatController):
    """The seats of self-play games off the learner's side, deciding their claims and answers
    (claim chances: a face-down play is legal; answers) with the head average."""

    def __init__(self, average: HeadAverage, batch_size: int, num_players: int, device: torch.device) -> None:
        self.average = average
        # (B, n): which seats decide their claims and answers with the head average.
        self.averaged = torch.zeros(batch_size, num_players, dtype=torch.bool, device=device)

    def assign(self, games: torch.Tensor, self_play: torch.Tensor, on_learner_side: torch.Tensor) -> None:
        self.averaged[games] = self_play[:, None] & ~on_learner_side

    def override(self, network: torch.nn.Module, observation: torch.Tensor, mask: torch.Tensor,
                 seat: torch.Tensor, logits: torch.Tensor) -> torch.Tensor:
        games = torch.arange(len(seat), device=seat.device)
        averaged = self.averaged[games, seat] & (mask[:, BELIEVE] | mask[:, FACE_DOWN:BELIEVE].any(1))
        rows = averaged.nonzero().squeeze(1)
        if rows.numel():
            logits[rows] = network(observation[rows], heads=self.average.heads()).float()
        return averaged

    def state(self) -> dict[str, torch.Tensor]:
        return {"collector.averaged": self.averaged}

    def restore(self, tensors: Mapping[str, torch.Tensor]) -> None:
        self.averaged = tensors["collector.averaged"].to(self.averaged.device)


class BluffExtension(TrainerExtension):
    """R29's research options of a [`TrainConfig`][training.trainer.config.TrainConfig] as trainer hooks."""

    state_key = "average"

    def __init__(self, config: "TrainConfig") -> None:
        self.config = config
        self.average: HeadAverage | None = None
        self._initial_average: PolicyNetwork | None = None  # an averaged init_from: its members start the average

    # -------------------------------------------------------------- warm start
    def warm_start_weights(self, directory: str, metadata: Mapping[str, Any], policy: dict[str, torch.Tensor],
                           device: torch.device) -> tuple[dict[str, torch.Tensor], tuple[str, ...]]:
        c = self.config
        if metadata.get("average_heads") and not c.solved_claims:  # (solved: no heads, no average)
            averaged = PolicyNetwork(NetworkSpec.from_metadata(metadata)).to(device)
            averaged.load_state_dict(policy)
            answer, claim = HeadAverage.member_heads(averaged, averaged.spec.average_heads - 1)  # the newest
            policy = without_claim_heads(policy)
            policy.update({f"answer_head.{k}": v for k, v in answer.state_dict().items()})
            policy.update({f"claim_head.{k}": v for k, v in claim.state_dict().items()})
            self._initial_average = averaged
        if c.solved_claims:  # the claim game is solved here: the start's heads are not used
            return without_claim_heads(policy), ()
        for field in ("answer_hidden_sizes", "claim_hidden_sizes"):
            theirs, mine = list(metadata.get(field, [])), list(getattr(c, field))
            if theirs and theirs != mine:
                raise CheckpointError(
                    f"{directory}: its policy has {field} {theirs}, this run builds {mine} "
                    f"(pass --{field.replace('_', '-')} {' '.join(map(str, theirs))})"
                )
        # A run with an answer or claim head may start from a policy without one: the head starts fresh.
        return policy, ("answer_head.",) * bool(c.answer_hidden_sizes) + ("claim_head.",) * bool(c.claim_hidden_sizes)

    def check_warm_start(self, directory: str, missing: list[str]) -> None:
        if any(key.startswith("answer_head.") for key in missing) and self.config.freeze_answer_head:
            raise CheckpointError(f"{directory}: its policy has no answer head to freeze (freeze_answer_head)")

    # -------------------------------------------------------------- training
    def trains(self, name: str) -> bool:
        # A frozen answer head has no optimizer state in a checkpoint either.
        return not (self.config.freeze_answer_head and name.startswith("policy.answer_head."))

    def setup(self, trainer: "Trainer") -> None:
        if self.config.average_heads_every:
            self.average = HeadAverage(self._initial_average or trainer.network.policy, self.config.average_heads_size)
        self._initial_average = None

    def seat_controller(self, trainer: "Trainer") -> SeatController | None:
        if self.average is None:
            return None
        engine = trainer.engine
        return AveragedSeats(self.average, engine.batch_size, engine.num_players, engine.device)

    def extra_loss(self, trainer: "Trainer", logp: torch.Tensor, entropy: torch.Tensor, mask: torch.Tensor) -> torch.Tensor | None:
        c = self.config
        if c.answer_ent_coef is None or c.answer_ent_coef == c.ent_coef:
            return None
        # The answers' entropy weighted answer_ent_coef rather than ent_coef.
        return -(c.answer_ent_coef - c.ent_coef) * trainer.shard.mean(entropy * mask[:, BELIEVE])

    def magnet_heads(self) -> tuple[torch.nn.Module, ...] | None:
        return self.average.heads() if self.config.average_heads_magnet else None

    def after_update(self, trainer: "Trainer") -> None:
        if self.average is not None and trainer.update % self.config.average_heads_every == 0:
            self.average.offer(trainer.network.policy)

    def shipped_policy(self, policy: PolicyNetwork) -> PolicyNetwork:
        return policy if self.average is None else self.average.policy(policy)

    # -------------------------------------------------------------- state
    def state(self) -> tuple[dict[str, torch.Tensor], Any]:
        return ({}, None) if self.average is None else self.average.state()

    def state_layout(self, extra: Any) -> dict[str, tuple[int, ...]]:
        return {} if self.average is None or extra is None else self.average.layout(extra)

    def check_state(self, extra: Any, path: Path) -> None:
        averaging = bool(self.config.average_heads_every)
        if averaging != (extra is not None):
            raise CheckpointError(f"{path}: field 'trainer.average': "
                                  + ("missing for a run with average_heads_every" if averaging
                                     else "present, but the run's config has no average_heads_every"))
        if extra is None:
            return
        average = _mapping(extra, path, "trainer.average", 3)
        if set(average) != {"offers", "stride", "member_offers"}:
            raise _fail(path, "trainer.average", "must hold offers, stride and member_offers")
        offers = _integer(average["offers"], path, "trainer.average.offers", 0, MAX_COUNT)
        _integer(average["stride"], path, "trainer.average.stride", 1, MAX_COUNT)
        members = _sequence(average["member_offers"], path, "trainer.average.member_offers", MAX_AVERAGE_HEADS)
        if not members:
            raise _fail(path, "trainer.average.member_offers", "the average holds at least one member")
        for x in members:
            _integer(x, path, "trainer.average.member_offers[]", 0, offers)

    def restore(self, tensors: Mapping[str, torch.Tensor], extra: Any) -> None:
        if self.average is not None:
            self.average.restore(dict(tensors), extra)
