"""``pisti-replay --html`` pages opened in a real browser: headless Chromium driven by Selenium.

Needs Debian's ``chromium`` and ``chromium-driver`` (``apt-get install -y chromium
chromium-driver``) and ``pip install selenium``; skipped cleanly where any is missing. The
system chromedriver is used (no browser or driver is downloaded). The page of a ``pisti-eval
--save-games`` file must load with no console error, show after N steps forward the cards and
scores the engine has after N records, and stay inert with hostile names in the file. A
screenshot is written to the test's folder (and to ``$PISTI_SCREENSHOT_DIR`` when set, for CI
to keep).
"""

from __future__ import annotations

import json
import os
import shutil

import pytest

from pisti_env.rules.cards import card_to_text
from pisti_env.tools.replay import GameRecorder, iter_replay, parse_replay_lines, read_replays
from pisti_env.rules.settings import make_settings
from pisti_env.terminal import replay_cli

from browser_support import headless_chromium  # noqa: E402  (skips the module without Chromium or Selenium)

from selenium.webdriver.common.by import By  # noqa: E402
from selenium.webdriver.common.keys import Keys  # noqa: E402

STEPS = 9  # steps forward in the DOM checks


@pytest.fixture(scope="module")
def browser():
    """One headless Chromium for the module, stopped however the tests end."""
    with headless_chromium(1000, 1000) as driver:
        yield driver


@pytest.fixture(scope="module")
def eval_games(tmp_path_factory):
    """A ``pisti-eval --save-games`` file: single deals and a match to 51."""
    from training.harness.evaluate import main as eval_main

    out = tmp_path_factory.mktemp("eval")
    assert eval_main(["expert", "greedy", "--deals", "2", "--matches", "1", "--target", "51", "--workers", "1",
                      "--threads", "1", "--save-games", "1", "--out", str(out), "--no-plots", "--quiet",
                      "--bootstrap", "10"]) == 0
    return out / "games.jsonl"


def load(driver, path) -> None:
    driver.get_log("browser")  # drop what earlier pages logged
    driver.get(path.resolve().as_uri())
    assert driver.find_element(By.ID, "position").text.startswith("step 1 /")


def console_errors(driver) -> list[dict]:
    return [entry for entry in driver.get_log("browser") if entry["level"] in ("SEVERE", "ERROR")]


def screenshot(driver, path) -> None:
    driver.save_screenshot(str(path))
    assert path.stat().st_size > 10_000
    folder = os.environ.get("PISTI_SCREENSHOT_DIR")
    if folder:
        os.makedirs(folder, exist_ok=True)
        shutil.copy(path, os.path.join(folder, path.name))


def states(recorded, count: int):
    """What the engine holds after each of the first ``count`` records (every card, per side counters)."""
    out = []
    for _, _, game in iter_replay(recorded):
        out.append({
            "hands": [[card_to_text(c) for c in game.hand_card_ids(s)] for s in range(game.num_players)],
            "top": None if game.pile_top is None else card_to_text(game.pile_top),
            "stock": game.stock_size, "captured": list(game.captured_count), "points": list(game.public_points),
            "match": list(game.match_scores), "turn": game.turn, "done": game.done,
        })
        if len(out) == count:
            break
    return out


def shown(driver, num_players: int, num_sides: int) -> dict:
    stage = driver.find_element(By.ID, "stage")

    def cards(css: str) -> list[str]:
        return [e.get_dom_attribute("data-card") for e in stage.find_elements(By.CSS_SELECTOR, css)]

    def field(side: int, name: str) -> str:
        return stage.find_element(By.CSS_SELECTOR, f'[data-role=side][data-side="{side}"] [data-field="{name}"]').text

    top = cards("[data-role=pile-top]")
    return {
        "hands": [cards(f'[data-role=hand][data-seat="{s}"]') for s in range(num_players)],
        "top": top[0] if top else None,
        "stock": int(stage.find_element(By.CSS_SELECTOR, "text[data-role=stock]").get_dom_attribute("data-count")),
        "captured": [int(field(s, "captured")) for s in range(num_sides)],
        "points": [int(field(s, "points")) for s in range(num_sides)],
    }


def test_eval_file_page_steps_with_buttons_keys_and_slider(browser, eval_games, tmp_path):
    page = tmp_path / "all.html"
    assert replay_cli.main([str(eval_games), "--html", str(page)]) == 0
    games = read_replays(eval_games)
    load(browser, page)
    match_index = next(i for i, g in enumerate(games) if g.settings.target is not None)
    if len(games) > 1:  # choose the match in the game chooser
        browser.find_element(By.CSS_SELECTOR, f'#game option[value="{match_index}"]').click()
    recorded = games[match_index]
    n, sides = recorded.settings.num_players, recorded.settings.num_sides
    expected = states(recorded, STEPS + 1)
    forward = browser.find_element(By.CSS_SELECTOR, "button[data-action=next]")
    for step in range(STEPS):
        forward.click()
        want = expected[step + 1]
        got = shown(browser, n, sides)
        assert got == {k: want[k] for k in got}, f"after {step + 1} steps forward"
    total = len(list(iter_replay(recorded)))
    assert browser.find_element(By.ID, "position").text == f"step {STEPS + 1} / {total} · hand 1"
    # The keyboard: PgDn goes to the next hand's deal, End to the game's end with its match score.
    body = browser.find_element(By.TAG_NAME, "body")
    body.send_keys(Keys.PAGE_DOWN)
    records = [r for _, r in recorded.records]
    step = int(body.get_dom_attribute("data-step"))
    assert records[step]["type"] in ("hand", "end")
    body.send_keys(Keys.END)
    assert int(body.get_dom_attribute("data-step")) == total - 1
    final = recorded.end["match_scores"]
    stage = browser.find_element(By.ID, "stage")
    for side in range(sides):
        match = stage.find_element(By.CSS_SELECTOR, f'[data-side="{side}"] [data-field="match"]')
        assert match.text == str(final[side])
    # The slider: the first hand's end shows its breakdown table with the recorded totals.
    first_end = next(i for i, r in enumerate(records) if r["type"] == "hand_end")
    browser.execute_script("var s = document.getElementById('slider'); s.value = arguments[0];"
                           "s.dispatchEvent(new Event('input'));", first_end)  # frame i: after the game's record i
    rows = browser.find_elements(By.CSS_SELECTOR, "#extra table.breakdown tbody tr")
    totals = [int(r.find_element(By.CSS_SELECTOR, '[data-field="total"]').text) for r in rows]
    assert totals == [side["total"] for side in records[first_end]["result"]]
    screenshot(browser, tmp_path / "replay-all-open.png")
    assert console_errors(browser) == []


def test_play_at_the_last_step_starts_again_from_the_first(browser, eval_games, tmp_path):
    import time

    page = tmp_path / "one.html"
    assert replay_cli.main([str(eval_games), "--html", str(page), "--game", "1"]) == 0
    load(browser, page)
    body, play = browser.find_element(By.TAG_NAME, "body"), browser.find_element(By.ID, "play")
    body.send_keys(Keys.END)
    last = int(body.get_dom_attribute("data-step"))
    assert last > 0
    play.click()  # (it did nothing here before: the timer stopped at once at the last step)
    assert int(body.get_dom_attribute("data-step")) == 0 and play.text == "pause"
    deadline = time.monotonic() + 10
    while int(body.get_dom_attribute("data-step")) == 0 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert 0 < int(body.get_dom_attribute("data-step")) < last  # it plays on from the first step
    play.click()
    assert play.text == "play"
    assert console_errors(browser) == []


def test_seat_page_shows_other_hands_as_backs(browser, eval_games, tmp_path):
    page = tmp_path / "seat1.html"
    assert replay_cli.main([str(eval_games), "--html", str(page), "--seat", "1", "--game", "1"]) == 0
    recorded = read_replays(eval_games)[0]
    n, sides = recorded.settings.num_players, recorded.settings.num_sides
    load(browser, page)
    expected = states(recorded, STEPS + 1)
    for step in range(STEPS + 1):
        got = shown(browser, n, sides)
        want = expected[step]
        assert got["hands"][1] == want["hands"][1]
        for seat in range(n):
            if seat != 1:
                assert got["hands"][seat] == ["back"] * len(want["hands"][seat])
        assert (got["top"], got["stock"], got["captured"], got["points"]) == (
            want["top"], want["stock"], want["captured"], want["points"])
        browser.find_element(By.TAG_NAME, "body").send_keys(Keys.ARROW_RIGHT)
    screenshot(browser, tmp_path / "replay-seat-1.png")
    assert console_errors(browser) == []


def test_hostile_names_stay_text(browser, tmp_path):
    """A replay file is untrusted: names and sources that look like markup are shown as text,
    run nothing and load nothing."""
    evil = ['</script><script>window.pwned = 1</script>', '<img src=x onerror="window.pwned = 2">']
    lines: list[str] = []
    rec = GameRecorder(make_settings(target=None), evil, lambda r: lines.append(json.dumps(r)), seed=3,
                       meta={"names": evil, "source": '"><svg onload="window.pwned = 3">'})
    while not rec.game.done:
        rec.step(rec.game.legal_actions()[0])
    path = tmp_path / "evil.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert parse_replay_lines(lines)  # a valid replay
    page = tmp_path / "evil.html"
    assert replay_cli.main([str(path), "--html", str(page)]) == 0
    load(browser, page)
    browser.find_element(By.CSS_SELECTOR, "button[data-action=next]").click()
    assert browser.execute_script("return window.pwned === undefined")
    assert browser.find_elements(By.CSS_SELECTOR, "img, iframe, body > script ~ script") == []
    names = [e.text for e in browser.find_elements(By.CSS_SELECTOR, "#stage [data-role=seat-name]")]
    assert any("<img src=x" in name for name in names)
    assert console_errors(browser) == []
