"""``pisti-solve-claims SOURCE --out OUT``: a bluff policy with its claim game solved.

Writes OUT, a policy checkpoint whose card play is SOURCE's and whose R29 claims and answers
are the claim game's equilibrium (`training.bluff.claim_game`; metadata
``solved_claims``), no training step taken: SOURCE's answer and claim heads (or their
fictitious-play average), if it has them, are dropped. It plays as SOURCE saved it to play
(``sample_bluffs``). OUT's training budget is SOURCE's: copy SOURCE's ``lineage.json`` along
with a stage of 0 steps when shipping it (``pisti-exploit`` reads the budget there).

To train the card play around the solved claims instead, ``pisti-train --solved-claims
--init-from SOURCE``.

Example::

    pisti-solve-claims runs/bluff-c1/policy --claim-capture-value 3 --out runs/bluff-s1/policy
    pisti-solve-claims runs/bluff-s2/policy --claim-capture-value 5 --claim-capture-value-last-deal 1.5 --out runs/bluff-s3/policy
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path
from typing import Sequence

from pisti_env.tools.flags import ArgumentParser, bounded, checkpoint_dir, fail, writable_dir
from pisti_env.policies.claim_heads import without_claim_heads
from pisti_env.policies.metadata import CheckpointError
from pisti_env.policies.network import PolicyNetwork
from pisti_env.policies.spec import MAX_CAPTURE_VALUE, OPTIONAL, NetworkSpec, SpecError
from pisti_env.policies.weights import load_policy_weights

from training.trainer.weights import save_checkpoint


# What the new checkpoint does not take from SOURCE's metadata: the network fields (OUT's spec
# replaces them), the format fields and hashes save_checkpoint writes anew, and the name (OUT's own).
_DROPPED = (*OPTIONAL, "format", "format_version", "obs_version", "files", "name")


def write_solved_policy(source: str | os.PathLike, out: str | os.PathLike, capture_value: float = 0.0,
                        last_deal_capture_value: float | None = None) -> Path:
    """Write OUT (``out``, which must not exist) as ``source``'s policy with solved claims of
    ``capture_value``, and ``last_deal_capture_value`` on the hand's last deal (None: the same)
    (points, `SolvedClaims`); returns its path. ``ValueError`` for a policy outside the bluff variant, a bad capture value or an
    existing ``out``; [`CheckpointError`][pisti_env.policies.metadata.CheckpointError] for a bad ``source``."""
    out = Path(out)
    if out.exists():
        raise ValueError(f"{out} already exists (never overwritten): give a new --out")
    metadata, weights = load_policy_weights(source)
    if not metadata["settings"].get("bluff"):
        raise ValueError(f"{source} is not a bluff-variant policy (R29): it has no claims to solve")
    try:
        spec = NetworkSpec(NetworkSpec.from_metadata(metadata).settings, tuple(metadata["hidden_sizes"]),
                           solved_claims=True, claim_capture_value=capture_value,
                           claim_capture_value_last_deal=last_deal_capture_value)
    except SpecError as error:
        raise ValueError(str(error)) from None
    kept = {k: v for k, v in metadata.items() if k not in _DROPPED}
    kept.update(name=out.name, **spec.to_metadata())
    policy = without_claim_heads(weights)
    PolicyNetwork(spec).load_state_dict(policy)  # strict: every weight fits
    return save_checkpoint(out, {f"policy.{k}": v for k, v in policy.items()}, kept)


def build_parser() -> argparse.ArgumentParser:
    parser = ArgumentParser(prog="pisti-solve-claims", description=__doc__,
                            formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("source", type=checkpoint_dir, help="a bluff-variant policy checkpoint directory")
    parser.add_argument("--out", type=writable_dir, required=True,
                        help="the new policy checkpoint directory (must not exist yet)")
    parser.add_argument("--claim-capture-value", type=bounded(float, 0, MAX_CAPTURE_VALUE, name="points"),
                        default=0.0, dest="capture_value",
                        help="points a believed claim's capture is worth beyond its stake (as pisti-train's; "
                             "measure it with pisti-capture-value SOURCE); default 0: the stakes alone")
    parser.add_argument("--claim-capture-value-last-deal", type=bounded(float, 0, MAX_CAPTURE_VALUE, name="points"),
                        default=None, dest="capture_value_last_deal",
                        help="the capture value on the hand's last deal, where a capture leads to less; "
                             "default: --claim-capture-value's")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args = build_parser().parse_args(sys.argv[1:] if argv is None else argv)
    try:
        path = write_solved_policy(args.source, args.out, args.capture_value, args.capture_value_last_deal)
    except (ValueError, CheckpointError, OSError) as error:
        return fail("pisti-solve-claims", error)
    print(f"wrote {path}: {args.source}'s card play, claims and answers from the solved claim game")
    return 0


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
