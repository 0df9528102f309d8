"""``pisti-play --web``'s page in a real browser: headless Debian Chromium driven by Selenium
against a real uvicorn on 127.0.0.1 (tests/web/web_support.py's ``live_server``, stopped however
the test ends).

Whole games are played by clicking the person's cards (and, with the bluff variant, the face-down
toggle and the believe/challenge buttons, R29); the final scores on the page must equal those of
the saved replay played again by the engine, and the browser must log no error. Two games alike
in everything the person's seat may know show the same page (R30–R31). With
``PISTI_WRITE_SCREENSHOT=1`` the 2-player test writes docs/img/play-web.png.

Skipped where Chromium, chromedriver, Selenium or the web extra is missing.
"""

from __future__ import annotations

import os
import random
import sys
from pathlib import Path

import pytest

pytest.importorskip("starlette", reason="the web extra is not installed (pip install 'pisti[web]')")
pytest.importorskip("uvicorn", reason="the web extra is not installed (pip install 'pisti[web]')")
from browser_support import headless_chromium  # noqa: E402  (skips the module without Chromium or Selenium)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.support.ui import Select, WebDriverWait  # noqa: E402

from pisti_env.tools.replay import read_replays, replay  # noqa: E402
from pisti_env.rules import make_settings  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "web"))
from web_support import config, live_server, mapped, random_prefix, scripted_game  # noqa: E402

SCREENSHOT = Path(__file__).resolve().parents[2] / "docs" / "img" / "play-web.png"


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium for the module, stopped however the tests end."""
    with headless_chromium(1000, 1100) as driver:
        yield driver


def console_errors(driver) -> list[dict]:
    return [entry for entry in driver.get_log("browser") if entry["level"] in ("SEVERE", "ERROR")]


def wait_for(driver, *states: str, timeout: float = 60) -> str:
    WebDriverWait(driver, timeout).until(lambda d: d.find_element(By.TAG_NAME, "body").get_dom_attribute("data-state")
                                         in states)
    return driver.find_element(By.TAG_NAME, "body").get_dom_attribute("data-state")


def start(driver, base: str, **choices) -> None:
    """The start page's form filled in and sent."""
    driver.get_log("browser")
    driver.get(base + "/")
    wait_for(driver, "form")
    for key in ("opponent", "partner", "players", "seat"):
        if key in choices:
            Select(driver.find_element(By.ID, key)).select_by_value(str(choices[key]))
    for key in ("partnerships", "bluff"):
        box = driver.find_element(By.ID, key)
        if box.is_selected() != bool(choices.get(key, False)):
            box.click()
    driver.find_element(By.ID, "match-game" if choices.get("match") else "single").click()
    driver.find_element(By.ID, "start").click()


def visible(driver, element_id: str) -> bool:
    return driver.find_element(By.ID, element_id).is_displayed()


def play_by_clicking(driver, rng: random.Random, on_move=None) -> dict[str, int]:
    """Click until the game is over: a card of the hand, face down when the toggle is offered
    and the coin says so (R29), or an answer to a claim; returns what was clicked how often."""
    clicks = {"card": 0, "down": 0, "believe": 0, "challenge": 0}
    while wait_for(driver, "ready", "over") == "ready":
        if visible(driver, "believe"):
            answer = rng.choice(("believe", "challenge"))
            driver.find_element(By.ID, answer).click()
            clicks[answer] += 1
        else:
            if visible(driver, "facedown") and rng.random() < 0.7:
                driver.find_element(By.ID, "facedown").click()
                clicks["down"] += 1
            cards = driver.find_elements(By.CSS_SELECTOR, "#stage [data-role=hand].playable")
            assert cards, "the person's turn shows no playable card"
            rng.choice(cards).click()
            clicks["card"] += 1
        wait_for(driver, "busy", "ready", "over")
        if on_move is not None:
            on_move(clicks)
    return clicks


def page_scores(driver) -> list[int]:
    """The match (or hand) scores the page shows in the last hand's breakdown."""
    latest = driver.find_element(By.CSS_SELECTOR, "#breakdowns table.breakdown")
    return [int(td.text) for td in latest.find_elements(By.CSS_SELECTOR, 'td[data-field="match"]')]


def check_against_replay(driver, path: Path) -> None:
    recorded = read_replays(path)
    assert len(recorded) == 1 and recorded[0].end["complete"]
    game = replay(recorded[0])  # the engine again, every deck and result checked
    assert page_scores(driver) == list(game.match_scores) == recorded[0].end["match_scores"]
    assert driver.find_element(By.ID, "result").text.startswith(("Hand over", "Match over"))
    assert console_errors(driver) == []


def test_two_players_against_greedy_by_clicking(browser, tmp_path):
    write = os.environ.get("PISTI_WRITE_SCREENSHOT") == "1"

    def shot(clicks):
        if write and clicks["card"] == 5 and wait_for(browser, "ready", "over") == "ready":
            browser.find_element(By.ID, "hint").click()
            WebDriverWait(browser, 60).until(lambda d: d.find_element(By.ID, "hint-text").text)
            browser.save_screenshot(str(SCREENSHOT))

    with live_server(config(tmp_path, hint_policy=None)) as (base, _):
        start(browser, base, opponent="greedy", players=2)
        clicks = play_by_clicking(browser, random.Random(1), shot)
        assert clicks["card"] >= 24
        check_against_replay(browser, tmp_path / "game.jsonl")


def test_two_players_against_the_shipped_policy(browser, tmp_path):
    pytest.importorskip("torch", reason="the shipped policy needs torch")
    with live_server(config(tmp_path)) as (base, _):
        start(browser, base, opponent="pisti-2p", players=2)
        play_by_clicking(browser, random.Random(2))
        check_against_replay(browser, tmp_path / "game.jsonl")
    assert read_replays(tmp_path / "game.jsonl")[0].players[1] == "pisti-2p"


def test_R4_four_players_in_partnerships(browser, tmp_path):
    settings = make_settings(num_players=4, target=None)
    with live_server(config(tmp_path, settings=settings)) as (base, _):
        start(browser, base, opponent="greedy", partner="random", players=4, partnerships=True)
        play_by_clicking(browser, random.Random(3))
        check_against_replay(browser, tmp_path / "game.jsonl")
        assert len(page_scores(browser)) == 2  # two sides (R4)
    assert read_replays(tmp_path / "game.jsonl")[0].players == ["person", "greedy", "random", "greedy"]


@pytest.mark.slow
def test_R24_R25_a_match_to_the_target_against_random(browser, tmp_path):
    with live_server(config(tmp_path, settings=make_settings())) as (base, _):
        start(browser, base, opponent="random", players=2, match=True)
        play_by_clicking(browser, random.Random(4))
        check_against_replay(browser, tmp_path / "game.jsonl")
        assert max(page_scores(browser)) >= make_settings().target
        assert len(browser.find_elements(By.CSS_SELECTOR, "#breakdowns table.breakdown")) > 1


def test_R29_claims_and_answers_with_buttons(browser, tmp_path):
    settings = make_settings(target=None, bluff=True)
    clicked = {"card": 0, "down": 0, "believe": 0, "challenge": 0}
    for game in range(4):  # single hands against bluffer (it claims whenever allowed) until both buttons were used
        folder = tmp_path / str(game)
        folder.mkdir()
        with live_server(config(folder, settings=settings, seed=11 + game)) as (base, _):
            start(browser, base, opponent="bluffer", players=2, bluff=True)
            clicks = play_by_clicking(browser, random.Random(5 + game))
            check_against_replay(browser, folder / "game.jsonl")
        clicked = {k: clicked[k] + clicks[k] for k in clicked}
        if clicked["down"] and clicked["believe"] and clicked["challenge"]:
            break
    assert clicked["down"] and clicked["believe"] and clicked["challenge"], clicked


def test_R30_R31_the_page_is_the_same_for_games_alike_in_what_the_seat_knows(browser, tmp_path):
    settings = make_settings(num_players=2, target=None, bluff=True)
    names = ["you", "p1"]
    with live_server(config(tmp_path, settings=settings)) as (base, app):
        g, actions = random_prefix(settings, 41)
        unknown = g.unknown_cards(0)
        shuffled = list(unknown)
        random.Random(0).shuffle(shuffled)
        mapping = dict(zip(unknown, shuffled))
        pages = []
        for i, (deck, moves) in enumerate([(g.deck, actions), ([mapping.get(c, c) for c in g.deck],
                                                               [(s, mapped(a, mapping)) for s, a in actions])]):
            game, mine = scripted_game(settings, deck, g.dealer, 0, moves, tmp_path / f"{i}.jsonl", names)
            token = app.state.sessions.add(game)
            with game.lock:
                game.start()
                for action in mine:
                    game.move(action)
            browser.get(f"{base}/?game={token}")
            wait_for(browser, "ready")
            pages.append([browser.find_element(By.ID, name).get_attribute("innerHTML")
                          for name in ("stage", "match", "controls", "prompt")])
        assert pages[0] == pages[1]
        assert console_errors(browser) == []
