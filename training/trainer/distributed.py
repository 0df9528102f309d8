"""Data-parallel training over processes with ``torch.distributed`` (``torchrun``).

``torchrun --nproc_per_node N -m training.trainer ...`` (or ``pisti-train --nproc N``, which
launches it) starts N ranks of the same run. ``--envs`` stays the *global* number of games: rank
``r`` plays its own ``envs / N`` of them, on its own engine with its own seed stream (decks and
sampling), and learns from its own decisions; the gradients are summed over the ranks
(``all_reduce``; gloo on the CPU, NCCL on GPUs), so every rank takes the same optimizer step and
the networks stay identical. Rank 0 alone writes the logs and checkpoints.

An update is the update one process would make from the union of the ranks' rollouts: the
learner's decisions of all ranks are ordered as one rollout of ``envs`` games (rank ``r``'s games
are slots ``r * envs / N ...`` of it), one permutation (drawn from a generator all ranks seed
alike) cuts them into the global minibatches, and each rank takes its share of each. Losses are
sums over a rank's share divided by the global minibatch's size, advantages are normalised
with the global minibatch's mean and standard deviation, so the summed gradients are those of
the global minibatch (see ``tests/trainer/test_distributed.py``). With one process nothing changes.

``--resume`` in a distributed run restores the networks, optimizer, opponent pool and counters
from the checkpoint (rank 0 writes it, every rank reads it); rank 0 also takes back its games in
flight, the other ranks start theirs afresh from a seed stream keyed by the update (their games
are not in the checkpoint), so a resumed distributed run is not bit-identical to an
uninterrupted one; a one-process resume still is. Each rank keeps its own opponent records
(margins) from its own games; rank 0's are saved.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass
from typing import TYPE_CHECKING, Iterable, Iterator

import numpy as np
import torch

if TYPE_CHECKING:
    from .train import Trainer

ADV_EPS = 1e-8  # keeps the advantage normalisation finite when a minibatch's advantages are equal
MINIBATCH_STREAM = 1_048_576  # seed-stream word of the minibatch permutations (ranks use 0 .. world-1)


def stream_seed(seed: int, *parts: int) -> int:
    """A 31-bit seed derived from ``seed`` and ``parts`` (unrelated for neighbouring parts)."""
    return int(np.random.SeedSequence([int(seed) & 0xFFFFFFFFFFFFFFFF, *parts]).generate_state(1)[0] & 0x7FFFFFFF)


class Shard:
    """One process's part of a run; this class is the whole run in one process (nothing is
    exchanged). `DistributedShard` is a rank of a distributed run."""

    rank, world, main = 0, 1, True

    def games(self, num_envs: int, seed: int) -> tuple[int, int]:
        """This process's number of games and the seed of its decks and sampling."""
        return num_envs, seed

    def device(self, device: str) -> str:
        """The torch device this process uses for ``device``."""
        return device

    def minibatches(self, learner: torch.Tensor, shape: tuple[int, int], num_minibatches: int,
                    generator: torch.Generator) -> Iterator[torch.Tensor]:
        """One epoch's minibatches of this process's learner decisions (flat indices into its
        ``(T, B)`` rollout): a random permutation of them cut into ``num_minibatches`` parts."""
        n = learner.numel()
        size = max(1, -(-n // num_minibatches))
        order = learner[torch.randperm(n, generator=generator, device=learner.device)]
        for begin in range(0, n, size):
            yield order[begin : begin + size]

    def total(self, count: int) -> int:
        """``count`` summed over the processes."""
        return count

    def normalize(self, advantages: torch.Tensor) -> torch.Tensor:
        """Advantages of a minibatch share, normalised over the whole minibatch."""
        if advantages.numel() <= 1:
            return advantages
        return (advantages - advantages.mean()) / (advantages.std() + ADV_EPS)

    def mean(self, values: torch.Tensor) -> torch.Tensor:
        """This process's contribution to the minibatch mean of ``values`` (its share's terms)."""
        return values.mean()

    def reduce(self, parameters: Iterable[torch.nn.Parameter], stats: torch.Tensor) -> torch.Tensor:
        """Sum the gradients and the loss figures ``stats`` over the processes; returns ``stats``."""
        return stats

    def learn_generator(self, trainer: "Trainer") -> torch.Generator:
        """The generator of the minibatch permutations (one process: the trainer's own)."""
        return trainer.generator

    def resumed(self, update: int) -> "Shard":
        """This process's part of a run resumed at ``update``."""
        return self

    def barrier(self) -> None:
        """Wait until every process gets here (one process: at once)."""

    def any_rank(self, flag: bool) -> bool:
        """Whether ``flag`` is true on any process (every process must ask, at the same
        point): how the ranks agree to pause after the same update."""
        return flag

    def keeps_games(self, saved_games: int, games: int) -> bool:
        """Whether a resumed trainer takes the checkpoint's games in flight (and its sampling
        generator): one process, when the checkpoint holds as many games as it plays (else its
        games start afresh: a checkpoint of a distributed run holds rank 0's games only)."""
        return saved_games == games


LOCAL = Shard()


@dataclass
class DistributedShard(Shard):
    """Rank ``rank`` of ``world`` processes (a process group is initialised).

    Attributes:
        rank, world: this process's rank and the number of processes.
        local_rank: its rank on this node (its GPU).
        epoch: the update a resumed run starts from (0: a new run); it keys the games' seeds.
    """

    rank: int
    world: int
    local_rank: int = 0
    epoch: int = 0
    _minibatch_size: int = 0

    @property
    def main(self) -> bool:  # type: ignore[override]
        return self.rank == 0

    def games(self, num_envs: int, seed: int) -> tuple[int, int]:
        if num_envs % self.world:
            raise ValueError(f"--envs {num_envs} must be a multiple of the number of processes ({self.world})")
        if self.rank == 0 and self.epoch == 0:
            return num_envs // self.world, seed  # rank 0 of a new run plays what one process would
        return num_envs // self.world, stream_seed(seed, self.rank, self.epoch)

    def device(self, device: str) -> str:
        return f"cuda:{self.local_rank}" if device == "cuda" else device

    def _sum(self, tensor: torch.Tensor) -> torch.Tensor:
        """``tensor`` summed over the ranks, in place (through the GPU with NCCL)."""
        if torch.distributed.get_backend() == "nccl" and not tensor.is_cuda:
            moved = tensor.cuda()
            torch.distributed.all_reduce(moved)
            return tensor.copy_(moved)
        torch.distributed.all_reduce(tensor)
        return tensor

    def minibatches(self, learner, shape, num_minibatches, generator):
        T, B = shape
        dev = learner.device
        # Learner decisions per step of every rank: the global rollout's order is step, rank, game.
        mine = torch.bincount(torch.div(learner, B, rounding_mode="floor"), minlength=T)
        per_rank = torch.zeros(self.world, T, dtype=torch.long, device=dev)
        per_rank[self.rank] = mine
        per_rank = self._sum(per_rank)
        before = per_rank.sum(0).cumsum(0) - per_rank.sum(0) + per_rank[: self.rank].sum(0)  # (T,)
        t = torch.div(learner, B, rounding_mode="floor")
        first = torch.searchsorted(learner, t * B)  # index in ``learner`` of step t's first decision
        position = before[t] + torch.arange(learner.numel(), device=dev) - first
        n = int(per_rank.sum())
        owner = torch.full((n,), -1, dtype=torch.long, device=dev)
        owner[position] = learner
        size = max(1, -(-n // num_minibatches))
        order = owner[torch.randperm(n, generator=generator, device=dev)]
        for begin in range(0, n, size):
            share = order[begin : begin + size]
            self._minibatch_size = min(size, n - begin)
            yield share[share >= 0]

    def total(self, count):
        return int(self._sum(torch.tensor([count])).item())

    def normalize(self, advantages):
        k = self._minibatch_size
        if k <= 1:
            return advantages
        mean = self._sum(advantages.sum().reshape(1).double()) / k
        var = self._sum(((advantages.double() - mean) ** 2).sum().reshape(1)) / (k - 1)
        return ((advantages - mean.to(advantages.dtype)) / (var.sqrt().to(advantages.dtype) + ADV_EPS))

    def mean(self, values):
        return values.sum() / self._minibatch_size

    def reduce(self, parameters, stats):
        params = [p for p in parameters if p.requires_grad]
        for p in params:
            if p.grad is None:  # a share without a decision touching it
                p.grad = torch.zeros_like(p)
        flat = torch.cat([p.grad.reshape(-1) for p in params] + [stats.to(params[0].grad.dtype)])
        self._sum(flat)
        offset = 0
        for p in params:
            p.grad.copy_(flat[offset : offset + p.numel()].view_as(p))
            offset += p.numel()
        return flat[offset:]

    def learn_generator(self, trainer):
        # The same permutation on every rank: keyed by the run's seed and the update.
        seed = stream_seed(trainer.config.seed, MINIBATCH_STREAM, trainer.update)
        return torch.Generator(device=trainer.device).manual_seed(seed)

    def resumed(self, update):
        return dataclasses.replace(self, epoch=update)

    def barrier(self):
        torch.distributed.barrier()

    def any_rank(self, flag):
        return bool(self._sum(torch.tensor([int(flag)])).item())

    def keeps_games(self, saved_games, games):
        return self.rank == 0 and saved_games == games  # the games rank 0 saved: its own


def launched() -> bool:
    """This process was started by ``torchrun`` with more than one process."""
    return int(os.environ.get("WORLD_SIZE", "1")) > 1


def init(device: str) -> DistributedShard:
    """Join the process group ``torchrun`` set up (its ``RANK``, ``WORLD_SIZE``,
    ``MASTER_ADDR``...): NCCL for a CUDA ``device``, gloo otherwise."""
    backend = "nccl" if device.startswith("cuda") else "gloo"
    local_rank = int(os.environ.get("LOCAL_RANK", "0"))
    if backend == "nccl":
        torch.cuda.set_device(local_rank)
    torch.distributed.init_process_group(backend=backend)
    return DistributedShard(torch.distributed.get_rank(), torch.distributed.get_world_size(), local_rank)


def finish() -> None:
    """Leave the process group (if one was joined)."""
    if torch.distributed.is_available() and torch.distributed.is_initialized():
        torch.distributed.destroy_process_group()


def torchrun_command(nproc: int, argv: list[str], port: int, python: str) -> list[str]:
    """The ``torchrun`` command that runs ``pisti-train argv`` on ``nproc`` processes of this
    machine, rendezvous on 127.0.0.1:``port``."""
    if isinstance(nproc, bool) or not isinstance(nproc, int) or nproc < 1:
        raise ValueError(f"--nproc must be an int >= 1, got {nproc!r}")
    return [python, "-m", "torch.distributed.run", "--nnodes", "1", "--nproc-per-node", str(nproc),
            "--master-addr", "127.0.0.1", "--master-port", str(port), "-m", "training.trainer", *argv]


def free_port() -> int:
    """A TCP port free on the loopback address now."""
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]
