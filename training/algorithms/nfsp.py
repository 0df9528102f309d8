"""Neural Fictitious Self-Play (NFSP) on whole hands of the batched engine.

Heinrich & Silver (2016), "Deep Reinforcement Learning from Self-Play in Imperfect-Information Games"
(arXiv:1603.01121), Algorithm 1; details as in OpenSpiel's ``open_spiel/python/pytorch/nfsp.py`` (and ``dqn.py``)
and RLCard's ``rlcard/agents/nfsp_agent.py``, the code written anew for the batched engine. A **best response**
``Q(s, a)`` is masked DQN (a ring replay buffer of every decision's transition, epsilon-greedy over the legal
actions, a target network, the next decision's illegal actions left out of the target's max); an **average
policy** ``Pi(a | s)``, a softmax over the legal actions, is fitted by cross-entropy to the learner's own
best-response decisions kept in a reservoir (a uniform sample of all ever added, Vitter's algorithm R): fictitious
play's average strategy. Each hand every seat of every game plays the best response with probability ``eta``
(those decisions, the action taken with exploration, go to the reservoir, as in the paper and RLCard), else a
sample of ``Pi``; Q learns from every decision of both modes (as OpenSpiel).

On Pişti: the ``pisti-2p`` task's single hand (``--players`` 3/4 and ``--partnerships``, R3, R4, alike; no bluffs,
R29, so games stay in lockstep: [training.algorithms.hands][]). A **step** is one seat's decision in one training
game (a card played, R9): 48 per game and hand, an update round after each hand of ``num_games`` games. One shared
pair of networks plays every seat, each seat reading its own observation (``pisti_v0``'s vector, R30-R31); a
seat's Q transition runs to its next decision ``num_players`` steps later (R3,
[HandBatch.transitions][training.algorithms.hands.HandBatch.transitions]), rewarded by the change of its side's
score difference (R13-R22), undiscounted. Snapshots and ``--export`` hold the **average policy** (NFSP's output,
approaching an equilibrium), played by argmax; the final evaluation (deals seeded by ``--seed``) also rates the
best response (argmax of Q), not exported.

Hyperparameters from the paper's Leduc values (``value [source]``, none tuned yet): ``eta = 0.1``,
``replay_capacity = 200_000``, ``reservoir_capacity = 2_000_000`` (5M steps offer ~500k: it keeps all),
``target_every = 300`` updates, ``replay_ratio = 2`` samples per step per network [paper: 2 updates of 128 per 128
steps]; ``batch_size = 512`` [deviation from 128: 4x fewer, far cheaper updates on one CPU thread];
``epsilon_start = 0.06`` [paper] decayed as ``0.06 / sqrt(1 + steps / 500_000)`` [the paper's inverse square root;
the scale ``epsilon_decay`` mine]: 0.018 at 5M; ``gamma = 1`` [OpenSpiel]; Adam, ``rl_lr = sl_lr = 1e-3``
[deviation from the paper's SGD at 0.1 and 0.005 (``--optimizer sgd --rl-lr 0.1 --sl-lr 0.005``, untried); RLCard
uses Adam]; ``reward_scale = 0.1``, Huber loss, ``grad_clip = 10`` [deviation from squared error on Leduc's chips:
a hand's score difference spans tens of points]; ``hidden_sizes = (256, 256)`` ReLU [deviation from Leduc's one
layer of 64]; ``num_games = 512`` [throughput: ~200 update rounds in 5M steps].

Measured on this project's shared 2-core CPU (load average 5-8; seeds >= 1000 only, 0-9 being the protocol's): at
the defaults, ``--threads 1``, about 8,500 steps per second of CPU time (417,792 steps in 51 s of user time, seed
1001; 84% updates, 9% engine and acting, 6% memories), so 5M steps take ~10 minutes of one dedicated thread (wall
clock on the loaded machine: 2,500-2,900 steps/s). ``--seed 1000 --steps 5000000 --threads 1 --snapshot-steps
625000 ... 5000000 --deals 2000`` (5,013,504 steps, 1,967 s): the **average policy** (exported) +9.89 ± 0.44
points per hand over ``random``, -0.15 ± 0.43 over ``greedy``; the **best response** +10.98 ± 0.44 and +2.01 ±
0.42. Snapshots against ``greedy`` (1,000 deals, ± 0.6): -4.32 at 0.64M steps, -2.30, -1.88, -0.98, -0.91, -0.63,
-0.34, +0.01 at 5.0M, still rising.

Why the exported policy only ties ``greedy`` (measured, not tuned: tuning waits until it beats ``greedy``): the
best response beats it by 2 points, but the average policy is by design the mean of *every* best response of the
run: at 5M steps the weak ones of the first million are a fifth of the reservoir. Its fit shows the mix (its
argmax matches the stored action in 0.90 of samples at 0.3M steps, 0.80 at 5M; cross-entropy 0.31 to 0.48). Q's
scale is sane (mean Q of actions taken ~4.4 points, best-response seats +2-7 a hand, Huber loss ~0.05). It gains
~0.35 points per 625k steps late on; a larger ``eta`` or Q learning rate are untried levers.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import math
import os
import tempfile
import time
from dataclasses import dataclass, field
from typing import Any, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from pisti_env.batched import BatchedPisti
from training.algorithms.hands import HAND_DECISIONS, HandBatch, HandPlayer
from pisti_env.tools import flags
from training.algorithms.recipe import Progress, Snapshots, add_algorithm_flags, check_algorithm_args, game_settings, positive_int

NAME = "nfsp"
RECIPE = "training.algorithms.nfsp"
MASKED = -1e9  # the logit / Q-value of an illegal action when acting (far below any legal one)
GRAD_CLIP = 10.0  # the default gradient-norm bound


# ---------------------------------------------------------------------------- hyperparameters
@dataclass
class Hyperparameters:
    """NFSP's knobs, each a flag (``--rl-lr 1e-3``); the module docstring says where each default comes from."""

    num_games: int = field(default=512, metadata={"help": "games played in lockstep: one hand of them is 48 * num_games steps, then one update round"})
    hidden_sizes: tuple[int, ...] = field(default=(256, 256), metadata={"help": "hidden widths (ReLU) of both networks"})
    eta: float = field(default=0.1, metadata={"help": "anticipatory parameter: each seat plays a hand by the best response with this probability, else by the average policy"})
    replay_capacity: int = field(default=200_000, metadata={"help": "transitions in Q's ring replay buffer"})
    reservoir_capacity: int = field(default=2_000_000, metadata={"help": "best-response decisions kept in the average policy's reservoir"})
    replay_ratio: float = field(default=2.0, metadata={"help": "samples drawn per environment step, for each network (updates per round: replay_ratio * steps / batch_size)"})
    batch_size: int = field(default=512, metadata={"help": "minibatch size of both networks' updates"})
    optimizer: str = field(default="adam", metadata={"help": "'adam' or 'sgd' (the paper's), for both networks"})
    rl_lr: float = field(default=1e-3, metadata={"help": "Q network's learning rate"})
    sl_lr: float = field(default=1e-3, metadata={"help": "average policy network's learning rate"})
    target_every: int = field(default=300, metadata={"help": "copy Q into its target network every this many Q updates"})
    gamma: float = field(default=1.0, metadata={"help": "discount from one of a seat's decisions to its next"})
    reward_scale: float = field(default=0.1, metadata={"help": "points are multiplied by this for Q (Q is learnt in these units)"})
    loss: str = field(default="huber", metadata={"help": "Q's regression loss: 'huber' (smooth L1, beta 1) or 'mse' (the paper's)"})
    grad_clip: float = field(default=GRAD_CLIP, metadata={"help": "clip each network's gradient norm to this (0: no clipping)"})
    epsilon_start: float = field(default=0.06, metadata={"help": "the best response's exploration at step 0"})
    epsilon_decay: int = field(default=500_000, metadata={"help": "epsilon = epsilon_start / sqrt(1 + steps / epsilon_decay)"})
    min_reservoir: int = field(default=1000, metadata={"help": "the average policy learns once the reservoir holds this many decisions"})


POSITIVE, UNIT = flags.positive_float, flags.bounded(float, 0, 1)
FLAG_TYPES: dict[str, Any] = {
    "eta": flags.bounded(float, 0, 1, low_open=True), "replay_ratio": POSITIVE, "rl_lr": POSITIVE, "sl_lr": POSITIVE,
    "gamma": UNIT, "reward_scale": POSITIVE, "grad_clip": flags.bounded(float, 0), "epsilon_start": UNIT,
}
FLAG_CHOICES = {"optimizer": ("adam", "sgd"), "loss": ("huber", "mse")}


def build_parser() -> argparse.ArgumentParser:
    """The recipe's flags ([add_algorithm_flags][training.algorithms.recipe.add_algorithm_flags])
    and one flag per [Hyperparameters][training.algorithms.nfsp.Hyperparameters] field."""
    parser = argparse.ArgumentParser(prog="python -m training.algorithms.nfsp", description=__doc__.splitlines()[0])
    add_algorithm_flags(parser, steps=5_000_000)
    group = parser.add_argument_group("NFSP")
    for f in dataclasses.fields(Hyperparameters):
        kind = {"choices": FLAG_CHOICES[f.name]} if f.name in FLAG_CHOICES else {"type": FLAG_TYPES.get(f.name, positive_int)}
        group.add_argument("--" + f.name.replace("_", "-"), default=f.default, nargs="+" if f.name == "hidden_sizes" else None,
                           help=f.metadata["help"] + " (default: %(default)s)", **kind)
    return parser


def parse_args(argv: Sequence[str] | None = None) -> tuple[argparse.Namespace, Hyperparameters]:
    """The recipe's namespace and the hyperparameters; a bad flag or combination is ``parser.error`` (exit 2)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    check_algorithm_args(parser, args)
    hp = Hyperparameters(**{f.name: getattr(args, f.name) for f in dataclasses.fields(Hyperparameters)})
    hp.hidden_sizes = tuple(hp.hidden_sizes)
    hand = hp.num_games * HAND_DECISIONS  # steps (and transitions) in one hand of the games
    if hp.replay_capacity < hand:
        parser.error(f"--replay-capacity {hp.replay_capacity:,} must hold one hand of --num-games ({hand:,} transitions)")
    if any(b - a < hand for a, b in zip(args.snapshot_steps, args.snapshot_steps[1:])):
        parser.error(f"--snapshot-steps closer than one hand of --num-games ({hand:,} steps): one update apart at least")
    return args, hp


# ---------------------------------------------------------------------------- the networks
def mlp(inputs: int, hidden: Sequence[int], outputs: int) -> nn.Sequential:
    """A ReLU MLP (OpenSpiel's ``MLP``), PyTorch's default initialisation."""
    sizes = [inputs, *hidden]
    layers = [layer for a, b in zip(sizes, sizes[1:]) for layer in (nn.Linear(a, b), nn.ReLU())]
    return nn.Sequential(*layers, nn.Linear(sizes[-1], outputs))


def masked(values: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``values`` with the illegal actions' entries pushed far below any legal one."""
    return values.masked_fill(~mask, MASKED)


# ---------------------------------------------------------------------------- the update math
def q_targets(next_q: torch.Tensor, next_mask: torch.Tensor, reward: torch.Tensor, done: torch.Tensor,
              gamma: float) -> torch.Tensor:
    """DQN's targets ``r + gamma * max_{a' legal} Q_target(s', a')`` from the target network's ``next_q``
    ``(N, A)`` of the seat's next decision and its legal actions ``next_mask``; just ``r`` where the seat made
    its last decision of the hand (``done``: its ``next_mask`` is all False)."""
    best = next_q.masked_fill(~next_mask, -math.inf).max(1).values
    return reward + gamma * torch.where(done, torch.zeros_like(best), best)


def policy_loss(logits: torch.Tensor, mask: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
    """Cross-entropy of the stored best-response ``action`` under the softmax over the legal actions only."""
    log_probs = torch.log_softmax(logits.masked_fill(~mask, -math.inf), dim=1)
    return -log_probs.gather(1, action[:, None]).mean()


def epsilon_at(steps: int, hp: Hyperparameters) -> float:
    """The best response's exploration after ``steps`` steps: ``epsilon_start / sqrt(1 + steps / epsilon_decay)``."""
    return hp.epsilon_start / math.sqrt(1.0 + steps / hp.epsilon_decay)


# ---------------------------------------------------------------------------- the memories
def reservoir_slots(seen: int, n: int, capacity: int, generator: torch.Generator,
                    device: torch.device | str = "cpu") -> tuple[torch.Tensor, torch.Tensor]:
    """Reservoir sampling (Vitter's algorithm R) of ``n`` new items after ``seen`` earlier ones: item ``i``,
    the ``(seen + i)``-th offered, goes to slot ``seen + i`` while the reservoir is not full, else to a slot
    drawn uniformly from ``0 .. seen + i``, kept if below ``capacity``; of two new items drawn to one slot the
    later wins, as one at a time would leave it. Returns ``(items, slots)``: which new items go where."""
    index = seen + torch.arange(n, device=device, dtype=torch.long)
    draw = (torch.rand(n, generator=generator, device=device, dtype=torch.float64) * (index + 1)).long()
    slot = torch.where(index < capacity, index, torch.minimum(draw, index))
    keep = slot < capacity
    item, slot = torch.arange(n, device=device)[keep], slot[keep]
    order = torch.sort(slot, stable=True).indices
    item, slot = item[order], slot[order]
    last = torch.ones_like(slot, dtype=torch.bool)
    last[:-1] = slot[1:] != slot[:-1]
    return item[last], slot[last]


class Memory:
    """Rows of named tensors: a ring of the newest ``capacity`` rows (Q's replay buffer) or, with ``reservoir``, a
    uniform sample of all rows ever added. ``*observation`` fields are packed (the 0/1 card block as bytes, the
    rest float32: a third of the memory, read back bit for bit) into ``torch.empty`` storage, touched as it fills."""

    def __init__(self, capacity: int, cards_size: int, reservoir: bool = False) -> None:
        self.capacity, self.cards_size, self.reservoir = capacity, cards_size, reservoir
        self.data: dict[str, torch.Tensor] = {}
        self.size = self.seen = 0

    def add(self, generator: torch.Generator, **fields: torch.Tensor) -> None:
        first = next(iter(fields.values()))
        n, device = first.shape[0], first.device
        if self.reservoir:
            item, slot = reservoir_slots(self.seen, n, self.capacity, generator, device)
        else:  # a ring; one add never holds more than capacity rows (parse_args checks it)
            item = torch.arange(n, device=device)
            slot = (self.seen + item) % self.capacity
        for name, value in fields.items():
            value = value[item]
            parts = ({name + ":cards": value[:, :self.cards_size].to(torch.uint8), name + ":rest": value[:, self.cards_size:]}
                     if name.endswith("observation") else {name: value})
            for key, part in parts.items():
                if key not in self.data:
                    self.data[key] = torch.empty((self.capacity, *part.shape[1:]), dtype=part.dtype, device=device)
                self.data[key][slot] = part
        self.seen += n
        self.size = min(self.seen, self.capacity)

    def sample(self, batch_size: int, generator: torch.Generator) -> dict[str, torch.Tensor]:
        """``batch_size`` rows drawn uniformly (with replacement), observations unpacked to float32."""
        i = torch.randint(self.size, (batch_size,), generator=generator, device=generator.device)
        rows = {key: value[i] for key, value in self.data.items()}
        for name in [key.removesuffix(":cards") for key in rows if key.endswith(":cards")]:
            rows[name] = torch.cat([rows.pop(name + ":cards").to(torch.float32), rows.pop(name + ":rest")], 1)
        return rows


# ---------------------------------------------------------------------------- the learner
class NFSP:
    """The two networks, their memories and optimisers: acting and learning, one learner for every seat."""

    def __init__(self, hp: Hyperparameters, observation_size: int, cards_size: int, num_actions: int,
                 num_players: int, device: torch.device, generator: torch.Generator) -> None:
        self.hp, self.device, self.generator = hp, device, generator
        self.q = mlp(observation_size, hp.hidden_sizes, num_actions).to(device)
        self.q_target = copy.deepcopy(self.q).requires_grad_(False)
        self.average = mlp(observation_size, hp.hidden_sizes, num_actions).to(device)
        optimizer = torch.optim.Adam if hp.optimizer == "adam" else torch.optim.SGD
        self.q_optimizer = optimizer(self.q.parameters(), lr=hp.rl_lr)
        self.sl_optimizer = optimizer(self.average.parameters(), lr=hp.sl_lr)
        self.replay = Memory(hp.replay_capacity, cards_size)
        self.reservoir = Memory(hp.reservoir_capacity, cards_size, reservoir=True)
        self.q_updates = 0
        self.best_response = torch.zeros(hp.num_games, num_players, dtype=torch.bool, device=device)
        self.epsilon = hp.epsilon_start

    def new_hand(self, steps: int) -> None:
        """Draw each (game, seat)'s mode for the next hand, and the exploration of now."""
        self.best_response = torch.rand(self.best_response.shape, generator=self.generator, device=self.device) < self.hp.eta
        self.epsilon = epsilon_at(steps, self.hp)

    @torch.no_grad()
    def choose(self, observation: torch.Tensor, mask: torch.Tensor, seat: torch.Tensor) -> torch.Tensor:
        """One action per game (a [HandPlayer][training.algorithms.hands.HandPlayer] chooser):
        epsilon-greedy on Q for best-response seats, a sample of the average policy otherwise."""
        B, A = mask.shape
        br = self.best_response[torch.arange(B, device=self.device), seat]
        noise = torch.rand(B, A, generator=self.generator, device=self.device)
        explore = torch.rand(B, generator=self.generator, device=self.device) < self.epsilon
        action = torch.empty(B, dtype=torch.long, device=self.device)
        avg_rows, br_rows = (~br).nonzero().squeeze(1), br.nonzero().squeeze(1)
        if avg_rows.numel():  # Gumbel-max: a sample of softmax(logits) over the legal actions
            logits = masked(self.average(observation[avg_rows]), mask[avg_rows])
            gumbel = -torch.log(-torch.log(noise[avg_rows].clamp_(1e-10, 1.0)))
            action[avg_rows] = (logits + gumbel).argmax(1)
        if br_rows.numel():
            greedy = masked(self.q(observation[br_rows]), mask[br_rows]).argmax(1)
            uniform = noise[br_rows].masked_fill(~mask[br_rows], -1.0).argmax(1)  # a uniform legal action
            action[br_rows] = torch.where(explore[br_rows], uniform, greedy)
        return action

    def remember(self, hand: HandBatch) -> dict[str, float]:
        """Every transition into the replay buffer, the best-response decisions into the reservoir."""
        t = hand.transitions()
        self.replay.add(self.generator, observation=t.observation, mask=t.mask, action=t.action,
                        reward=t.reward * self.hp.reward_scale, next_observation=t.next_observation,
                        next_mask=t.next_mask, done=t.done)
        br = self.best_response.gather(1, hand.seat.T).T  # (T, B): the mover played its best response
        self.reservoir.add(self.generator, observation=hand.observation[br], mask=hand.mask[br], action=hand.action[br])
        scores = hand.seat_scores()  # (B, n): each seat's points over the hand
        br_scores = scores[self.best_response]
        return {"br_score": float(br_scores.mean()) if br_scores.numel() else math.nan}

    def q_update(self) -> tuple[float, float]:
        """One DQN step on a replay minibatch; returns (loss, mean Q of the actions taken, in points)."""
        hp = self.hp
        b = self.replay.sample(hp.batch_size, self.generator)
        with torch.no_grad():
            target = q_targets(self.q_target(b["next_observation"]), b["next_mask"], b["reward"], b["done"], hp.gamma)
        q = self.q(b["observation"]).gather(1, b["action"][:, None]).squeeze(1)
        loss = F.smooth_l1_loss(q, target) if hp.loss == "huber" else F.mse_loss(q, target)
        self.descend(self.q, self.q_optimizer, loss)
        self.q_updates += 1
        if self.q_updates % hp.target_every == 0:
            self.q_target.load_state_dict(self.q.state_dict())
        return float(loss.detach()), float(q.detach().mean()) / hp.reward_scale

    def sl_update(self) -> tuple[float, float]:
        """One cross-entropy step of the average policy; returns (loss, share where its argmax is the stored action)."""
        b = self.reservoir.sample(self.hp.batch_size, self.generator)
        mask, action, logits = b["mask"], b["action"], self.average(b["observation"])
        loss = policy_loss(logits, mask, action)
        self.descend(self.average, self.sl_optimizer, loss)
        agree = (masked(logits.detach(), mask).argmax(1) == action).float().mean()
        return float(loss.detach()), float(agree)

    def descend(self, network: nn.Module, optimizer: torch.optim.Optimizer, loss: torch.Tensor) -> None:
        """One gradient step on ``loss``, the gradient's norm clipped to ``grad_clip``."""
        optimizer.zero_grad()
        loss.backward()
        if self.hp.grad_clip:
            nn.utils.clip_grad_norm_(network.parameters(), self.hp.grad_clip)
        optimizer.step()

    def learn(self, steps: int) -> dict[str, float]:
        """The round after a hand of ``steps`` steps: ``replay_ratio * steps / batch_size`` updates of each
        network (the average policy's once its reservoir holds ``min_reservoir`` decisions)."""
        hp = self.hp
        updates = max(1, round(hp.replay_ratio * steps / hp.batch_size))
        q = torch.tensor([self.q_update() for _ in range(updates)], dtype=torch.float64).mean(0).tolist()
        sl = (torch.tensor([self.sl_update() for _ in range(updates)], dtype=torch.float64).mean(0).tolist()
              if self.reservoir.size >= hp.min_reservoir else [math.nan, math.nan])
        return {"q_loss": q[0], "q_mean": q[1], "sl_loss": sl[0], "sl_agree": sl[1], "epsilon": self.epsilon,
                "reservoir": float(self.reservoir.size)}


# ---------------------------------------------------------------------------- training
def train(args: argparse.Namespace, hp: Hyperparameters) -> tuple[NFSP, int, float]:
    """NFSP self-play for ``args.steps`` steps, snapshots of the average policy along the way; returns the
    learner, the steps trained and the seconds it took."""
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)  # the networks' initialisation
    device = torch.device(args.device)
    generator = torch.Generator(device=device).manual_seed(args.seed)  # every draw of the run
    settings = game_settings(args)
    engine = BatchedPisti(hp.num_games, seed=args.seed, device=device, **settings)
    hands, cards_size = HandPlayer(engine), engine.encoder.layout.cards_size  # the card block: 0/1 entries first
    learner = NFSP(hp, engine.observation_size, cards_size, engine.num_actions, engine.num_players, device, generator)
    snapshots = Snapshots(args.snapshot_steps, args.snapshot_dir, settings, name=NAME, recipe=RECIPE,
                          update_steps=hp.num_games * HAND_DECISIONS)
    progress = Progress(NAME, steps=args.steps, enabled=not args.quiet)
    start, steps = time.monotonic(), 0
    while steps < args.steps:
        learner.new_hand(steps)
        hand = hands.play(learner.choose)
        steps += hand.decisions
        metrics = learner.remember(hand)
        metrics.update(learner.learn(hand.decisions))
        snapshots.after_update(learner.average, steps)
        progress.update(steps, metrics, force=steps >= args.steps)
    return learner, steps, time.monotonic() - start


# ---------------------------------------------------------------------------- evaluation
def margins(network: nn.Module, name: str, args: argparse.Namespace) -> dict[str, dict[str, float]]:
    """``network`` as its snapshot plays (a pisti-export file, argmax over the legal actions) against ``random``
    and ``greedy`` on ``args.deals`` duplicate deals seeded by ``args.seed``, through the evaluation harness."""
    from training.harness.evaluate import baseline_margins

    settings = game_settings(args)
    with tempfile.TemporaryDirectory() as folder:
        path = Snapshots([], None, settings, name=name, recipe=RECIPE, update_steps=1).write(
            network, 0, path=os.path.join(folder, f"{name}.pt"))
        return baseline_margins(path, deals=args.deals, seed=args.seed,
                                **{k: v for k, v in settings.items() if k != "target"})


def main(argv: Sequence[str] | None = None) -> None:
    from training.harness import recipes

    args, hp = parse_args(argv)
    learner, steps, seconds = train(args, hp)
    if args.export:
        Snapshots([], None, game_settings(args), name=NAME, recipe=RECIPE, update_steps=1).write(
            learner.average, steps, path=args.export)
    recipes.report(steps, seconds, args.deals, lambda: margins(learner.average, "nfsp-average", args),
                   note=" -- the average policy (exported):")
    if args.deals:
        print("the best response (argmax of Q, not exported):", flush=True)
        recipes.print_margins(margins(learner.q, "nfsp-best-response", args), args.deals)


if __name__ == "__main__":
    main()
