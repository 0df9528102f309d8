"""CleanRL-style single-file PPO on the vector env: masked actor-critic against ``greedy``.

    python examples/cleanrl_ppo_vector.py --minutes 10            # then evaluates vs random, greedy
    python examples/cleanrl_ppo_vector.py --help                  # every hyperparameter
    python examples/cleanrl_ppo_vector.py --export agents/cleanrl-ppo.pt  # also the policy, for pisti-benchmark

One file, read top to bottom: the hyperparameters (`Args`), the network
(`Agent`), the rollout on ``gymnasium.make_vec("pisti/Pisti-v0", output="torch")``
(observations, masks, rewards and dones stay torch tensors: no NumPy round trip), GAE, the
clipped PPO update, and at the end an evaluation of the trained policy on duplicate deals
through the evaluation harness (``training.harness.evaluate``), as ``pisti-eval`` plays them.

The task (defaults): the learner holds one seat (drawn per episode) of a 2-player single hand
(``target=None``); ``greedy``, batched, plays the other seat of each of the ``num_envs`` games.
Each reward is the learner's share of the score difference since its previous decision, so an
episode's rewards add up to the hand's final score difference.

The vector env resets finished games inside ``step`` (Gymnasium's ``AutoresetMode.SAME_STEP``):
a step that returns ``terminated=True`` for a game already returns the first observation of its
next episode. So the "done" stored with a transition is the one its own step returned, and GAE
never bootstraps across it (CleanRL's ``ppo.py`` keeps the same flag one row later, with the
observation it came with; the arithmetic is the same). There is no NEXT_STEP reset transition
to skip.

Measured on this project's 2-core CPU, shared with other jobs (load average 10-14, this run
getting about a third of one core): 10 minutes trained 4.7M steps (7,764 steps/s), then on
2,000 duplicate deals +4.22 ± 0.44 points per hand over ``greedy`` and +11.28 ± 0.42 over
``random`` (``--seed 2``: 4.1M steps, +4.12 ± 0.44 and +11.35 ± 0.42).

Reproducibility: ``--seed`` seeds the network's initialisation, the action sampling, the
minibatch shuffles and the env's deals; the same seed and step budget give the same run on the
same machine and thread count. A wall-clock budget (``--minutes``) stops the run, and anneals
the learning rate, by the clock, so a run it ends is not repeatable step for step.
"""

from __future__ import annotations

import argparse
import dataclasses
import math
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Sequence

import gymnasium
import numpy as np
import torch
from torch import nn

import pisti_env  # registers "pisti/Pisti-v0" and its vector entry point
from pisti_env.agents import SeatView
from training.harness.evaluate import baseline_margins  # pisti-eval's duplicate deals, as an API
from training.harness import recipes


# ---------------------------------------------------------------------------- hyperparameters
@dataclass
class Args:
    """Every knob of a run; each is a command-line flag (``--num-envs 512``, ``--no-anneal-lr``)."""

    # Run
    seed: int = field(default=1, metadata={"help": "seeds the network, the sampling, the minibatches and the deals"})
    minutes: float = field(default=10.0, metadata={"help": "wall-clock training budget in minutes (0: none), checked before each update; the run stops at this or --total-timesteps, whichever comes first"})
    total_timesteps: int = field(default=100_000_000, metadata={"help": "learner decisions (summed over the games) to train for at most"})
    threads: int = field(default=1, metadata={"help": "torch's CPU threads (0: torch's default); on a CPU shared with other jobs, 2 threads ran 10-30x slower than 1 here (threads spinning for a busy core)"})
    device: str = field(default="cpu", metadata={"help": "torch device of the env's engine and the networks ('cpu', 'cuda')"})
    log_every: int = field(default=10, metadata={"help": "print the metrics every this many updates (0: never)"})
    tensorboard: str | None = field(default=None, metadata={"help": "a directory for TensorBoard event files (needs the tensorboard package)"})
    save: str | None = field(default=None, metadata={"help": "where to save the trained agent's state dict (torch.save)"})
    export: str | None = field(default=None, metadata={"help": recipes.EXPORT_HELP, "type": recipes.export_path})
    snapshot_steps: tuple[int, ...] = field(default=(), metadata={"help": "write the actor to --snapshot-dir the first time the step count reaches each of these (the learning protocol's contract: docs/learning/index.md)"})
    snapshot_dir: str | None = field(default=None, metadata={"help": "where the snapshots go, as step-<steps>.pt pisti-export files"})

    # Game
    opponent: str = field(default="greedy", metadata={"help": "the other seat's player: 'random', 'greedy' or a checkpoint path (players with a batched form)"})
    num_players: int = field(default=2, metadata={"help": "players at the table (R3)"})

    # Rollout
    num_envs: int = field(default=1024, metadata={"help": "games played side by side in the vector env"})
    num_steps: int = field(default=32, metadata={"help": "vector steps per rollout: a rollout holds num_envs * num_steps decisions"})

    # Network
    hidden_sizes: tuple[int, ...] = field(default=(128, 128), metadata={"help": "widths of the actor's and the critic's hidden layers (tanh); two separate MLPs"})

    # PPO
    learning_rate: float = field(default=1e-3, metadata={"help": "Adam's step size at the start"})
    anneal_lr: bool = field(default=True, metadata={"help": "decay the learning rate linearly to 0 over the budget (steps or minutes, whichever is further along)"})
    gamma: float = field(default=1.0, metadata={"help": "discount per learner decision (episodes are one hand, rewards are points: 1.0, no discount)"})
    gae_lambda: float = field(default=0.8, metadata={"help": "GAE's lambda: 0 bootstraps from the next value only (low variance, biased), 1 uses the whole return (unbiased, noisy)"})
    reward_scale: float = field(default=0.3, metadata={"help": "rewards (points) are multiplied by this before the value fit, bringing returns near unit scale"})
    num_minibatches: int = field(default=8, metadata={"help": "minibatches per epoch over a rollout"})
    update_epochs: int = field(default=2, metadata={"help": "passes over each rollout"})
    norm_adv: bool = field(default=True, metadata={"help": "normalise the advantages per minibatch (mean 0, std 1)"})
    clip_coef: float = field(default=0.2, metadata={"help": "PPO's clip range of the probability ratio (and of the value update with --clip-vloss)"})
    clip_vloss: bool = field(default=True, metadata={"help": "clip the value update around the rollout's value prediction"})
    ent_coef: float = field(default=0.01, metadata={"help": "weight of the entropy bonus (entropy over the legal actions only)"})
    vf_coef: float = field(default=0.5, metadata={"help": "weight of the value loss"})
    max_grad_norm: float = field(default=0.5, metadata={"help": "clip the global gradient norm to this"})
    target_kl: float | None = field(default=None, metadata={"help": "stop an update's epochs early once the approximate KL exceeds this (default: never)"})

    # Evaluation
    eval_deals: int = field(default=2000, metadata={"help": "duplicate deals per evaluation at the end (each played from both seats; 0: no evaluation)"})
    eval_seed: int = field(default=0, metadata={"help": "seed of the evaluation's deals"})

    def __post_init__(self) -> None:
        positive = ("num_envs", "num_steps", "num_minibatches", "update_epochs", "total_timesteps", "num_players")
        for name in positive:
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{name} must be a positive int, got {value!r}")
        if self.batch_size % self.num_minibatches:
            raise ValueError(f"num_envs * num_steps ({self.batch_size}) must divide into num_minibatches ({self.num_minibatches})")
        if not self.minutes >= 0:
            raise ValueError(f"minutes must be >= 0 (0: no wall-clock budget), got {self.minutes!r}")
        if not self.hidden_sizes or any(int(h) < 1 for h in self.hidden_sizes):
            raise ValueError(f"hidden_sizes must be one or more positive widths, got {self.hidden_sizes!r}")
        if not 0.0 <= self.gae_lambda <= 1.0 or not 0.0 <= self.gamma <= 1.0:
            raise ValueError(f"gamma and gae_lambda must be in [0, 1], got {self.gamma!r}, {self.gae_lambda!r}")

    @property
    def batch_size(self) -> int:
        """Decisions per rollout."""
        return self.num_envs * self.num_steps

    @property
    def minibatch_size(self) -> int:
        return self.batch_size // self.num_minibatches


def parse_args(argv: Sequence[str] | None = None) -> Args:
    """`Args` from the command line: one flag per field, its help from the field."""
    parser = recipes.recipe_parser(__doc__)
    for f in dataclasses.fields(Args):
        flag, kind = "--" + f.name.replace("_", "-"), f.type
        options: dict[str, Any] = {"default": f.default, "help": f.metadata["help"] + " (default: %(default)s)"}
        if kind == "bool":
            parser.add_argument(flag, action=argparse.BooleanOptionalAction, **options)
        elif kind == "tuple[int, ...]":
            parser.add_argument(flag, type=int, nargs="+", **options)
        else:
            convert = {"int": int, "float": float, "str": str, "str | None": str, "float | None": float}[kind]
            parser.add_argument(flag, type=f.metadata.get("type", convert), **options)
    values = vars(parser.parse_args(argv))
    values["hidden_sizes"] = tuple(values["hidden_sizes"])
    values["snapshot_steps"] = tuple(values["snapshot_steps"])
    if values["snapshot_steps"] and values["snapshot_dir"] is None:
        parser.error("--snapshot-steps needs --snapshot-dir")
    return Args(**values)


# ---------------------------------------------------------------------------- the agent
def layer(inputs: int, outputs: int, gain: float = math.sqrt(2)) -> nn.Linear:
    """A linear layer with orthogonal weights and zero biases (CleanRL's initialisation)."""
    linear = nn.Linear(inputs, outputs)
    nn.init.orthogonal_(linear.weight, gain)
    nn.init.zeros_(linear.bias)
    return linear


def mlp(inputs: int, hidden: Sequence[int], outputs: int, output_gain: float) -> nn.Sequential:
    layers: list[nn.Module] = []
    for width in hidden:
        layers += [layer(inputs, width), nn.Tanh()]
        inputs = width
    return nn.Sequential(*layers, layer(inputs, outputs, output_gain))


class Agent(nn.Module):
    """A masked categorical actor and a value critic: two MLPs over the observation vector.

    The actor's logits of illegal actions are set to the most negative float before the softmax,
    so they have probability exactly 0 (sampled never, no NaN in the entropy)."""

    def __init__(self, observation_size: int, num_actions: int, hidden_sizes: Sequence[int]) -> None:
        super().__init__()
        self.actor = mlp(observation_size, hidden_sizes, num_actions, output_gain=0.01)  # near uniform at first
        self.critic = mlp(observation_size, hidden_sizes, 1, output_gain=1.0)

    def value(self, observation: torch.Tensor) -> torch.Tensor:
        return self.critic(observation).squeeze(-1)

    def log_probs(self, observation: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        """(B, actions) log-probabilities; illegal actions get probability 0."""
        logits = self.actor(observation)
        return torch.log_softmax(logits.masked_fill(~mask, torch.finfo(logits.dtype).min), dim=-1)

    def act(self, observation: torch.Tensor, mask: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """Sample an action per row: ``(actions, their log-probabilities, values)``."""
        logp = self.log_probs(observation, mask)
        action = torch.multinomial(logp.exp(), 1).squeeze(1)
        return action, logp.gather(1, action[:, None]).squeeze(1), self.value(observation)

    def evaluate(
        self, observation: torch.Tensor, mask: torch.Tensor, action: torch.Tensor
    ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """For the update: ``(log-probabilities of action, entropies over legal actions, values)``."""
        logp = self.log_probs(observation, mask)
        entropy = -(logp.exp() * logp).masked_fill(~mask, 0.0).sum(-1)
        return logp.gather(1, action[:, None]).squeeze(1), entropy, self.value(observation)


# ---------------------------------------------------------------------------- the env
def make_envs(args: Args) -> gymnasium.vector.VectorEnv:
    """The training env: ``num_envs`` single hands, the learner against ``opponent``, torch outputs."""
    return gymnasium.make_vec(
        pisti_env.GYM_ENV_ID, num_envs=args.num_envs, opponent=args.opponent, output="torch",
        device=args.device, num_players=args.num_players, target=None,
    )


# ---------------------------------------------------------------------------- training
def gae(
    rewards: torch.Tensor, values: torch.Tensor, dones: torch.Tensor, next_value: torch.Tensor,
    gamma: float, gae_lambda: float,
) -> tuple[torch.Tensor, torch.Tensor]:
    """Generalised advantage estimation over a (T, N) rollout; ``dones[t]``: the episode ended
    with transition ``t`` (SAME_STEP autoreset: the next row is a new episode). ``next_value``:
    the value of the observation after the last step. Returns ``(advantages, returns)``."""
    advantages = torch.zeros_like(rewards)
    last = torch.zeros_like(next_value)
    for t in reversed(range(rewards.shape[0])):
        following = next_value if t == rewards.shape[0] - 1 else values[t + 1]
        live = 1.0 - dones[t].float()
        delta = rewards[t] + gamma * following * live - values[t]
        last = delta + gamma * gae_lambda * live * last
        advantages[t] = last
    return advantages, advantages + values


class Logger:
    """Prints the metrics every ``log_every`` updates and writes every update to TensorBoard."""

    def __init__(self, args: Args) -> None:
        self.every, self.writer = args.log_every, None
        if args.tensorboard:
            from torch.utils.tensorboard import SummaryWriter

            self.writer = SummaryWriter(args.tensorboard)
            self.writer.add_text("hyperparameters", "\n".join(f"{k}: {v}" for k, v in dataclasses.asdict(args).items()))

    def log(self, update: int, step: int, metrics: dict[str, float]) -> None:
        if self.writer is not None:
            for name, value in metrics.items():
                self.writer.add_scalar(name, value, step)
        if self.every and update % self.every == 0:
            shown = ", ".join(f"{name.split('/')[1]} {value:.4g}" for name, value in metrics.items())
            print(f"update {update} step {step:,}: {shown}", flush=True)

    def close(self) -> None:
        if self.writer is not None:
            self.writer.close()


def train(
    args: Args, envs: gymnasium.vector.VectorEnv | None = None, on_update: Callable[[dict[str, float]], None] | None = None
) -> tuple[Agent, list[dict[str, float]]]:
    """PPO on the vector env (``make_envs(args)`` unless ``envs`` is given, which must give torch
    outputs). Returns the agent and each update's metrics (also passed to ``on_update``):

    * ``charts/episodic_return``: mean return (points) of the episodes finished in the rollout;
      ``charts/episodes``: how many; ``charts/learning_rate``; ``charts/SPS``: learner
      decisions per second of training so far (rollouts and updates);
    * ``losses/policy_loss`` (clipped surrogate), ``losses/value_loss``, ``losses/entropy``
      (mean over legal actions), ``losses/old_approx_kl`` and ``losses/approx_kl`` (two
      estimators of KL(old || new)), ``losses/clipfrac`` (share of samples whose ratio was
      clipped), ``losses/explained_variance`` (of the returns by the values, before the update),
      all means over the update's last epoch's minibatches.
    """
    if args.threads:
        torch.set_num_threads(args.threads)
    torch.manual_seed(args.seed)  # the network's initialisation, the sampling, the minibatches
    device = torch.device(args.device)
    envs = make_envs(args) if envs is None else envs
    observation, _ = envs.reset(seed=args.seed)
    if not isinstance(observation["observation"], torch.Tensor) or envs.num_envs != args.num_envs:
        raise TypeError(f"train needs a vector env of args.num_envs games with output='torch', got "
                        f"{envs.num_envs} games with {type(observation['observation']).__name__} observations")
    obs, mask = observation["observation"], observation["action_mask"].bool()
    obs_size, num_actions = obs.shape[1], mask.shape[1]
    agent = Agent(obs_size, num_actions, args.hidden_sizes).to(device)
    optimizer = torch.optim.Adam(agent.parameters(), lr=args.learning_rate, eps=1e-5)
    logger = Logger(args)

    T, N = args.num_steps, args.num_envs
    buf_obs = torch.zeros(T, N, obs_size, device=device)
    buf_mask = torch.zeros(T, N, num_actions, dtype=torch.bool, device=device)
    buf_action = torch.zeros(T, N, dtype=torch.long, device=device)
    buf_logp, buf_value, buf_reward = (torch.zeros(T, N, device=device) for _ in range(3))
    buf_done = torch.zeros(T, N, dtype=torch.bool, device=device)
    episode_return = torch.zeros(N, device=device)  # points so far in each game's episode

    budget = args.minutes * 60.0 if args.minutes > 0 else math.inf
    start, step, history = time.perf_counter(), 0, []
    from training.algorithms.recipe import Snapshots  # the learning protocol's snapshots (--snapshot-steps)

    snapshots = Snapshots(args.snapshot_steps, args.snapshot_dir, dict(num_players=args.num_players, target=None),
                          "cleanrl-ppo", "examples/cleanrl_ppo_vector.py", args.batch_size)
    num_updates = math.ceil(args.total_timesteps / args.batch_size)
    for update in range(1, num_updates + 1):
        elapsed = time.perf_counter() - start
        if elapsed >= budget:
            break
        progress = max((update - 1) / num_updates, elapsed / budget)  # how far along the budget is
        learning_rate = args.learning_rate * (1.0 - progress) if args.anneal_lr else args.learning_rate
        optimizer.param_groups[0]["lr"] = learning_rate

        # Rollout: T vector steps, the network sampling on torch tensors straight from the env.
        finished, finished_return = 0, torch.zeros((), device=device)
        with torch.no_grad():
            for t in range(T):
                buf_obs[t], buf_mask[t] = obs, mask
                action, buf_logp[t], buf_value[t] = agent.act(obs, mask)
                buf_action[t] = action
                observation, reward, terminated, truncated, _ = envs.step(action)
                obs, mask = observation["observation"], observation["action_mask"].bool()
                done = terminated | truncated
                buf_reward[t], buf_done[t] = reward * args.reward_scale, done
                episode_return += reward
                finished_return += episode_return[done].sum()
                finished += int(done.sum())
                episode_return.masked_fill_(done, 0.0)
            step += args.batch_size
            advantages, returns = gae(buf_reward, buf_value, buf_done, agent.value(obs), args.gamma, args.gae_lambda)

        # Update: update_epochs passes over the rollout in shuffled minibatches.
        b_obs, b_mask = buf_obs.view(-1, obs_size), buf_mask.view(-1, num_actions)
        b_action, b_logp, b_value = buf_action.view(-1), buf_logp.view(-1), buf_value.view(-1)
        b_adv, b_ret = advantages.view(-1), returns.view(-1)
        for epoch in range(args.update_epochs):
            stats: dict[str, list[float]] = {k: [] for k in ("policy_loss", "value_loss", "entropy", "old_approx_kl", "approx_kl", "clipfrac")}
            for idx in torch.randperm(args.batch_size, device=device).split(args.minibatch_size):
                new_logp, entropy, new_value = agent.evaluate(b_obs[idx], b_mask[idx], b_action[idx])
                log_ratio = new_logp - b_logp[idx]
                ratio = log_ratio.exp()
                with torch.no_grad():
                    stats["old_approx_kl"].append(float((-log_ratio).mean()))
                    stats["approx_kl"].append(float(((ratio - 1) - log_ratio).mean()))
                    stats["clipfrac"].append(float(((ratio - 1.0).abs() > args.clip_coef).float().mean()))
                adv = b_adv[idx]
                if args.norm_adv:
                    adv = (adv - adv.mean()) / (adv.std() + 1e-8)
                policy_loss = torch.max(-adv * ratio, -adv * ratio.clamp(1 - args.clip_coef, 1 + args.clip_coef)).mean()
                if args.clip_vloss:
                    clipped = b_value[idx] + (new_value - b_value[idx]).clamp(-args.clip_coef, args.clip_coef)
                    value_loss = 0.5 * torch.max((new_value - b_ret[idx]) ** 2, (clipped - b_ret[idx]) ** 2).mean()
                else:
                    value_loss = 0.5 * ((new_value - b_ret[idx]) ** 2).mean()
                entropy_loss = entropy.mean()
                loss = policy_loss - args.ent_coef * entropy_loss + args.vf_coef * value_loss
                optimizer.zero_grad()
                loss.backward()
                nn.utils.clip_grad_norm_(agent.parameters(), args.max_grad_norm)
                optimizer.step()
                for name, value in (("policy_loss", policy_loss), ("value_loss", value_loss), ("entropy", entropy_loss)):
                    stats[name].append(value.item())
            if args.target_kl is not None and np.mean(stats["approx_kl"]) > args.target_kl:
                break

        variance = float(b_ret.var())
        explained = math.nan if variance == 0 else 1.0 - float((b_ret - b_value).var()) / variance
        metrics = {
            "charts/episodic_return": float(finished_return) / finished if finished else math.nan,
            "charts/episodes": float(finished),
            "charts/learning_rate": learning_rate,
            "charts/SPS": step / (time.perf_counter() - start),
            **{f"losses/{name}": float(np.mean(values)) for name, values in stats.items()},
            "losses/explained_variance": explained,
        }
        history.append(metrics)
        logger.log(update, step, metrics)
        snapshots.after_update(agent.actor, step)
        if on_update is not None:
            on_update(metrics)
    logger.close()
    return agent, history


# ---------------------------------------------------------------------------- evaluation
class AgentPlayer:
    """The trained actor as a harness player: the most likely legal action of the seat's own
    observation (``SeatView.observation()``, what ``pisti_v0`` would give it, R30)."""

    name = "cleanrl-ppo"

    def __init__(self, agent: Agent) -> None:
        self.agent = agent
        self.device = next(agent.parameters()).device

    def reset(self, seed: int | None = None) -> None:
        """Deterministic play: nothing to reseed."""

    def act(self, view: SeatView) -> int:
        observation = view.observation()
        obs = torch.as_tensor(observation["observation"], device=self.device)[None]
        mask = torch.as_tensor(observation["action_mask"], device=self.device).bool()[None]
        with torch.no_grad():
            return int(self.agent.log_probs(obs, mask).argmax(1))


def margins(agent: Agent, deals: int, seed: int = 0, num_players: int = 2) -> dict[str, dict[str, float]]:
    """The agent's mean score difference per hand (with its 95% CI half-width) against
    ``random`` and ``greedy`` on ``deals`` duplicate deals, through the evaluation harness."""
    was_training = agent.training
    agent.eval()
    try:
        return baseline_margins(AgentPlayer(agent), deals=deals, seed=seed, num_players=num_players)
    finally:
        agent.train(was_training)


def main(argv: Sequence[str] | None = None) -> None:
    args = parse_args(argv)
    progress = recipes.Progress("cleanrl_ppo_vector", steps=args.total_timesteps, seconds=args.minutes * 60.0)
    updates = [0]

    def show(metrics: dict[str, float]) -> None:
        updates[0] += 1
        progress.update(updates[0] * args.batch_size)

    agent, history = train(args, on_update=show)
    steps, per_second = len(history) * args.batch_size, history[-1]["charts/SPS"] if history else math.nan
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else math.nan  # others' jobs slow a shared CPU
    print(f"trained {steps:,} steps in {steps / per_second:.0f} s ({per_second:,.0f} steps/s, {len(history)} updates; "
          f"load average {load:.1f} on {os.cpu_count()} CPUs)")
    if args.save:
        torch.save(agent.state_dict(), args.save)
    if args.export:  # the actor alone, as pisti-export writes a policy: AgentPlayer's argmax play
        recipes.export_policy_file(agent.actor, args.export, settings=dict(num_players=args.num_players, target=None),
                                   name="cleanrl-ppo", recipe="examples/cleanrl_ppo_vector.py", steps=steps)
    if args.eval_deals:
        recipes.print_margins(margins(agent, args.eval_deals, args.eval_seed, args.num_players), args.eval_deals)


if __name__ == "__main__":
    main()
