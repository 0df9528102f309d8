"""Masked Double DQN in self-play on single hands of Pişti.

    python -m training.algorithms.dqn --seed 1000 --steps 5000000 --threads 1 --export dqn.pt
    python -m training.algorithms.dqn --help                # every hyperparameter

DQN (Mnih et al. 2015, "Human-level control through deep reinforcement learning": replay, a
target network, the Huber loss, linear epsilon decay) with the Double DQN target (van Hasselt,
Guez, Silver 2016, "Deep Reinforcement Learning with Double Q-learning": the online network picks
the next action, the target network values it), after CleanRL's ``dqn.py`` (the hyperparameter
dataclass, ``linear_schedule``, the target update ``tau * online + (1 - tau) * target``) and
RLCard's ``DQNAgent`` (``rlcard/agents/dqn_agent.py``: illegal actions masked in acting and in
the target's argmax).

How it maps onto Pişti:

* **A step** is one decision of one seat in one training game. A single hand (one deck, R3) has
  48 decisions (the cards dealt to the hands, R6, R18), so the ``num_games`` games play whole
  hands in lockstep ([HandPlayer][training.algorithms.hands.HandPlayer]); one iteration of the
  loop is one hand of every game (``48 * num_games`` steps), then ``gradient_steps`` updates.
* **Every seat** of every game is played by the online Q network, epsilon-greedily
  (self-play): with probability epsilon a legal card drawn uniformly, else the legal card of
  highest Q (R9).
* **A transition** runs from a seat's decision to that seat's next one ``num_players`` steps
  later (R3: the opponents' moves are the environment), its reward the seat's share of the score
  difference over those steps (captures and piştis R10-R17 scored by R20; the sweep R19 and the
  majority R21 in the last one, which is ``done``; a side's in partnerships, R4)
  ([HandBatch.transitions][training.algorithms.hands.HandBatch.transitions]). ``--n-step k``
  sums the seat's next ``k`` rewards and bootstraps from its ``k``-th next decision.
* **The network** reads the seat's observation vector ([pisti_env.views.observation][]: what the
  seat may know, R30-R31; 556 numbers with 2 players) and outputs ``Q(s, .)`` over the 52 card
  actions in units of ``1 / reward_scale`` points. The exported policy is the online network:
  the export masks illegal actions and plays the argmax, the greedy policy of the Q values.

The replay buffer is a ring of whole hands ([HandReplay][training.algorithms.dqn.HandReplay]).
``torch.manual_seed(seed)`` seeds the initialisation, a ``torch.Generator`` seeded with ``seed``
draws the exploration and the minibatches, the deals come from ``seed``: the same seed, steps and
threads give bit-identical snapshots.

Hyperparameters ([Hyperparameters][training.algorithms.dqn.Hyperparameters]), with where each
value comes from; the tuning runs (seed 1000 and up only) are under "Measured":

* ``num_games`` 512: throughput (the engine's per-step cost is flat up to a few hundred games),
  finer than 1024 for interleaving acting and learning. ``hidden_sizes`` 256 256 (ReLU): the
  brief's size; one thread updates ~45k samples/s at ``batch_size`` 512 (128x128 ~80k/s). Not tuned.
* ``learning_rate`` 2.5e-4 (Adam): CleanRL ``dqn.py``. ``max_grad_norm`` 10: Stable-Baselines3's
  DQN default (CleanRL does not clip). ``batch_size`` 512: CleanRL's 128 (the paper's 32) made
  larger for one CPU thread's throughput. Not tuned.
* ``replay_ratio`` 2 sampled transitions per step (the paper: 8, 32 every 4 frames): so 5M steps
  fit the 10-15 minutes of one thread with room for others' jobs; 4 was no better (Measured).
* ``buffer_size`` 200,000 transitions (8 hands of 512 games, 4% of the budget; CleanRL's Atari
  1M of 10M) and ``learning_starts`` 50,000 (CleanRL: 80k of 10M): my choice. Not tuned.
* ``gamma`` 1: a hand's points are what is played for. ``n_step`` 1: the papers' (3 was worse).
* ``reward_scale`` 0.1: a hand's score difference is ~10 points, so Q values come near unit
  scale where the Huber loss (delta 1, the paper's error clipping) is quadratic. My choice.
* ``target_every`` 250 gradient steps, ``tau`` 1: CleanRL's Atari (a copy every 1,000 steps, an
  update every 4).
* ``start_e`` 1, ``end_e`` 0.05: CleanRL ``dqn.py``; ``exploration_fraction`` 0.2: between
  CleanRL's Atari 0.1 and classic-control 0.5. Not tuned.
* ``dueling`` off: Wang et al. 2016's head, available as a flag.

Measured (2 shared cores, load average 6-8, ``--threads 1``, ``nice -n 5``; margins over
``greedy`` on 2,000 duplicate deals of seed 0, ± the 95% interval):

* Throughput at the defaults: ~12,800 steps per CPU-second of the process (2.75M steps in 215 s
  of CPU: 5M in ~6.5 min of a whole core); 3,937 steps/s of wall clock at load average 7.4.
* ``--seed 1000`` at the defaults, 5,013,504 steps (1,273 s wall): +3.51 ± 0.44 over greedy and
  +12.27 ± 0.45 over random (the ``--deals 2000`` output). Its snapshots over greedy: +1.57 (0.64M
  steps), +2.63 (1.25M), +2.92, +2.99, +3.17, +3.23, +3.42 (4.4M), +3.51 (5M): still rising.
* Tuning, the same seed, stopped early (~40 min of training in all): ``--n-step 3`` -0.80 at
  0.64M and +1.64 at 1.25M (Huber loss 3x higher: the n-step sums carry the epsilon-greedy seats'
  moves, uncorrected as in Rainbow); ``--replay-ratio 4`` +1.16 and +2.11 at those points, for
  1.85x the CPU. Neither kept; ``dueling``, the learning rate, the buffer were not tried.
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
from typing import Sequence

import torch
import torch.nn.functional as F
from torch import nn

from pisti_env.batched import BatchedPisti
from training.algorithms.hands import HAND_DECISIONS, HandBatch, HandPlayer
from pisti_env.tools import flags
from training.algorithms.recipe import (Progress, Snapshots, add_algorithm_flags, check_algorithm_args, game_settings,
                                        non_negative_int, positive_int)

NAME, RECIPE = "dqn", "training/algorithms/dqn.py"  # the exports' name and recipe
MAX_GRAD_NORM = 10.0  # Stable-Baselines3's DQN default


# ---------------------------------------------------------------------------- hyperparameters
positive_float, unit_float = flags.positive_float, flags.bounded(float, 0.0, 1.0)


@dataclass
class Hyperparameters:
    """Every knob of the algorithm; each is a flag (``--num-games 256``, ``--dueling``). Where
    each value comes from: the module docstring."""

    num_games: int = field(default=512, metadata={"help": "games of the batched engine played side by side: one hand of each is 48 * num_games steps", "type": positive_int})
    hidden_sizes: tuple[int, ...] = field(default=(256, 256), metadata={"help": "widths of the Q network's hidden layers (ReLU)", "type": positive_int})
    dueling: bool = field(default=False, metadata={"help": "a dueling head: Q = V + A - mean(A) (Wang et al. 2016)"})
    learning_rate: float = field(default=2.5e-4, metadata={"help": "Adam's step size", "type": positive_float})
    max_grad_norm: float = field(default=MAX_GRAD_NORM, metadata={"help": "clip the global gradient norm to this", "type": positive_float})
    batch_size: int = field(default=512, metadata={"help": "transitions per gradient step", "type": positive_int})
    replay_ratio: float = field(default=2.0, metadata={"help": "transitions sampled for updates per environment step: gradient_steps per hand = replay_ratio * 48 * num_games / batch_size", "type": positive_float})
    buffer_size: int = field(default=200_000, metadata={"help": "replay capacity in transitions, rounded down to whole hands (at least one)", "type": positive_int})
    learning_starts: int = field(default=50_000, metadata={"help": "environment steps played before the first update", "type": non_negative_int})
    gamma: float = field(default=1.0, metadata={"help": "discount per seat decision (a hand is short and its points are the goal: 1)", "type": unit_float})
    n_step: int = field(default=1, metadata={"help": "bootstrap from the seat's n-th next decision, the rewards between summed", "type": positive_int})
    reward_scale: float = field(default=0.1, metadata={"help": "rewards (points) are multiplied by this: Q values in units of 1/reward_scale points", "type": positive_float})
    target_every: int = field(default=250, metadata={"help": "gradient steps between target network updates", "type": positive_int})
    tau: float = field(default=1.0, metadata={"help": "target update: target = tau * online + (1 - tau) * target (1: a copy)", "type": unit_float})
    start_e: float = field(default=1.0, metadata={"help": "exploration epsilon at the start", "type": unit_float})
    end_e: float = field(default=0.05, metadata={"help": "exploration epsilon after the decay", "type": unit_float})
    exploration_fraction: float = field(default=0.2, metadata={"help": "share of --steps over which epsilon decays linearly from start_e to end_e", "type": unit_float})

    def hand_steps(self) -> int:
        """Environment steps in one hand of every game: every seat's decisions (R3, R6, R18)."""
        return HAND_DECISIONS * self.num_games

    def gradient_steps(self) -> int:
        """Gradient steps after each hand of every game."""
        return round(self.replay_ratio * self.hand_steps() / self.batch_size)


def add_hyperparameter_flags(parser: argparse.ArgumentParser) -> None:
    """One flag per [Hyperparameters][training.algorithms.dqn.Hyperparameters] field."""
    group = parser.add_argument_group("DQN hyperparameters")
    for f in dataclasses.fields(Hyperparameters):
        flag = "--" + f.name.replace("_", "-")
        helptext = f.metadata["help"] + " (default: %(default)s)"
        if f.type == "bool":
            group.add_argument(flag, action=argparse.BooleanOptionalAction, default=f.default, help=helptext)
        elif f.type == "tuple[int, ...]":
            group.add_argument(flag, type=f.metadata["type"], nargs="+", default=list(f.default), help=helptext)
        else:
            group.add_argument(flag, type=f.metadata["type"], default=f.default, help=helptext)


def hyperparameters_of(parser: argparse.ArgumentParser, args: argparse.Namespace) -> Hyperparameters:
    """The flags' [Hyperparameters][training.algorithms.dqn.Hyperparameters], their combinations
    checked (``parser.error``: exit 2)."""
    values = {f.name: getattr(args, f.name) for f in dataclasses.fields(Hyperparameters)}
    values["hidden_sizes"] = tuple(values["hidden_sizes"])
    hp = Hyperparameters(**values)
    if hp.gradient_steps() < 1:
        parser.error(f"--replay-ratio {hp.replay_ratio} gives no gradient step per hand of {hp.hand_steps():,} "
                     f"steps with --batch-size {hp.batch_size}: raise it or lower --batch-size")
    if hp.end_e > hp.start_e:
        parser.error(f"--end-e {hp.end_e} is above --start-e {hp.start_e}")
    if hp.n_step * args.players >= HAND_DECISIONS:
        parser.error(f"--n-step {hp.n_step} spans the whole hand of {HAND_DECISIONS} decisions")
    return hp


# ---------------------------------------------------------------------------- the Q network
class QNetwork(nn.Module):
    """``Q(s, .)``: an MLP from the observation vector to one value per card action (52), with
    an optional dueling head (Wang et al. 2016: ``V(s) + A(s, a) - mean_a A(s, a)``, the mean
    over all actions as the paper has it, so the module reads no mask and exports as is)."""

    def __init__(self, observation_size: int, num_actions: int, hidden_sizes: Sequence[int], dueling: bool) -> None:
        super().__init__()
        widths = [observation_size, *hidden_sizes]
        self.body = nn.Sequential(*(m for a, b in zip(widths, widths[1:]) for m in (nn.Linear(a, b), nn.ReLU())))
        self.head = nn.Linear(widths[-1], num_actions)  # the advantages with a dueling head
        self.value = nn.Linear(widths[-1], 1) if dueling else None

    def forward(self, observation: torch.Tensor) -> torch.Tensor:
        hidden = self.body(observation)
        q = self.head(hidden)
        if self.value is not None:
            q = self.value(hidden) + q - q.mean(dim=1, keepdim=True)
        return q


def masked_argmax(q: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``(B,)`` the legal action of highest value per row (``mask`` bool ``(B, A)``); a row with
    no legal action (a finished seat's zeroed mask) gives 0, never read."""
    return q.masked_fill(~mask, -math.inf).argmax(dim=1)


def double_dqn_target(reward: torch.Tensor, done: torch.Tensor, next_q_online: torch.Tensor,
                      next_q_target: torch.Tensor, next_mask: torch.Tensor, discount: float) -> torch.Tensor:
    """The Double DQN target ``r + discount * Q_target(s', argmax_{a' legal} Q_online(s', a'))``,
    just ``r`` where ``done`` (van Hasselt et al. 2016, eq. 4; the argmax over legal actions as
    RLCard's ``DQNAgent.train``). ``discount``: gamma to the power of the steps bootstrapped over."""
    best = masked_argmax(next_q_online, next_mask)
    next_value = next_q_target.gather(1, best[:, None]).squeeze(1)
    return reward + discount * torch.where(done, torch.zeros_like(next_value), next_value)


def epsilon_at(hp: Hyperparameters, steps: int, total: int) -> float:
    """CleanRL's ``linear_schedule``: ``start_e`` down to ``end_e`` over ``exploration_fraction``
    of the budget, then flat."""
    duration = hp.exploration_fraction * total
    return hp.end_e if duration <= 0 else max(hp.start_e + (hp.end_e - hp.start_e) * steps / duration, hp.end_e)


# ---------------------------------------------------------------------------- the replay buffer
@dataclass
class Sample:
    """A minibatch of transitions (``(M, ...)``), rewards already scaled."""

    observation: torch.Tensor
    action: torch.Tensor
    reward: torch.Tensor
    next_observation: torch.Tensor
    next_mask: torch.Tensor
    done: torch.Tensor


class HandReplay:
    """A ring of whole hands: ``slots`` hands of ``games`` games, ``(slots, T, games, ...)``
    tensors, ``T = 48`` decisions per hand.

    A decision at step ``t`` of a stored hand has its transition's next decision at step
    ``t + n_step * num_players`` of the same hand and game (the seats move in turn, R3), or is
    ``done`` past the hand's end: so only the observations are stored, once. Its reward is the
    sum of ``gamma ** j`` times the seat's rewards of its next ``n_step`` transitions (each one
    [HandBatch.transitions][training.algorithms.hands.HandBatch.transitions]' reward), those
    past the hand's end counting 0.
    """

    def __init__(self, slots: int, games: int, observation_size: int, num_actions: int, num_players: int,
                 n_step: int, gamma: float, reward_scale: float, device: torch.device) -> None:
        T = HAND_DECISIONS
        self.slots, self.games, self.num_players = slots, games, num_players
        self.n_step, self.gamma, self.reward_scale = n_step, gamma, reward_scale
        self.observation = torch.zeros(slots, T, games, observation_size, device=device)
        self.mask = torch.zeros(slots, T, games, num_actions, dtype=torch.bool, device=device)
        self.action = torch.zeros(slots, T, games, dtype=torch.long, device=device)
        self.reward = torch.zeros(slots, T, games, device=device)
        self.next_step = torch.arange(T, device=device) + n_step * num_players  # (T,): where each step bootstraps
        self.done = self.next_step >= T
        self.next_step.clamp_(max=T - 1)
        self.discount = gamma ** n_step
        self.stored = 0  # hands written so far (the ring's next slot: stored % slots)

    def __len__(self) -> int:
        """Transitions held."""
        return min(self.stored, self.slots) * HAND_DECISIONS * self.games

    def add(self, hand: HandBatch) -> None:
        """Store one hand of every game (overwriting the oldest when full)."""
        T, n = HAND_DECISIONS, self.num_players
        one_step = hand.transitions().reward.view(T, self.games)  # the seat's rewards up to its next decision
        reward = torch.zeros_like(one_step)
        for j in range(self.n_step):
            later = torch.arange(T, device=reward.device) + j * n
            inside = (later < T).to(reward.dtype)[:, None]
            reward += (self.gamma ** j) * one_step[later.clamp(max=T - 1)] * inside
        slot = self.stored % self.slots
        self.observation[slot].copy_(hand.observation)
        self.mask[slot].copy_(hand.mask)
        self.action[slot].copy_(hand.action)
        self.reward[slot].copy_(reward * self.reward_scale)
        self.stored += 1

    def sample(self, size: int, generator: torch.Generator) -> Sample:
        """``size`` transitions drawn uniformly (with replacement) from those held."""
        T, B = HAND_DECISIONS, self.games
        index = torch.randint(len(self), (size,), generator=generator, device=self.observation.device)
        slot, t, game = index // (T * B), (index // B) % T, index % B
        nxt, done = self.next_step[t], self.done[t]
        return Sample(observation=self.observation[slot, t, game], action=self.action[slot, t, game],
                      reward=self.reward[slot, t, game], next_observation=self.observation[slot, nxt, game],
                      next_mask=self.mask[slot, nxt, game] & ~done[:, None], done=done)


# ---------------------------------------------------------------------------- the update
def dqn_loss(online: nn.Module, target: nn.Module, batch: Sample, discount: float) -> tuple[torch.Tensor, torch.Tensor]:
    """The Huber loss (delta 1) between ``Q_online(s, a)`` and the Double DQN target; returns
    ``(loss, Q_online(s, a))``."""
    with torch.no_grad():
        y = double_dqn_target(batch.reward, batch.done, online(batch.next_observation),
                              target(batch.next_observation), batch.next_mask, discount)
    q = online(batch.observation).gather(1, batch.action[:, None]).squeeze(1)
    return F.smooth_l1_loss(q, y), q


@torch.no_grad()
def update_target(online: nn.Module, target: nn.Module, tau: float) -> None:
    """CleanRL's target update: ``target = tau * online + (1 - tau) * target``."""
    for t_param, o_param in zip(target.parameters(), online.parameters()):
        t_param.copy_(tau * o_param + (1.0 - tau) * t_param)


# ---------------------------------------------------------------------------- training
def parse(argv: Sequence[str] | None) -> tuple[argparse.Namespace, Hyperparameters]:
    parser = argparse.ArgumentParser(prog="python -m training.algorithms.dqn", description=__doc__.splitlines()[0])
    add_algorithm_flags(parser, steps=5_000_000)
    add_hyperparameter_flags(parser)
    args = parser.parse_args(argv)
    check_algorithm_args(parser, args)
    return args, hyperparameters_of(parser, args)


def train(args: argparse.Namespace, hp: Hyperparameters) -> tuple[QNetwork, Snapshots, int, float]:
    """Self-play DQN for ``args.steps`` steps; returns ``(online network, snapshots, steps,
    seconds)``."""
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)  # the networks' initialisation
    generator = torch.Generator(device=args.device).manual_seed(args.seed)  # exploration, minibatches
    device = torch.device(args.device)
    settings = game_settings(args)
    engine = BatchedPisti(hp.num_games, seed=args.seed, device=args.device, **settings)
    player = HandPlayer(engine)
    online = QNetwork(engine.observation_size, engine.num_actions, hp.hidden_sizes, hp.dueling).to(device)
    target = copy.deepcopy(online)
    optimizer = torch.optim.Adam(online.parameters(), lr=hp.learning_rate)
    replay = HandReplay(max(1, hp.buffer_size // hp.hand_steps()), hp.num_games, engine.observation_size, engine.num_actions,
                        engine.num_players, hp.n_step, hp.gamma, hp.reward_scale, device)
    snapshots = Snapshots(args.snapshot_steps, args.snapshot_dir, settings, name=NAME, recipe=RECIPE,
                          update_steps=hp.hand_steps())
    progress = Progress(NAME, steps=args.steps, enabled=not args.quiet)
    epsilon = hp.start_e  # read by choose, set before each hand

    def choose(observation: torch.Tensor, mask: torch.Tensor, seat: torch.Tensor) -> torch.Tensor:
        """Every seat epsilon-greedy on the online network (self-play)."""
        greedy = masked_argmax(online(observation), mask)
        uniform = torch.multinomial(mask.float(), 1, generator=generator).squeeze(1)
        explore = torch.rand(mask.shape[0], generator=generator, device=mask.device) < epsilon
        return torch.where(explore, uniform, greedy)

    steps, gradient_steps, start = 0, 0, time.perf_counter()  # one iteration: one hand of every game
    while steps < args.steps:
        epsilon = epsilon_at(hp, steps, args.steps)
        hand = player.play(choose)
        replay.add(hand)
        steps += hand.decisions
        metrics: dict[str, float] = {"epsilon": epsilon}
        if steps >= hp.learning_starts:
            losses, qs = [], []
            for _ in range(hp.gradient_steps()):
                loss, q = dqn_loss(online, target, replay.sample(hp.batch_size, generator), replay.discount)
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(online.parameters(), hp.max_grad_norm)
                optimizer.step()
                gradient_steps += 1
                if gradient_steps % hp.target_every == 0:
                    update_target(online, target, hp.tau)
                losses.append(loss.detach())
                qs.append(q.detach().mean())
            metrics.update(loss=float(torch.stack(losses).mean()), updates=float(gradient_steps),
                           q_points=float(torch.stack(qs).mean()) / hp.reward_scale)  # mean Q(s, a) taken, in points
        snapshots.after_update(online, steps)
        progress.update(steps, metrics, force=steps >= args.steps)
    return online, snapshots, steps, time.perf_counter() - start


def main(argv: Sequence[str] | None = None) -> None:
    """Train (the command line: ``--help``), write ``--export``, then print the margins over
    ``random`` and ``greedy`` on ``--deals`` duplicate deals, played by the exported file."""
    from pisti_env.agents.exported import load_exported
    from training.harness.evaluate import baseline_margins
    from training.harness.recipes import report

    args, hp = parse(argv)
    online, snapshots, steps, seconds = train(args, hp)
    online.eval()
    with tempfile.TemporaryDirectory() as scratch:
        path = args.export or os.path.join(scratch, "dqn.pt")
        if args.export or args.deals:
            snapshots.write(online, steps, path=path)
        if args.export:
            print(f"exported the policy to {path}", flush=True)
        report(steps, seconds, args.deals, lambda: baseline_margins(
            load_exported(path), deals=args.deals, label=NAME, num_players=args.players, partnerships=args.partnerships))


if __name__ == "__main__":
    main()
