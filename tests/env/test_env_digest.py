"""``pisti_v0`` plays exactly as it did before its speed work (issue 17): observations (R30,
R31), masks (R9, R29), rewards, terminations and infos, byte for byte.

Each case plays seeded random games through ``pisti_env.env()`` or ``pisti_env.raw_env()``
with the canonical ``agent_iter``/``last``/``step`` loop and hashes, in order, everything the
env hands out: at every iteration the ``last()`` tuple, then ``observe()`` of *every* agent
(the seats not to move included), the whole ``rewards`` dict and ``agent_selection`` after
each step. Some cases take one illegal action in the middle (the ``"penalty"`` path of
``env()``). The digests were recorded from the code before any speed change (commit 3bf0a8d)
into ``tests/data/env_digests.json``; the test asserts the current code reproduces them.

To regenerate (only when a change of the encoding or of the rules is *meant*; then bump
``OBS_VERSION`` as observation.py says)::

    PYTHONPATH=$PWD python tests/env/test_env_digest.py --write

A second test checks that an observation handed out stays as it was after later steps (the
env may reuse buffers internally but never hands a caller an array it later writes).
"""

from __future__ import annotations

import hashlib
import json
import random
import struct
import sys
from pathlib import Path

import numpy as np
import pytest

import pisti_env

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from helpers import case  # noqa: E402

FIXTURE = Path(__file__).resolve().parents[1] / "data" / "env_digests.json"

# (case spec of helpers.case, maker, extra env kwargs, illegal step index or None)
CONFIGS: list[tuple[str, str, dict, int | None]] = [
    ("2p hand", "env", {}, None),
    ("2p hand", "raw_env", {}, None),
    ("2p 151", "env", {}, None),
    ("2p 51 margin2", "env", {"reward": "win"}, None),
    ("2p hand stock-bottom", "raw_env", {}, None),
    ("2p hand double10 bonus3 last-card-off", "env", {}, None),
    ("3p hand", "env", {}, None),
    ("3p 51", "env", {"reward": "win"}, None),
    ("4p-partners hand", "env", {}, None),
    ("4p-partners 51", "env", {}, None),
    ("4p-solo hand", "raw_env", {}, None),
    ("4p-solo 51", "env", {}, None),
    ("5p-2decks hand", "env", {}, None),
    ("6p-2decks hand stock-bottom", "env", {}, None),
    ("2p hand bluff", "env", {}, None),
    ("2p 51 jack-double bluff", "env", {}, None),
    ("3p hand last-card-off bluff", "raw_env", {}, None),
    ("4p-partners 51 bluff", "env", {"reward": "win"}, None),
    ("4p-solo hand stock-bottom bluff", "env", {}, None),
    ("6p-2decks hand bluff", "env", {}, None),
    # The illegal-action penalty (env()'s default): one in-range illegal action mid-episode.
    ("2p 51", "env", {}, 30),
    ("3p hand bluff", "env", {"reward": "win"}, 11),
    ("4p-partners hand", "env", {}, 17),
]
SEEDS = (0, 1, 2, 3, 4)


def config_id(spec: str, maker: str, extra: dict, illegal_at: int | None) -> str:
    words = [case(spec).id, maker] + [f"{k}={v}" for k, v in sorted(extra.items())]
    if illegal_at is not None:
        words.append(f"illegal@{illegal_at}")
    return " ".join(words)


def _feed_obs(h, obs) -> None:
    """Hash one observation dict: its keys, then each array's dtype, shape and bytes."""
    h.update(repr(sorted(obs)).encode())
    for key in ("observation", "action_mask"):
        arr = obs[key]
        h.update(f"{key}{arr.dtype.str}{arr.shape}".encode())
        h.update(np.ascontiguousarray(arr).tobytes())


def play_digest(spec: str, maker: str, extra: dict, illegal_at: int | None, seed: int) -> str:
    """The sha256 of everything one seeded random episode hands out (see the module docstring)."""
    e = getattr(pisti_env, maker)(**case(spec).kwargs, **extra)
    rng = random.Random(seed)
    h = hashlib.sha256()
    e.reset(seed=seed)
    decisions = 0
    for agent in e.agent_iter():
        obs, reward, term, trunc, info = e.last()
        h.update(agent.encode())
        _feed_obs(h, obs)
        h.update(struct.pack("<d??", reward, term, trunc))
        h.update(json.dumps(info, sort_keys=True).encode())
        for other in e.possible_agents:
            _feed_obs(h, e.observe(other))
        if term or trunc:
            e.step(None)
        else:
            legal = np.flatnonzero(obs["action_mask"]).tolist()
            if decisions == illegal_at:
                illegal = [a for a in range(e.action_space(agent).n) if a not in legal]
                with pytest.warns(UserWarning, match="illegal action"):
                    e.step(rng.choice(illegal))
            else:
                e.step(rng.choice(legal))
            decisions += 1
        h.update(struct.pack(f"<{len(e.rewards)}d", *e.rewards.values()))
        h.update(repr(sorted(e.rewards)).encode())
        h.update(str(e.agent_selection).encode())
    h.update(struct.pack("<q", decisions))
    return h.hexdigest()


def all_digests() -> dict[str, dict[str, str]]:
    return {
        config_id(*cfg): {str(seed): play_digest(*cfg, seed) for seed in SEEDS} for cfg in CONFIGS
    }


@pytest.mark.parametrize("cfg", CONFIGS, ids=[config_id(*c) for c in CONFIGS])
def test_R30_R31_env_outputs_unchanged_byte_for_byte(cfg) -> None:
    """Every observation, mask, reward, termination and info matches the recorded digests."""
    expected = json.loads(FIXTURE.read_text())[config_id(*cfg)]
    got = {str(seed): play_digest(*cfg, seed) for seed in SEEDS}
    assert got == expected


@pytest.mark.parametrize("spec", ["2p 51", "4p-partners hand bluff", "6p-2decks hand"])
@pytest.mark.parametrize("maker", ["env", "raw_env"])
def test_observations_handed_out_stay_valid_after_later_steps(spec: str, maker: str) -> None:
    """No array ``observe()``/``last()`` returned is written again by the env: copies taken at
    once equal the arrays at the end of the episode, and no two handed-out arrays share memory."""
    e = getattr(pisti_env, maker)(**case(spec).kwargs)
    rng = random.Random(5)
    e.reset(seed=5)
    kept: list[tuple[np.ndarray, np.ndarray]] = []
    for agent in e.agent_iter():
        obs, _reward, term, trunc, _info = e.last()
        for o in [obs] + [e.observe(a) for a in e.possible_agents]:
            for key in ("observation", "action_mask"):
                kept.append((o[key], o[key].copy()))
        if term or trunc:
            e.step(None)
        else:
            e.step(rng.choice(np.flatnonzero(obs["action_mask"]).tolist()))
    assert len(kept) > 100
    for arr, copy in kept:
        assert arr.tobytes() == copy.tobytes()
    arrays = [arr for arr, _ in kept]
    for i in range(0, len(arrays), 7):  # a sample of pairs: no shared buffers
        for j in range(i + 1, min(i + 40, len(arrays))):
            assert not np.shares_memory(arrays[i], arrays[j])


if __name__ == "__main__":
    if sys.argv[1:] != ["--write"]:
        sys.exit("usage: PYTHONPATH=$PWD python tests/env/test_env_digest.py --write")
    FIXTURE.write_text(json.dumps(all_digests(), indent=1, sort_keys=True) + "\n")
    print(f"wrote {FIXTURE}")
