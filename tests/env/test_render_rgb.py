"""``render_mode="rgb_array"``: pictures of the table as frames, Gymnasium's ``RecordVideo`` and
PettingZoo's ``render_test``. Needs the ``pictures`` extra (CairoSVG; MoviePy for the video):
skipped without it."""

from __future__ import annotations

import random
import sys

import numpy as np
import pytest

import gymnasium
import pisti_env
from pisti_env import Game, make_settings
from pisti_env.agents import SeatView

cairosvg = pytest.importorskip("cairosvg", reason="the pictures extra (CairoSVG) is not installed")

from pisti_env.drawing import HEIGHT, WIDTH, open_frame, seat_frame  # noqa: E402

from helpers import legal_from_mask  # noqa: E402


def check_frame(frame, height: int = HEIGHT, width: int = WIDTH) -> None:
    assert isinstance(frame, np.ndarray) and frame.dtype == np.uint8 and frame.shape == (height, width, 3)
    assert frame.std() > 10, "a blank frame"


def test_aec_rgb_array_frames_follow_the_game():
    e = pisti_env.env(render_mode="rgb_array", target=None)
    assert "rgb_array" in e.metadata["render_modes"]
    with pytest.raises(RuntimeError, match="reset"):
        pisti_env.raw_env(render_mode="rgb_array").render()  # (the wrapped env stops this call itself)
    e.reset(seed=1)
    first = e.render()
    check_frame(first)
    assert np.array_equal(e.render(), first), "the same state draws the same frame"
    e.step(legal_from_mask(e.observe(e.agent_selection))[0])
    second = e.render()
    check_frame(second)
    assert not np.array_equal(first, second), "two different states drew the same frame"


def test_gym_rgb_array_and_sizes():
    env = gymnasium.make("pisti/Pisti-v0", opponent="greedy", render_mode="rgb_array", target=None)
    obs, _ = env.reset(seed=0)
    frame = env.render()
    check_frame(frame)
    env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert not np.array_equal(env.render(), frame)
    g = env.unwrapped.game
    check_frame(open_frame(g, ["a", "b"], width=320, height=240), 240, 320)


def test_seat_frame_does_not_depend_on_unknown_cards():
    """R30–R31 on pixels: the stock's order (unknown to every seat) changed, same moves: the
    seat's frame is the same, the spectator's is not (the hands differ)."""
    settings = make_settings(target=None)
    g = Game(settings, seed=5)
    rng = random.Random(5)
    for _ in range(6):
        g.step(rng.choice(g.legal_actions()))
    seat = g.turn
    deck = list(g.deck)
    unknown = sorted(g.unknown_cards(seat), key=deck.index)
    order = [deck.index(p) for p in unknown]
    shuffled = unknown[1:] + unknown[:1]  # a rotation: every unknown card moves
    new_deck = list(deck)
    for i, card in zip(order, shuffled):
        new_deck[i] = card
    g2 = Game(settings, deck=new_deck, dealer=g.dealer)
    for s, card in g.history:
        g2.step(card)
    names = ["a", "b"]
    assert np.array_equal(seat_frame(SeatView(g, seat), names), seat_frame(SeatView(g2, seat), names))
    assert not np.array_equal(open_frame(g, names), open_frame(g2, names))


def test_pettingzoo_render_test():
    from pettingzoo.test import render_test

    render_test(lambda render_mode=None: pisti_env.env(render_mode=render_mode, target=None))


def test_record_video_writes_a_playable_video(tmp_path):
    pytest.importorskip("moviepy", reason="RecordVideo needs MoviePy (the pictures extra)")
    from gymnasium.wrappers import RecordVideo

    env = gymnasium.make("pisti/Pisti-v0", opponent="greedy", render_mode="rgb_array", target=None)
    env = RecordVideo(env, str(tmp_path / "videos"), episode_trigger=lambda episode: episode == 0, disable_logger=True)
    obs, _ = env.reset(seed=3)
    steps, done = 0, False
    while not done:
        obs, _, terminated, truncated, _ = env.step(int(np.flatnonzero(obs["action_mask"])[-1]))
        steps += 1
        done = terminated or truncated
    env.close()
    videos = list((tmp_path / "videos").glob("*.mp4"))
    assert len(videos) == 1 and videos[0].stat().st_size > 1000
    # Playable: decode it again and count its frames (one per reset and step).
    import imageio.v3 as iio

    frames = iio.imread(videos[0], plugin="pyav") if _has("av") else list(_ffmpeg_frames(videos[0]))
    assert len(frames) == steps + 1
    assert frames[0].shape[:2] == (HEIGHT, WIDTH)


def _has(module: str) -> bool:
    try:
        __import__(module)
    except ImportError:
        return False
    return True


def _ffmpeg_frames(path):
    import imageio_ffmpeg

    reader = imageio_ffmpeg.read_frames(str(path))
    meta = next(reader)
    width, height = meta["size"]
    for raw in reader:
        yield np.frombuffer(raw, np.uint8).reshape(height, width, 3)


def test_missing_cairosvg_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "cairosvg", None)  # import cairosvg now raises ImportError
    e = pisti_env.env(render_mode="rgb_array")
    e.reset(seed=0)
    with pytest.raises(ImportError, match=r"pip install 'pisti\[pictures\]'"):
        e.render()
