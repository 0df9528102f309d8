"""``render_mode="rgb_array"``: pictures of the table as frames, Gymnasium's ``RecordVideo`` and
PettingZoo's ``render_test``.

Frames are drawn with Pillow on the base install (issue 50); each picture test runs with that
renderer and, where the ``pictures`` extra is installed, with CairoSVG rasterising the SVG
(``renderer="cairo"``), and the two are checked to draw the same picture. The video needs
MoviePy (the ``pictures`` extra): skipped without it. Gymnasium's and PettingZoo's checkers
without CairoSVG at all: ``test_library_checkers.py``."""

from __future__ import annotations

import random
import sys

import numpy as np
import pytest

import gymnasium
import pisti_env
from pisti_env import Game, make_settings
from pisti_env.agents import SeatView

from pisti_env.drawing import HEIGHT, WIDTH, open_frame, seat_frame
from pisti_env.drawing import pixels

from helpers import legal_from_mask

NAMES4 = ["north", "east", "south", "west"]


@pytest.fixture(params=["pillow", "cairo"])
def renderer(request) -> str:
    """Each renderer of a frame; CairoSVG's only where the pictures extra is installed."""
    if request.param == "cairo":
        pytest.importorskip("cairosvg", reason="the pictures extra (CairoSVG) is not installed")
    return request.param


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


def test_gym_rgb_array_and_sizes(renderer):
    env = gymnasium.make("pisti/Pisti-v0", opponent="greedy", render_mode="rgb_array", target=None)
    obs, _ = env.reset(seed=0)
    frame = env.render()
    check_frame(frame)
    env.step(int(np.flatnonzero(obs["action_mask"])[0]))
    assert not np.array_equal(env.render(), frame)
    g = env.unwrapped.game
    check_frame(open_frame(g, ["a", "b"], width=320, height=240, renderer=renderer), 240, 320)
    # Another ratio: the canvas scaled to fit, centred, black bars on the sides (an SVG viewBox's "meet").
    wide = open_frame(g, ["a", "b"], width=400, height=200, renderer=renderer)
    check_frame(wide, 200, 400)
    assert wide[:, :60].max() == 0 and wide[:, -60:].max() == 0 and wide[:, 200].min() > 0


def test_seat_frame_does_not_depend_on_unknown_cards(renderer):
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
    assert np.array_equal(seat_frame(SeatView(g, seat), names, renderer=renderer),
                          seat_frame(SeatView(g2, seat), names, renderer=renderer))
    assert not np.array_equal(open_frame(g, names, renderer=renderer), open_frame(g2, names, renderer=renderer))


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


def test_issue50_rgb_array_without_cairosvg_and_the_cairo_renderer_names_the_extra(monkeypatch):
    """Without CairoSVG, ``render()`` still draws (Pillow); asking for CairoSVG's exact
    rasterising says what to install."""
    monkeypatch.setitem(sys.modules, "cairosvg", None)  # import cairosvg now raises ImportError
    e = pisti_env.env(render_mode="rgb_array")
    e.reset(seed=0)
    check_frame(e.render())
    from pisti_env.drawing import svg_to_png

    with pytest.raises(ImportError, match=r"pip install 'pisti\[pictures\]'"):
        open_frame(e.unwrapped.game, e.possible_agents, renderer="cairo")
    with pytest.raises(ImportError, match=r"pip install 'pisti\[pictures\]'"):
        svg_to_png("<svg xmlns='http://www.w3.org/2000/svg'/>")


def _states(kw: dict, seed: int, moves: int) -> list[Game]:
    rng = random.Random(seed)
    g = Game(make_settings(**kw), seed=seed)
    states = [g.clone()]
    for _ in range(moves):
        if g.done:
            break
        g.step(rng.choice(g.legal_actions()))
        states.append(g.clone())
    return states


def test_issue50_every_move_draws_a_new_frame_and_the_same_state_the_same_frame():
    """The Pillow frame shows the state: every state of a hand (a deal, then one card, claim or
    answer at a time) draws a different frame; drawing a state again, after others, gives it
    back byte for byte."""
    kw = dict(num_players=4, partnerships=True, bluff=True, target=None, show_stock_bottom=True)
    states = _states(kw, 3, 16)
    frames = [open_frame(g, NAMES4) for g in states]
    for f in frames:
        check_frame(f)
    digests = {f.tobytes() for f in frames}
    assert len(digests) == len(frames), "two different states drew the same frame"
    assert all(np.array_equal(open_frame(g, NAMES4), f) for g, f in zip(states, frames))


def _blocks(frame: np.ndarray, size: int = 8) -> np.ndarray:
    h, w, _ = frame.shape
    return frame.astype(float).reshape(h // size, size, w // size, size, 3).mean(axis=(1, 3))


@pytest.mark.parametrize("kw", [dict(target=None), dict(num_players=3),
                                dict(num_players=4, partnerships=True, bluff=True, target=None),
                                dict(num_players=5, decks=2, show_stock_bottom=True)],
                         ids=["2p", "3p", "4p-partners-bluff", "5p-2decks-bottom"])
def test_issue50_pillow_and_cairo_draw_the_same_picture(kw):
    """One layout, two backends: Pillow's frame matches CairoSVG's rasterised SVG of the same
    state up to anti-aliasing and font hinting (a mean difference under 4 of 255 levels, no
    8×8 block's mean off by 80, measured at most 51), while the next state's picture is far
    from it (a card moved: some block off by more than 120)."""
    pytest.importorskip("cairosvg", reason="the pictures extra (CairoSVG) is not installed")
    for seed in range(2):
        states = _states(kw, seed, 5 + 7 * seed)
        names = [f"p{i}" for i in range(states[0].num_players)]
        pillow = open_frame(states[-2], names)
        cairo, cairo_next = (open_frame(g, names, renderer="cairo") for g in states[-2:])
        assert np.abs(pillow.astype(float) - cairo).mean() < 4
        assert np.abs(_blocks(pillow) - _blocks(cairo)).max() < 80
        assert np.abs(_blocks(cairo_next) - _blocks(cairo)).max() > 120, "the states look alike: vacuous"


@pytest.mark.parametrize("source", ["pillow-default", "pillow-bitmap"])
def test_issue50_frames_without_dejavu(monkeypatch, source):
    """Without DejaVu the frame is drawn with Pillow's default font, or at worst its built-in
    bitmap font, which always works; they lack the Turkish letters and the suit signs, so the
    text is written without them."""
    assert pixels._plain("şeyma ▶ Q♦ 10♣ ığdır İÖ…") == "seyma > QD 10C igdir IO..."
    g = _states(dict(num_players=3, target=None), 2, 9)[-1]
    names = ["şeyma", "ığdır", "<Ö>"]
    dejavu = open_frame(g, names)
    for cache in (pixels._font, pixels._card_tile):
        cache.cache_clear()
    monkeypatch.setattr(pixels, "font_source", lambda: source)
    try:
        font = type(pixels._font(12, False)).__name__
        assert font == ("ImageFont" if source == "pillow-bitmap" else "FreeTypeFont")
        frame = open_frame(g, names)
        check_frame(frame)
        assert not np.array_equal(frame, dejavu)
        assert np.array_equal(open_frame(g, names), frame)
    finally:
        for cache in (pixels._font, pixels._card_tile):
            cache.cache_clear()


@pytest.mark.parametrize("kwargs, error, match", [
    (dict(renderer="svg"), ValueError, r"renderer must be one of 'pillow', 'cairo', got 'svg'"),
    (dict(width=0), ValueError, r"width must be an int 1\.\.4096, got 0"),
    (dict(width=5000), ValueError, r"width must be an int 1\.\.4096, got 5000"),
    (dict(height=1.5), TypeError, r"height must be an int 1\.\.4096, got float 1\.5"),
    (dict(height=1.5, renderer="cairo"), TypeError, r"height must be an int 1\.\.4096, got float 1\.5"),
])
def test_frame_arguments_are_checked(kwargs, error, match):
    g = Game(make_settings(target=None), seed=0)
    with pytest.raises(error, match=match):
        open_frame(g, ["a", "b"], **kwargs)
