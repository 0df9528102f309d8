"""The batched engine's outputs are pinned, and its ``"uint8"`` observation format is the float
one packed (issue 17 item 2).

* Digests: the whole output stream (seat, observation bytes, mask, rewards, flags, hand
  results, scores, winner) and the whole state (every field's dtype and bytes, as checkpoints
  save it) of a few seeded random games hash to the values the engine gave before its speed
  work (commit 3bf0a8d): making it faster changed nothing, bit for bit, -0.0 rewards included.
* ``observation_format="uint8"``: `pisti_env.batched.compact.expand` turns every packed
  observation into the float one, bit for bit, with the same masks, rewards and states, on
  every table, with bluffs (R29), written in place into a caller's buffer or fresh.
* Bad formats, buffers and packed inputs raise clear errors and change nothing.
"""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from pisti_env.batched import BatchedPisti  # noqa: E402
from pisti_env.batched.compact import CARD_BYTES, expand  # noqa: E402
from pisti_env.batched.state import FIELDS  # noqa: E402

# Digests of ``stream_digest`` computed with the engine of commit 3bf0a8d (before issue 17).
DIGESTS = {
    "2p-hand": (dict(num_players=2, target=None), "f4ec7641292ea77becd6985479742b23bf1cfba5f19d83beee3e5307efed5d21"),
    "4p-partners-match": (
        dict(num_players=4, target=61, win_margin=2),
        "687cc690f7b7b800d033604f47b063c06b8fd7f9f9dcde8ceaf8edfca80b104a",
    ),
    "3p-win-stock-bottom": (
        dict(num_players=3, target=41, reward="win", show_stock_bottom=True, last_card_pisti=False),
        "a37962435948e5216ca5d2ceac7eb164822f40889744a9a780545588e0441c02",
    ),
    "4p-solo-bluff": (
        dict(num_players=4, partnerships=False, target=None, bluff=True, bluff_jack_double=True),
        "f8c5fb255d2a2321b27d98ab33cc08777fc3bec070eb2f8dfff863b022feddd4",
    ),
    "2p-bluff-match": (
        dict(num_players=2, target=51, bluff=True, double_pisti=10, ten_diamonds_pisti_bonus=3),
        "adb350b5ce18d03b33a61d514c05e65f4b388f3e62b4ac9b20536cfce7452b04",
    ),
}


def random_actions(mask: torch.Tensor, rng: np.random.Generator) -> torch.Tensor:
    return torch.tensor([int(rng.choice(np.flatnonzero(m))) for m in mask.cpu().numpy()])


def stream_digest(settings: dict, batch: int = 32, steps: int = 160, seed: int = 5) -> str:
    """SHA-256 of every output and every state of ``steps`` steps of seeded random play."""
    engine = BatchedPisti(batch, seed=seed, **settings)
    out = engine.reset()
    rng = np.random.default_rng(seed)
    h = hashlib.sha256()
    for _ in range(steps):
        outputs = (out.seat, out.observation, out.action_mask, out.rewards, out.done, out.hand_over,
                   out.match_scores, out.winner, *out.hand_result.values())
        for x in outputs:
            h.update(x.contiguous().numpy().tobytes())
        for name in FIELDS:  # the state too (checkpoints save it field by field), dtypes included
            x = getattr(engine.state, name)
            h.update(str(x.dtype).encode() + x.contiguous().numpy().tobytes())
        out = engine.step(random_actions(out.action_mask, rng))
    return h.hexdigest()


@pytest.mark.parametrize("name", list(DIGESTS))
def test_outputs_and_states_are_bit_for_bit_those_before_the_speed_work(name):
    settings, digest = DIGESTS[name]
    assert stream_digest(settings) == digest


PACKED_CASES = [
    pytest.param(dict(num_players=2, target=None), id="2p-hand"),
    pytest.param(dict(num_players=3, target=41, show_stock_bottom=True, reward="win"), id="3p-match-stock-bottom"),
    pytest.param(dict(num_players=4, target=None, bluff=True), id="4p-partners-bluff"),
    pytest.param(dict(num_players=4, partnerships=False, target=None, bluff=True, bluff_jack_double=True,
                      show_stock_bottom=True), id="4p-solo-bluff-stock-bottom"),  # the most card features (15)
]


@pytest.mark.parametrize("settings", PACKED_CASES)
@pytest.mark.parametrize("in_place", [None, "buffer", "unaligned"], ids=["fresh", "in-place", "in-place-unaligned"])
def test_uint8_format_expands_to_the_float_observation_bit_for_bit(settings, in_place):
    """Whatever the buffer: with 2 players (rows of whole 16-byte units) the card block is
    gathered in place, unless the buffer's rows are not aligned to units (a row of a larger
    storage at an odd offset); then, and with 3 or 4 players, through a scratch buffer."""
    batch = 16
    floats = BatchedPisti(batch, seed=3, **settings)
    packed = BatchedPisti(batch, seed=3, **settings)
    k = floats.encoder.layout.num_card_features
    assert k <= CARD_BYTES
    size = packed.packed_observation_size
    buffer = {
        None: None,
        "buffer": packed.observation_buffer("uint8"),
        "unaligned": torch.zeros(batch, size + 4, dtype=torch.uint8)[:, 4:],  # rows 4 bytes off the units
    }[in_place]
    assert packed.packed_observation_size == CARD_BYTES * 52 + 4 * (floats.observation_size - 52 * k)
    a = floats.reset()
    b = packed.reset(observation_out=buffer, observation_format="uint8")
    rng = np.random.default_rng(3)
    ended = 0
    for _ in range(110):  # past two hand ends (48 moves each) and the restarts
        assert b.observation.dtype == torch.uint8
        assert b.observation.shape == (batch, packed.packed_observation_size)
        if buffer is not None:
            assert b.observation.data_ptr() == buffer.data_ptr()
        assert expand(b.observation, k).numpy().tobytes() == a.observation.numpy().tobytes()
        assert torch.equal(a.action_mask, b.action_mask)
        assert torch.equal(a.rewards, b.rewards) and torch.equal(a.done, b.done)
        for name in FIELDS:
            assert torch.equal(getattr(floats.state, name), getattr(packed.state, name)), name
        actions = random_actions(a.action_mask, rng)
        a = floats.step(actions)
        b = packed.step(actions, buffer, observation_format="uint8")
        ended += int(a.hand_over.sum())
    assert ended > 0  # hand ends and restarts were crossed
    # observe() and peek() speak the format too.
    seat = (packed.state.turn + 1) % packed.num_players
    assert torch.equal(expand(packed.observe(packed.state, seat, observation_format="uint8"), k),
                       floats.observe(floats.state, seat))
    assert torch.equal(expand(packed.peek(observation_format="uint8").observation, k), floats.peek().observation)


def test_bad_formats_and_buffers_raise_and_change_nothing():
    engine = BatchedPisti(4, seed=0, num_players=2, target=None)
    out = engine.reset()
    before = engine.state
    actions = out.action_mask.int().argmax(1)
    with pytest.raises(ValueError, match=r"observation_format must be one of 'float', 'uint8', got 'int8'"):
        engine.step(actions, observation_format="int8")
    with pytest.raises(ValueError, match=r"observation_format must be one of"):
        engine.observation_buffer("half")
    size = engine.packed_observation_size
    wrong = [
        torch.zeros(4, engine.observation_size),  # a float buffer for the uint8 format
        torch.zeros(4, size + 1, dtype=torch.uint8),
        torch.zeros(size, 4, dtype=torch.uint8).t(),  # right shape, rows not in one piece
        torch.zeros(4, size + 1, dtype=torch.uint8)[:, :size],  # rows whose rest cannot be read as float32
    ]
    for buffer in wrong:
        with pytest.raises(ValueError, match=rf"observation_out must be a uint8 tensor of shape \(4, {size}\)"):
            engine.step(actions, buffer, observation_format="uint8")
    with pytest.raises(ValueError, match=r"observation_out must be a float32 tensor of shape \(4, 556\)"):
        engine.step(actions, torch.zeros(4, size, dtype=torch.uint8))  # a packed buffer for the float format
    assert engine.state is before
    # Rows of a larger rollout storage are fine: each row is in one piece.
    storage = torch.zeros(4, 3, size, dtype=torch.uint8)
    engine.step(actions, storage[:, 1], observation_format="uint8")
    assert storage[:, 1].any() and not storage[:, 0].any()


def test_expand_rejects_what_is_not_a_packed_observation():
    with pytest.raises(TypeError, match="packed observations must be a uint8 tensor, got torch.float32"):
        expand(torch.zeros(2, 900), 10)
    with pytest.raises(TypeError, match="got list"):
        expand([[0] * 900], 10)
    with pytest.raises(ValueError, match=r"must have shape \(B, 832 \+ 4 \* size of the rest\), got \(2, 833\)"):
        expand(torch.zeros(2, 833, dtype=torch.uint8), 10)
    with pytest.raises(ValueError, match=r"must have shape"):
        expand(torch.zeros(900, dtype=torch.uint8), 10)
    for k in (0, 17, 2.0, True):
        with pytest.raises(ValueError, match=r"num_card_features must be an int in 1..16"):
            expand(torch.zeros(2, 900, dtype=torch.uint8), k)


@pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device here")
@pytest.mark.parametrize("bluff", [False, True])
def test_cuda_uint8_format_matches_cpu_float(bluff):
    """The packed format on the GPU against the float one on the CPU (the float format on the
    GPU is ``test_batched.py::test_cuda_matches_cpu``), in place, with the benchmark's policy."""
    from benchmarks.bench_batched import random_legal_actions

    cpu = BatchedPisti(64, seed=9, num_players=4, target=61, bluff=bluff)
    gpu = BatchedPisti(64, seed=9, num_players=4, target=61, bluff=bluff, device="cuda")
    k = cpu.encoder.layout.num_card_features
    buffer = gpu.observation_buffer("uint8")
    a, b = cpu.reset(), gpu.reset(observation_out=buffer, observation_format="uint8")
    generator = torch.Generator().manual_seed(0)
    for _ in range(300):
        assert torch.equal(a.observation, expand(b.observation, k).cpu())
        assert torch.equal(a.action_mask, b.action_mask.cpu())
        assert torch.equal(a.rewards, b.rewards.cpu())
        actions = random_legal_actions(a.action_mask, generator)
        a, b = cpu.step(actions), gpu.step(actions.cuda(), buffer, observation_format="uint8")
    for name in FIELDS:
        assert torch.equal(getattr(cpu.state, name), getattr(gpu.state, name).cpu()), name
