"""Every knob of a training run, in one dataclass with a docstring per field: the game is one
[`pisti_env.rules.Settings`][pisti_env.rules.Settings], everything else (run, networks, PPO, opponents, evaluation)
a field here. ``pisti-train``'s flags are generated from these fields (`training.trainer.cli`)."""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any

from pisti_env.policies.spec import NetworkSpec, SpecError
from pisti_env.rules.settings import Settings

from .checks import FIELD_CHECKS


@dataclass
class TrainConfig:
    """Configuration of a self-play PPO run (defaults: the shipped 2-player policy).

    Game
        settings: the game (RULES.md's table; every field of [`Settings`][pisti_env.rules.Settings]). Training plays
            whole matches to ``settings.target`` so the match context in the observation
            (totals, target, hands completed) is what the policy meets in play; with
            ``settings.bluff`` the policy also has the face-down plays and answers (R29).

    Run
        seed: seeds the games, the network's initialisation and the sampling.
        total_steps: environment steps (moves, summed over the batch) to train for.
        num_envs: games played side by side in the batched engine; with several processes
            (``torchrun``, `training.trainer.distributed`) the global number, split
            evenly among them.
        rollout_steps: batch steps per rollout; a rollout holds ``num_envs * rollout_steps``
            decisions.
        device: torch device for the engine and the networks (``--resume --device`` moves a run
            between a GPU and a CPU).
        torch_threads: intra-op threads for torch on the CPU (0 = torch's default).
        precision: ``"bf16"`` runs the networks' matrix products in bfloat16 (weights and
            optimizer stay float32), about twice as fast on CPUs with AMX and on GPUs (on
            CPUs with AVX-512 BF16 but no AMX, slower than fp32); ``"fp32"``; ``"auto"``
            (default) picks bf16 where it is fast
            (`cpu_has_fast_bf16`). The choice is recorded in
            the checkpoint's config, so a resumed run keeps it.

    Networks
        hidden_sizes: widths of the policy's context MLP (it reads the whole observation; the
            last width is the context vector handed to the card scorer).
        answer_hidden_sizes: bluff variant (R29): widths of the hidden layers of an answer head
            of its own (`ClaimView`): believe or challenge then
            read only the facts bearing on whether the claim is true (the lone card's rank,
            where its four cards are as the answerer knows, the claimant's cards in hand, the
            stock), not the whole state; empty (default): the answers come from the context
            like every other action. A best response finds every state where a context-reading
            answer is more gullible or more suspicious than the truth warrants; the research notes
            (docs/research/bluff-exploitability.md) say what each gave.
        freeze_answer_head: keep the answer head's weights as ``init_from`` (or the resumed
            run) left them: the claims and the cards learn, the answers do not. Needs
            ``answer_hidden_sizes`` and a start with an answer head. For training the claims
            against a best response that never bluffs (PSRO-style, with that best response in
            the pool): a learning answer head learns to believe it, and the next best response
            bluffs against that (the cycle in docs/research/bluff-exploitability.md).
        claim_hidden_sizes: bluff variant (R29): widths of the hidden layers of a claim head of
            its own (`ClaimChanceView`): whether to play face
            down on a lone card (a claim) or face up is then P(face down) = sigmoid of a small
            MLP that reads only the lone card's rank, where its four cards are as the claimant
            knows them (a true claim is possible or not), the seats' cards in hand and the
            stock; which card is played within each kind still comes from the card logits.
            Empty (default): face down and face up are scored by the card logits alone. A best
            response drives a context-reading claimant into states unlike its training, where
            it bluffs far more than its true claims can cover (docs/research/bluff-exploitability.md). A run
            with a claim head may warm-start from a policy without one (the head starts at even
            odds).
        average_heads_every: bluff variant (R29), with an answer head and a claim head: fictitious
            play for the two mixed decisions (`training.bluff.average`). Every this many
            updates a frozen copy of the two heads joins their average; in self-play games the
            seats off the learner's side claim and answer with the average (the learner's heads
            become a best response to it), and the run ships the policy with the average heads.
            Self-play PPO on these decisions circles the equilibrium (each head a best response
            to the other's current form); the average of such best responses settles. 0 (default):
            off.
        average_heads_size: the most copies the average keeps (when full, every other one goes
            and copies are taken half as often, so they stay evenly spread over the run).
        average_heads_magnet: with ``average_heads_every`` and ``magnet_coef``: the magnet's
            answer and claim heads are the average's, so the KL term pulls the learner's heads
            toward the average (a soft best response to it, smoothed fictitious play) while the
            rest of the policy is pulled toward the magnet's copy as usual.
        solved_claims: bluff variant (R29): the claims and answers are not learned but played
            from the equilibrium of the small game a claim chance starts
            (`training.bluff.claim_game`): holding the lone card's rank, a true claim;
            else a bluff with the equilibrium's probability for the public counts (the card to
            bluff with from the card logits); an answer challenges with the equilibrium's
            probability for the cards of that rank the answerer holds. The card play learns
            around them. Not with an answer head, a claim head or their options; a warm start
            from a policy with heads drops them. Self-play on these two decisions circles their
            equilibrium instead of reaching it (docs/research/bluff-exploitability.md).
        claim_capture_value: with ``solved_claims``: the points a believed claim's capture is
            worth beyond its stake, against playing face up (it takes both cards, and the
            answerer must then lead onto an empty table, handing the claimant the next claim
            chance); the claim game's thresholds move with it (a bluff must be challenged more
            often to gain nothing, and challenged claims pay more). 0 (default): the stakes
            alone. Measure it for a policy by rollouts from its claim chances
            (``pisti-capture-value POLICY``).
        claim_capture_value_last_deal: with ``solved_claims``: the capture value on the hand's
            last deal (the stock empty), where a capture leads to less: no next deal begins
            with the answerer leading onto the empty table, and the table's last cards go to
            the last capturer (R19). None (default): ``claim_capture_value`` on every deal. The
            rollouts report it apart (``capture_value``'s ``A_by_deal``).
        value_hidden_sizes: widths of the value MLP's hidden layers (a separate network).
            128x128 explains as much of the returns' variance as 256x256 did (0.304 vs 0.306
            after 40 updates of the default run) and trains 1.2x faster end to end.
        privileged_value: the value network also reads the hidden information (other hands,
            the stock's contents; see `training.trainer.network`). It only shapes the advantages
            during training; the policy never sees it.
        init_from: a checkpoint directory whose weights start the run (a warm start, e.g. a best
            response starting from the policy it attacks): its policy network, and its value
            network when it has one of this run's shape (a policy-only checkpoint has none: the
            value network then starts fresh). It must be trained for the same game (every
            setting but the match context) and have the same ``hidden_sizes``, else
            [`CheckpointError`][pisti_env.policies.metadata.CheckpointError]; a run with an answer head
            may start from a policy without one (the head alone starts fresh). Optimizer, pool and counters
            start fresh (``--resume`` is for continuing a run). ``None``: random initialisation.

    PPO
        learning_rate: Adam's step size at the start.
        adam_eps: Adam's ε (CleanRL's 1e-5 rather than torch's 1e-8).
        anneal_lr: decay the learning rate linearly to 0 over the run.
        gamma: discount per decision of a seat (rewards are points, episodes are finite: 1.0).
        gae_lambda: GAE's λ, the bias/variance trade-off of the advantages.
        reward_scale: rewards are multiplied by this (points -> roughly unit scale).
        num_minibatches: minibatches per epoch over the rollout's learner decisions.
        update_epochs: passes over each rollout.
        clip_coef: PPO's ratio clip ε (also the value clip when ``clip_value``).
        clip_value: clip the value update around the old prediction.
        ent_coef: weight of the entropy bonus (over legal cards only).
        answer_ent_coef: weight of the entropy bonus on the answers to a claim (R29: believe or
            challenge) instead of ``ent_coef``; ``None``: ``ent_coef``. The answer is a mixed
            decision at equilibrium (challenging about one claim in three makes bluffing break
            even), and a two-way choice with its entropy a small share of the total; with
            advantages normalised to unit scale, a weight ``w`` keeps the answer mixed
            while the two answers' advantages differ by less than about ``w * 0.7`` (the
            quantal-response temperature), so a policy does not settle on believing or
            challenging in states a best response can then single out.
        vf_coef: weight of the value loss.
        max_grad_norm: global gradient-norm clip.
        norm_adv: normalise advantages per minibatch.
        target_kl: stop the epochs of an update early once the approximate KL exceeds this
            (``None``: never).

    Regularisation toward a reference policy (the "magnet")
        magnet_coef: weight of ``KL(policy || magnet)`` in the loss, over legal actions of the
            learner's decisions (0 = off). Plain self-play PPO follows the gradient of the
            current opponents, so in mixed decisions such as R29's bluff-or-not and
            believe-or-challenge it circles the equilibrium (each answer exploits the last one)
            instead of settling; pulling the policy toward a slowly moving reference damps that
            circling (magnetic mirror descent; the reward transformation of R-NaD). With
            advantages normalised to unit scale, 0.05-0.2 is a useful range.
        magnet_every: updates between copies of the current policy into the magnet (the
            reference then follows the run, as R-NaD's outer iterations); 0 keeps the
            magnet where the run started (its ``init_from`` policy, or the initialisation).

    Opponents
        self_play_share: share of games where every seat is the current policy.
        snapshot_every: updates between frozen snapshots of the policy added to the pool
            (0 = none: the pool holds the baselines only, as in a best response).
        pool_size: the most snapshots kept (the oldest leaves first).
        baselines: the opponents the pool always holds: registry specs. Players with a batched
            form (``random``, ``greedy``, ``expert`` without bluffs, ``bluffer``, ``challenger``, a
            checkpoint path) read the observations; any other (``pimc``, ``expert`` with bluffs)
            plays through the Python engine
            (`PythonPlayerBatched`), at its Python speed.
        pool_temperature: a game's opponent is drawn with probability ∝
            ``exp(-learner_margin / pool_temperature)`` where ``learner_margin`` is the
            learner's recent mean score difference per episode against it (points), so the
            opponents that still beat the learner come up most.
        pool_uniform_share: share of the pool's draws made uniformly over its entries instead
            (the rest by the rule above). A margin is only updated by games against that
            entry, so an opponent the rule has stopped drawing keeps a stale record; this
            share keeps every record current. (In the bluff variant, R29, the learner can
            become exploitable by an opponent it once beat, ``random``'s constant bluffing;
            ``--pool-uniform-share 0.2`` there made it beat ``random`` but lose to ``expert``,
            so the shipped bluff policy is trained without it.)
        pool_margin_decay: the weight of a new game in an opponent's running margin once it has
            more than ``1 / pool_margin_decay`` games (before that: the plain mean).

    Bookkeeping
        eval_every: updates between evaluations against the baselines (0 = never); each
            evaluation is seeded with the update number, the final one with the last.
        eval_deals: duplicate deals per evaluation.
        eval_baselines: the players (registry specs) the evaluations play against.
        checkpoint_every: updates between checkpoints (and at the end; 0: only at the end); a kill costs at most
            the updates since the last one.
        checkpoint_minutes: wall-clock minutes between checkpoints, besides ``checkpoint_every``
            (0: none by time), so that a kill (``kill -9``, a power cut) costs at most this much
            work however long an update interval takes on the machine. A checkpoint is written
            between two updates and draws no random number, so the run trains the same whether
            or not one was written.
        keep_checkpoints: how many of the newest checkpoints a run keeps in
            ``OUT/checkpoints/`` (at least 1; ``OUT/checkpoint`` links to the newest). The
            older one is the fallback if the newest is found damaged on disk.
        out_dir: where checkpoints, logs and reports go.
    """

    settings: Settings = field(default_factory=Settings)

    seed: int = 0
    total_steps: int = 56_000_000
    num_envs: int = 2048
    rollout_steps: int = 32
    device: str = "cpu"
    torch_threads: int = 2
    precision: str = "auto"

    hidden_sizes: tuple[int, ...] = (256, 256)
    answer_hidden_sizes: tuple[int, ...] = ()
    freeze_answer_head: bool = False
    claim_hidden_sizes: tuple[int, ...] = ()
    average_heads_every: int = 0
    average_heads_size: int = 64
    average_heads_magnet: bool = False
    solved_claims: bool = False
    claim_capture_value: float = 0.0
    claim_capture_value_last_deal: float | None = None
    value_hidden_sizes: tuple[int, ...] = (128, 128)
    privileged_value: bool = True
    init_from: str | None = None

    learning_rate: float = 1e-3
    adam_eps: float = 1e-5
    anneal_lr: bool = True
    gamma: float = 1.0
    gae_lambda: float = 0.8
    reward_scale: float = 0.3
    num_minibatches: int = 8
    update_epochs: int = 2
    clip_coef: float = 0.2
    clip_value: bool = True
    ent_coef: float = 0.01
    answer_ent_coef: float | None = None
    vf_coef: float = 0.5
    max_grad_norm: float = 0.5
    norm_adv: bool = True
    target_kl: float | None = None
    magnet_coef: float = 0.0
    magnet_every: int = 0

    self_play_share: float = 0.7
    snapshot_every: int = 20
    pool_size: int = 8
    baselines: tuple[str, ...] = ("random", "greedy")
    pool_temperature: float = 5.0
    pool_uniform_share: float = 0.0
    pool_margin_decay: float = 0.05

    eval_every: int = 100
    eval_deals: int = 500
    eval_baselines: tuple[str, ...] = ("random", "greedy")
    checkpoint_every: int = 25
    checkpoint_minutes: float = 5.0
    keep_checkpoints: int = 2
    out_dir: str = "runs/pisti"

    def __post_init__(self) -> None:
        """Check every field (type, range) and the combinations of fields: ``TypeError`` or
        ``ValueError`` naming the field and what it allows. Lists become tuples."""
        if not isinstance(self.settings, Settings):
            raise TypeError(f"TrainConfig.settings must be a pisti_env.rules.Settings, got {type(self.settings).__name__}")
        for name, check in FIELD_CHECKS.items():
            value = getattr(self, name)
            if isinstance(value, list):
                value = tuple(value)
                object.__setattr__(self, name, value)
            check(name, value)
        try:
            self.network_spec()
        except SpecError as error:
            raise ValueError(f"TrainConfig.{error}") from None
        _check_combinations(self)

    @property
    def batch_decisions(self) -> int:
        return self.num_envs * self.rollout_steps

    @property
    def uses_bluff_research(self) -> bool:
        """Whether the run needs the bluff research extension (`training.bluff`)."""
        return bool(self.answer_hidden_sizes or self.claim_hidden_sizes or self.solved_claims
                    or self.average_heads_every or self.freeze_answer_head or self.answer_ent_coef is not None)

    def network_spec(self) -> NetworkSpec:
        """The policy network this run trains (checked: `NetworkSpec`)."""
        return NetworkSpec(
            settings=self.settings, hidden_sizes=self.hidden_sizes, answer_hidden_sizes=self.answer_hidden_sizes,
            claim_hidden_sizes=self.claim_hidden_sizes, solved_claims=self.solved_claims,
            claim_capture_value=self.claim_capture_value, claim_capture_value_last_deal=self.claim_capture_value_last_deal,
        )

    def to_dict(self) -> dict[str, Any]:
        """Plain values (JSON-ready); ``settings`` as its own dict."""
        values = {f.name: getattr(self, f.name) for f in dataclasses.fields(self)}
        values["settings"] = self.settings.to_dict()
        return {k: list(v) if isinstance(v, tuple) else v for k, v in values.items()}

    @classmethod
    def from_dict(cls, values: dict[str, Any]) -> "TrainConfig":
        """The config of [`to_dict`][training.trainer.config.TrainConfig.to_dict] (``settings`` a dict of [`Settings`][pisti_env.rules.Settings] fields)."""
        names = {f.name for f in dataclasses.fields(cls)}
        unknown = sorted(set(values) - names)
        if unknown:
            raise ValueError(f"unknown config field(s) {unknown}; known: {sorted(names)}")
        values = dict(values)
        settings = values.pop("settings", {})
        if not isinstance(settings, Settings):
            if not isinstance(settings, dict):
                raise TypeError(f"TrainConfig.settings must be a dict of game settings, got {type(settings).__name__}")
            settings = Settings(**settings)
        return cls(settings=settings, **values)


def _check_combinations(c: "TrainConfig") -> None:
    """What no field says alone (the network's own combinations are the spec's)."""
    if c.freeze_answer_head and not c.answer_hidden_sizes:
        raise ValueError("TrainConfig.freeze_answer_head needs answer_hidden_sizes (an answer head to freeze)")
    if c.average_heads_every and not (c.answer_hidden_sizes and c.claim_hidden_sizes):
        raise ValueError("TrainConfig.average_heads_every needs an answer head and a claim head (answer_hidden_sizes, "
                         "claim_hidden_sizes): those are the decisions it averages")
    if c.average_heads_every and c.freeze_answer_head:
        raise ValueError("TrainConfig.average_heads_every trains the answers against the average claims: not with "
                         "freeze_answer_head")
    if c.average_heads_magnet and not (c.average_heads_every and c.magnet_coef > 0):
        raise ValueError("TrainConfig.average_heads_magnet needs average_heads_every and magnet_coef > 0 (the average "
                         "is the magnet's heads)")
    if c.solved_claims and (c.freeze_answer_head or c.average_heads_every):
        raise ValueError("TrainConfig.solved_claims plays the claims and answers itself: not with freeze_answer_head "
                         "or average_heads_every")
    if c.answer_ent_coef is not None and not c.settings.bluff:
        raise ValueError("TrainConfig.answer_ent_coef needs the bluff variant (R29): without it nothing is answered")


# ``pisti-train``'s flags for the fields the project-wide grammar names (every other field is
# ``--field-name``, a game setting as pisti_env.tools.flags spells it).
FLAG_NAMES = {
    "total_steps": ("--steps",),
    "num_envs": ("--envs",),
    "rollout_steps": ("--rollout",),
    "torch_threads": ("--threads",),
    "out_dir": ("--out",),
}


def flag(name: str) -> str:
    """The ``pisti-train`` flag of the config field ``name``."""
    return FLAG_NAMES.get(name, ("--" + name.replace("_", "-"),))[0]


# The fields ``pisti-train --resume`` may change (a resumed run otherwise keeps its checkpoint's
# config and game; a flag contradicting them is an error, training.trainer.resume.resume_config).
RESUMABLE = ("total_steps", "torch_threads", "checkpoint_every", "checkpoint_minutes", "keep_checkpoints", "eval_every",
             "eval_deals", "out_dir", "device")
