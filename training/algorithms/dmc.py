"""Deep Monte-Carlo (DMC) self-play on single hands, after DouZero.

    python -m training.algorithms.dmc --seed 1000 --steps 5000000 --threads 1   # then rates vs random, greedy
    python -m training.algorithms.dmc --help                                     # every hyperparameter

The algorithm of Zha et al., "DouZero: Mastering DouDizhu with Self-Play Deep Reinforcement
Learning" (ICML 2021), as its reference implementation has it (github.com/kwai/DouZero, folder
``douzero/dmc``: ``dmc.py`` ``learn``/``compute_loss``, ``utils.py`` ``act``/
``create_optimizers``, ``models.py``, ``arguments.py``): a Q network over (state, action)
pairs, regressed by mean squared error on the Monte-Carlo return of the whole game
(``compute_loss``: ``((values - targets) ** 2).mean()``, the target of every decision being
the episode's final reward, ``utils.act``); the actors play the argmax of Q over the legal
actions, or with probability ``exp_epsilon = 0.01`` a uniformly random legal one
(``models.py``' ``forward``); every seat is played by the learner's current network (self-play),
and each decision is learnt from once (DouZero's ``get_batch`` frees its buffers).

Reproducibility: ``--seed`` seeds the deals, the initialisation and one ``torch.Generator``
(exploration, minibatches): the same seed, steps and ``--threads`` give the same snapshots.

How it maps onto Pişti:

* **A step** is one decision of any seat in the training games (the protocol's count, see
  [training.algorithms.recipe][]). [HandPlayer][training.algorithms.hands.HandPlayer] plays one
  single hand (``target=None``) in each of ``--num-games`` games in lockstep, 48 decisions per
  game with one deck (R6, R18), the seats moving in turn (R3); the current network plays every
  seat (self-play, as DouZero's three positions all learn). One such hand is an **update**:
  ``48 * num_games`` steps, then ``--epochs`` passes of minibatch gradient steps over its
  decisions, then [Snapshots.after_update][training.algorithms.recipe.Snapshots.after_update].
* **The target** of a decision is [HandBatch.returns][training.algorithms.hands.HandBatch.returns]:
  its seat's rewards summed to the hand's end, undiscounted (the score difference the seat's
  side makes from that decision on, R20-R23; with partnerships, R4, the side's), times
  ``--return-scale``. DouZero's target is the game's final reward (its ``adp`` objective: the
  score); in a single hand the two are the same thing, since rewards before the decision do
  not depend on it.
* **One network for every seat.** DouZero trains one network per position (landlord and the
  two farmers, whose roles differ). Pişti's seats differ only by their place in the playing
  order, and the observation is seat-relative with the dealer and the seat to move one-hot
  (``pisti_env/views/observation.py``), so one network serves every seat.
* **The state** is the seat's observation vector (what the seat may know, R30). DouZero's
  LSTM over the last moves is not needed: the observation encodes the history as card locations.
* **The action** is the card played (action id = card id, R2). DouZero concatenates the
  action's card encoding with the state features; here the action's features are
  (a) its one-hot over the 52 card ids, (b) its rank one-hot (13), (c) its points (R20, / 3)
  and whether it is a Jack (R11); and, read from the observation, (d) the card's slice of the
  card block (its ``K`` location features) and (e) the rank's slice, the sum of those ``K``
  features over the four cards of its rank (how many of its rank are in hand, on the pile,
  on top, captured, played by each seat, unseen: what a capture, R10, or a pişti, R13, turn
  on). (d) and (e) are the "card's slice of features" option of the design, widened to its rank.
* **The network** is DouZero's MLP on the concatenation ``[state, action features]`` (ReLU,
  hidden widths ``--hidden``, then one output), computed factored: the first layer's
  pre-activation ``W [s; a] + b`` is split into ``W_s s + b`` (once per state) plus
  ``W_a a`` (the action part), which is exactly the same function as the concatenated MLP but
  reads the state inputs (556 with 2 players) once per state instead of once per action. Acting
  and the exported policy ([LegalQ][training.algorithms.dmc.LegalQ]) score only the legal cards
  (at most 4 per row, R6). Measured (one thread of a loaded 2-core machine, 256 x 256,
  B = 1,024): all 52 actions 283 ms factored, 455 ms as the concatenated MLP; the legal cards
  only, 15.7 ms (rating a snapshot on 1,000 deals: 116 s when the export scored all 52).

Hyperparameters, their source and the tuning they got (seeds >= 1000 only; seeds 0-9 are the
reported results'):

* ``--epsilon 0.01``: DouZero's ``exp_epsilon`` (``arguments.py``); not tuned.
* ``--optimizer adam --lr 1e-3``: our choice for the small budget (5M decisions against
  DouZero's billions). DouZero's RMSprop (lr 1e-4, alpha 0.99, eps 1e-5, momentum 0,
  ``create_optimizers``) is ``--optimizer rmsprop --lr 1e-4 --opt-eps 1e-5``: one run of it
  (seed 1000, 1.25M steps, batch 4,096) was behind Adam early (+1.77 against +2.76 over greedy
  at 0.64M steps) and level at 1.28M (+2.78 against +2.72; 1,000 duplicate deals each,
  ± 0.65), so Adam was kept; RMSprop was not run to 5M.
* ``--opt-eps 1e-5``: DouZero's RMSprop epsilon, for Adam too (CleanRL's). ``--epochs 1``: each
  decision learnt from once, as DouZero's buffers are; not tuned.
* ``--max-grad-norm 40``: DouZero's (``arguments.py``); the gradient norms measured stay
  below 1, so it never binds at this return scale.
* ``--batch-size 1024``: decisions per gradient step (48 steps per update). DouZero's is 32
  trajectories x 100 unroll steps = 3,200 (``batch_size``, ``unroll_length``). Tuned, one seed
  each (1000, 5M steps, Adam 1e-3): 4,096 (12 gradient steps per update, 1,224 in all) gave
  +3.86 ± 0.42 over greedy and +12.42 ± 0.46 over random; 1,024 (four times the gradient
  steps, 7% more CPU time) +4.22 ± 0.43 and +13.05 ± 0.46 (2,000 duplicate deals). The
  4,096 run still gained at the end (+4.01 at 5M, 1,000 deals): more, smaller steps.
* ``--num-games 1024``: games per hand (49,152 steps per update): the engine's throughput
  plateaus near there (405k decisions/s at 1,024, 416k at 2,048, random play, 1 thread), and it
  keeps the data at most one update behind the network, like DouZero's actors; not tuned.
* ``--hidden 256 256``: DouZero's MLP is 5 x 512 after a 128-unit LSTM; smaller here for the
  CPU budget (the brief's 10-15 minutes for 5M steps on one thread); not tuned.
* ``--return-scale 0.1``: returns are points with a standard deviation near 10 (measured, random
  play), scaled to near unit size for the MSE; our choice, not tuned (argmax is unaffected).

Measured (seed 1000, the defaults, 5M steps, ``--threads 1`` on a 2-core machine shared with
other jobs, load average 6-7): 756 s wall, 6,636 steps/s (4.4 minutes of CPU time: about
19,000 steps per CPU second; 18,900 steps/s wall on an idle machine with batch 4,096); then
+4.22 ± 0.43 points per hand over ``greedy`` and +13.05 ± 0.46 over ``random`` on 2,000
duplicate deals. Its snapshots against greedy along the way (1,000 deals, ± 0.63): +2.78 at
0.64M steps, +3.00 at 1.28M, +3.53 at 2.5M, +3.84 at 3.8M: still gaining at the budget's end.
Q explains ~0.1 of the returns' variance: most of a return is cards still to come (R6, R18).
"""

from __future__ import annotations

import argparse
import math
import time
from typing import Any, Sequence

import torch
import torch.nn.functional as F
from torch import nn

from pisti_env import make_settings
from pisti_env.agents import SeatView
from pisti_env.batched import BatchedPisti
from pisti_env.rules.cards import HAND_SIZE, JACK, NUM_CARD_IDS, NUM_RANKS, RANK, SUITS
from pisti_env.tools.flags import bounded, positive_float
from pisti_env.views.observation import ObservationLayout
from pisti_env.rules.scoring import POINTS
from training.algorithms.hands import HAND_DECISIONS, HandPlayer
from training.algorithms.recipe import (
    Progress, Snapshots, add_algorithm_flags, check_algorithm_args, game_settings, positive_int,
)
from training.harness import recipes

NAME = "dmc"
NUM_SUITS = len(SUITS)


# ---------------------------------------------------------------------------- hyperparameters
probability = bounded(float, 0.0, 1.0)  # an argparse type=: a number in [0, 1]


def build_parser() -> argparse.ArgumentParser:
    """The protocol's flags ([add_algorithm_flags][training.algorithms.recipe.add_algorithm_flags])
    and DMC's own (see the module docstring for where each default comes from)."""
    parser = argparse.ArgumentParser(prog="python -m training.algorithms.dmc", description=__doc__.splitlines()[0])
    add_algorithm_flags(parser, steps=5_000_000)
    dmc = parser.add_argument_group("DMC")
    dmc.add_argument("--num-games", type=positive_int, default=1024,
                     help="games played side by side; one hand of all of them (48 decisions each) is one update")
    dmc.add_argument("--batch-size", type=positive_int, default=1024, help="decisions per gradient step")
    dmc.add_argument("--epochs", type=positive_int, default=1, help="passes over each hand's decisions")
    dmc.add_argument("--epsilon", type=probability, default=0.01,
                     help="exploration: the chance a decision is a uniformly random legal card (DouZero: 0.01)")
    dmc.add_argument("--optimizer", choices=("adam", "rmsprop"), default="adam",
                     help="adam, or DouZero's rmsprop (with --lr 1e-4)")
    dmc.add_argument("--lr", type=positive_float, default=1e-3, help="learning rate (DouZero: 1e-4 with rmsprop)")
    dmc.add_argument("--rms-alpha", type=probability, default=0.99, help="RMSprop's smoothing constant (DouZero's)")
    dmc.add_argument("--opt-eps", type=positive_float, default=1e-5, help="the optimiser's epsilon (DouZero's RMSprop: 1e-5)")
    dmc.add_argument("--max-grad-norm", type=positive_float, default=40.0, help="clip the gradient norm to this (DouZero's)")
    dmc.add_argument("--hidden", type=positive_int, nargs="+", default=[256, 256], metavar="WIDTH",
                     help="widths of the Q network's hidden layers (ReLU)")
    dmc.add_argument("--return-scale", type=positive_float, default=0.1,
                     help="the returns (points) are multiplied by this before the MSE")
    return parser


def parse_args(argv: Sequence[str] | None = None) -> argparse.Namespace:
    """The flags, checked (a bad combination is an argparse error, exit 2)."""
    parser = build_parser()
    args = parser.parse_args(argv)
    check_algorithm_args(parser, args)
    update_steps = HAND_DECISIONS * args.num_games
    gaps = [b - a for a, b in zip(args.snapshot_steps, args.snapshot_steps[1:])]
    if gaps and min(gaps) < update_steps:
        parser.error(f"--snapshot-steps {min(gaps):,} apart, but one update (a hand of --num-games "
                     f"{args.num_games}) takes {update_steps:,} steps: use fewer games or snapshots")
    return args


# ---------------------------------------------------------------------------- the Q network
def action_feature_table() -> torch.Tensor:
    """``(52, 52 + 13 + 2)``: per card id (= action id, R2) its one-hot, its rank's one-hot, its
    points (R20) over the most any card scores, and whether it is a Jack (R11)."""
    ids = torch.arange(NUM_CARD_IDS)
    rank = torch.tensor([RANK[c] for c in range(NUM_CARD_IDS)])
    points = torch.tensor([float(POINTS[c]) for c in range(NUM_CARD_IDS)])
    return torch.cat([
        F.one_hot(ids, NUM_CARD_IDS).float(),
        F.one_hot(rank, NUM_RANKS).float(),
        (points / points.max())[:, None],
        (rank == JACK).float()[:, None],
    ], dim=1)


class QNetwork(nn.Module):
    """Q(s, a) for a seat's observation ``s`` and a card ``a``: DouZero's MLP on
    ``[state, action features]``, its first layer split into a state part and an action part
    (the same function, see the module docstring).

    Args:
        layout: the game's observation layout (where the card block is, its ``K`` features).
        hidden: the hidden widths (at least one).
    """

    def __init__(self, layout: ObservationLayout, hidden: Sequence[int]) -> None:
        super().__init__()
        self.card_features = layout.num_card_features
        self.cards_size = layout.cards_size
        width = hidden[0]
        self.register_buffer("action_features", action_feature_table())
        self.state_in = nn.Linear(layout.size, width)  # W_s s + b: once per state
        self.action_in = nn.Linear(self.action_features.shape[1], width, bias=False)  # W_a a, the card's own
        self.slice_in = nn.Linear(2 * self.card_features, width, bias=False)  # W_a a, the card's and rank's slices
        layers: list[nn.Module] = [nn.ReLU()]
        for inputs, outputs in zip(hidden, hidden[1:]):
            layers += [nn.Linear(inputs, outputs), nn.ReLU()]
        layers.append(nn.Linear(hidden[-1], 1))
        self.body = nn.Sequential(*layers)

    def card_slices(self, observation: torch.Tensor) -> torch.Tensor:
        """``(B, 52, 2K)``: per card id its ``K`` card features and the sum of those over the four
        cards of its rank (card id = suit * 13 + rank, R2)."""
        cards = observation[:, : self.cards_size].reshape(-1, NUM_CARD_IDS, self.card_features)
        by_rank = cards.reshape(-1, NUM_SUITS, NUM_RANKS, self.card_features).sum(1)
        return torch.cat([cards, by_rank.repeat(1, NUM_SUITS, 1)], dim=2)

    def q(self, observation: torch.Tensor, actions: torch.Tensor) -> torch.Tensor:
        """``(B, k)``: Q of ``k`` actions per row, ``actions`` ``(B, k)`` card ids."""
        state = self.state_in(observation)  # (B, H)
        slices = self.card_slices(observation)
        chosen = slices.gather(1, actions[:, :, None].expand(-1, -1, slices.shape[2]))  # (B, k, 2K)
        action = self.action_in(self.action_features)[actions]  # (B, k, H)
        return self.body(state[:, None, :] + action + self.slice_in(chosen)).squeeze(2)

    def forward(self, observation: torch.Tensor) -> torch.Tensor:
        """``(B, 52)``: Q of every action (the exported policy; illegal ones are masked by the
        export)."""
        state = self.state_in(observation)[:, None, :]
        action = self.action_in(self.action_features)[None]
        return self.body(state + action + self.slice_in(self.card_slices(observation))).squeeze(2)


class LegalQ(nn.Module):
    """The exported policy: Q of the legal cards only, the rest at the most negative float.
    A seat holds at most ``HAND_SIZE`` cards (R6), so scoring that many per row is exact and a
    fixed shape (TorchScript's trace), 13x cheaper than all 52 when the snapshots are rated."""

    def __init__(self, network: QNetwork) -> None:
        super().__init__()
        self.network = network

    def forward(self, observation: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        legal = torch.sort(mask.to(torch.uint8), dim=1, descending=True, stable=True).indices[:, :HAND_SIZE]
        q = self.network.q(observation, legal).masked_fill(~mask.gather(1, legal), torch.finfo(torch.float32).min)
        return torch.full(mask.shape, torch.finfo(torch.float32).min).scatter(1, legal, q)


def legal_cards(mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """``(legal (B, k), valid (B, k))``: each row's legal action ids first (in id order),
    padded to the row with the most (``k``); ``valid`` marks the real ones."""
    k = max(int(mask.sum(1).max()), 1)
    legal = torch.sort(mask.to(torch.uint8), dim=1, descending=True, stable=True).indices[:, :k]
    return legal, mask.gather(1, legal)


def greedy_actions(network: QNetwork, observation: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
    """``(B,)``: the legal card of highest Q per row (Q evaluated for the legal cards only)."""
    legal, valid = legal_cards(mask)
    q = network.q(observation, legal).masked_fill(~valid, -math.inf)
    return legal.gather(1, q.argmax(1, keepdim=True)).squeeze(1)


def epsilon_greedy(network: QNetwork, observation: torch.Tensor, mask: torch.Tensor, epsilon: float,
                   generator: torch.Generator) -> torch.Tensor:
    """DouZero's actors: the greedy card, or with probability ``epsilon`` a uniformly random
    legal one (both drawn every call, so the generator's stream does not depend on Q)."""
    greedy = greedy_actions(network, observation, mask)
    explore = torch.rand(mask.shape[0], generator=generator, device=mask.device) < epsilon
    uniform = torch.rand(mask.shape, generator=generator, device=mask.device).masked_fill(~mask, -1.0).argmax(1)
    return torch.where(explore, uniform, greedy)


# ---------------------------------------------------------------------------- the update
def dmc_loss(network: QNetwork, observation: torch.Tensor, action: torch.Tensor, target: torch.Tensor) -> torch.Tensor:
    """DouZero's ``compute_loss``: the mean squared error of Q(s, a) against the Monte-Carlo
    return."""
    return ((network.q(observation, action[:, None]).squeeze(1) - target) ** 2).mean()


def make_optimizer(network: nn.Module, args: argparse.Namespace) -> torch.optim.Optimizer:
    """Adam, or DouZero's RMSprop (``create_optimizers``: ``alpha``, ``eps``, momentum 0)."""
    if args.optimizer == "rmsprop":
        return torch.optim.RMSprop(network.parameters(), lr=args.lr, alpha=args.rms_alpha, eps=args.opt_eps, momentum=0.0)
    return torch.optim.Adam(network.parameters(), lr=args.lr, eps=args.opt_eps)


def learn(network: QNetwork, optimizer: torch.optim.Optimizer, observation: torch.Tensor, action: torch.Tensor,
          target: torch.Tensor, args: argparse.Namespace, generator: torch.Generator) -> dict[str, float]:
    """``--epochs`` passes over one hand's decisions (``(N, O)``, ``(N,)``, ``(N,)``) in shuffled
    minibatches of ``--batch-size``, one clipped gradient step each. Returns the metrics:
    ``loss`` (mean over the steps), ``explained_variance`` of the targets by Q before the first
    step, ``q_mean``, ``grad_norm`` (mean, before clipping), ``gradient_steps``."""
    with torch.no_grad():
        before = network.q(observation, action[:, None]).squeeze(1)
        variance = float(target.var())
        explained = 1.0 - float((target - before).var()) / variance if variance > 0 else math.nan
    losses, norms = [], []
    for _ in range(args.epochs):
        for idx in torch.randperm(target.shape[0], generator=generator, device=target.device).split(args.batch_size):
            loss = dmc_loss(network, observation[idx], action[idx], target[idx])
            optimizer.zero_grad()
            loss.backward()
            norms.append(float(nn.utils.clip_grad_norm_(network.parameters(), args.max_grad_norm)))
            optimizer.step()
            losses.append(loss.item())
    return {"loss": sum(losses) / len(losses), "explained_variance": explained, "q_mean": float(before.mean()),
            "grad_norm": sum(norms) / len(norms), "gradient_steps": float(len(losses))}


# ---------------------------------------------------------------------------- evaluation
class QPlayer:
    """The trained network as a harness player: the legal card of highest Q (what the export
    plays), from the seat's own observation (R30)."""

    name = NAME

    def __init__(self, network: QNetwork) -> None:
        self.network = network

    def reset(self, seed: int | None = None) -> None:
        """Deterministic play: nothing to reseed."""

    def act(self, view: SeatView) -> int:
        observation = view.observation()
        obs = torch.as_tensor(observation["observation"], dtype=torch.float32)[None]
        mask = torch.as_tensor(observation["action_mask"]).bool()[None]
        return int(self.act_batch(obs, mask))

    def act_batch(self, observation: torch.Tensor, mask: torch.Tensor,
                  generator: torch.Generator | None = None) -> torch.Tensor:
        with torch.no_grad():
            return greedy_actions(self.network, observation.float(), mask.bool())


# ---------------------------------------------------------------------------- training
def train(args: argparse.Namespace) -> tuple[QNetwork, int, float]:
    """DMC for ``args.steps`` steps; returns the network, the steps taken and the seconds."""
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)  # the network's initialisation
    generator = torch.Generator(device=args.device).manual_seed(args.seed)  # exploration and minibatches
    settings = game_settings(args)
    engine = BatchedPisti(args.num_games, seed=args.seed, device=args.device, **settings)
    player = HandPlayer(engine)
    layout = ObservationLayout(make_settings(**settings))
    network = QNetwork(layout, args.hidden).to(args.device)
    optimizer = make_optimizer(network, args)
    update_steps = HAND_DECISIONS * args.num_games
    snapshots = Snapshots(args.snapshot_steps, args.snapshot_dir, settings, NAME, f"training.algorithms.{NAME}",
                          update_steps)
    progress = Progress(NAME, steps=args.steps, enabled=not args.quiet)

    def choose(observation: torch.Tensor, mask: torch.Tensor, seat: torch.Tensor) -> torch.Tensor:
        return epsilon_greedy(network, observation, mask, args.epsilon, generator)

    steps, start = 0, time.perf_counter()
    while steps < args.steps:
        hand = player.play(choose)  # every seat played by the current network (self-play), without gradients
        target = hand.returns().reshape(-1) * args.return_scale
        metrics = learn(network, optimizer, hand.observation.reshape(target.shape[0], -1), hand.action.reshape(-1),
                        target, args, generator)
        steps += hand.decisions
        snapshots.after_update(LegalQ(network), steps, reads_mask=True)
        progress.update(steps, metrics, force=steps >= args.steps)
    return network, steps, time.perf_counter() - start


def main(argv: Sequence[str] | None = None) -> dict[str, Any]:
    """Train, export (``--export``), evaluate (``--deals``); returns ``{"steps", "seconds",
    "margins"}``."""
    args = parse_args(argv)
    network, steps, seconds = train(args)
    network.eval()
    settings = game_settings(args)
    if args.export:
        snapshots = Snapshots([], None, settings, NAME, f"training.algorithms.{NAME}", 1)
        snapshots.write(LegalQ(network), steps, reads_mask=True, path=args.export)
    from training.harness.evaluate import baseline_margins  # the harness: only for the final evaluation

    evaluation = {k: v for k, v in settings.items() if k != "target"}
    margins = recipes.report(steps, seconds, args.deals,
                             lambda: baseline_margins(QPlayer(network), deals=args.deals, seed=0, **evaluation))
    return {"steps": steps, "seconds": seconds, "margins": margins}


if __name__ == "__main__":
    main()
