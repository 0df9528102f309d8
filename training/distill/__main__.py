"""``python -m training.distill``: generate search targets from self-play of a policy, fit the
policy's network to them, and report the held-out decision gain (docs/research/search.md).

    python -m training.distill                                     # the recorded 'values' run
    python -m training.distill --games 2048 --held-out 512 --objective improve    # the 'improve' run
    python -m training.distill --games 64 --held-out 64 --epochs 1                # a smoke run

Targets come in batches of ``CHUNK`` hands, batch ``i`` from engine seed ``--seed + i``: the
held-out batches first, then the training ones.

``--out DIR`` saves the fitted network as a policy checkpoint (its output read as logits) with
its lineage in the metadata; nothing is shipped by this command.
"""

from __future__ import annotations

import argparse
import time

import torch

from pisti_env import Settings, make_settings
from pisti_env.agents import make_player
from pisti_env.tools.flags import positive_float, positive_int

from .fit import evaluate, fit
from .targets import SearchTargets, generate

CHUNK = 512  # games generated per batch of the engine


def targets_for(policy: object, settings: Settings, games: int, seed: int, log) -> SearchTargets:
    """Targets of ``games`` self-play hands in batches of ``CHUNK``, batch ``i`` from seed ``seed + i``."""
    parts = []
    for i, start in enumerate(range(0, games, CHUNK)):
        t = time.perf_counter()
        parts.append(generate(policy, settings, min(CHUNK, games - start), seed=seed + i))
        log(f"targets: {start + min(CHUNK, games - start):,}/{games:,} games, {len(parts[-1]):,} positions "
            f"in {time.perf_counter() - t:.0f} s")
    return SearchTargets.concat(parts)


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m training.distill", description=__doc__.splitlines()[0])
    parser.add_argument("--policy", default="pisti-2p", help="the rollout policy and the start of the fit (default pisti-2p)")
    parser.add_argument("--games", type=positive_int, default=5632, help="self-play hands for training targets")
    parser.add_argument("--held-out", type=positive_int, default=1024, help="self-play hands for held-out targets")
    parser.add_argument("--epochs", type=positive_int, default=3)
    parser.add_argument("--learning-rate", type=positive_float, default=3e-4)
    parser.add_argument("--objective", choices=("values", "improve"), default="values")
    parser.add_argument("--kl-coef", type=positive_float, default=1.0, help="the 'improve' objective's anchor")
    parser.add_argument("--seed", type=int, default=100, help="the first batch's engine seed (default 100)")
    parser.add_argument("--fit-seed", type=int, default=0, help="seeds the minibatch order (default 0)")
    parser.add_argument("--threads", type=positive_int, default=1, help="torch threads (default 1)")
    parser.add_argument("--out", default=None, help="save the fitted network as a checkpoint here")
    args = parser.parse_args(argv)
    torch.set_num_threads(args.threads)
    torch.manual_seed(args.fit_seed)
    settings = make_settings(num_players=2, target=None)
    player = make_player(args.policy, settings=settings, play="argmax")
    held = targets_for(player, settings, args.held_out, args.seed, print)
    train = targets_for(player, settings, args.games, args.seed + -(-args.held_out // CHUNK), print)
    network = player.network
    k = network.card_features
    print("start:", {key: round(v, 4) for key, v in evaluate(network, held, k).items()})
    fit(network, train, held, k, epochs=args.epochs, learning_rate=args.learning_rate, seed=args.fit_seed,
        objective=args.objective, kl_coef=args.kl_coef)
    if args.out:
        from training.trainer.weights import save_checkpoint

        import json
        import sys

        from pisti_env.util.atomic import write_text_atomic

        keep = ("settings", "observation_size", "card_features", "hidden_sizes", "step")
        metadata = {key: player.metadata[key] for key in keep if key in player.metadata}
        metadata["name"] = f"{args.policy} fitted to search targets ({args.objective})"
        out = save_checkpoint(args.out, {f"policy.{k}": v for k, v in network.state_dict().items()}, metadata)
        # A staged policy's record (training.exploit.exploit.LINEAGE): its start and this stage.
        lineage = {"policy": args.policy, "total_training_steps": int(metadata.get("step", 0)),
                   "stages": [{"out": str(out), "steps": 0, "search_target_games": args.games + args.held_out,
                               "command": " ".join(["python -m training.distill", *(argv or sys.argv[1:])])}]}
        write_text_atomic(out / "lineage.json", json.dumps(lineage, indent=2) + "\n")
        print("wrote", out)


if __name__ == "__main__":
    main()
