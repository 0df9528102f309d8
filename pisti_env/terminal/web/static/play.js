// The play page of `pisti-play --web`. It holds nothing secret: the server sends the person's
// state (pisti_env/web/views.py: the seat's view only, R30-R31) with the table drawn as SVG by the
// replay page's drawing code; the page shows it, makes the person's hand cards clickable and posts
// the chosen action id, which the server's engine checks. Text goes in with textContent only.
"use strict";
(function () {
  const $ = (id) => document.getElementById(id);
  const params = new URLSearchParams(window.location.search);
  let token = params.get("game");
  let state = null;
  let faceDown = false;
  let delay = 600;

  function setState(s) { document.body.setAttribute("data-state", s); }
  function message(text) { $("message").textContent = text || ""; }
  const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

  async function api(method, path, body) {
    const init = { method: method, headers: {}, cache: "no-store", credentials: "same-origin" };
    if (body !== undefined) {
      init.headers["Content-Type"] = "application/json";
      init.body = JSON.stringify(body);
    }
    const response = await fetch(path, init);
    let data = null;
    try { data = await response.json(); } catch (e) { data = null; }
    if (!response.ok) {
      throw new Error((data && data.error) || ("the server answered " + response.status));
    }
    return data;
  }

  function showSvg(text) {
    const doc = new DOMParser().parseFromString(text, "image/svg+xml");
    const stage = $("stage");
    stage.replaceChildren(document.importNode(doc.documentElement, true));
  }

  function logLine(text) {
    const item = document.createElement("li");
    item.textContent = text;
    $("log").appendChild(item);
    $("log").scrollTop = $("log").scrollHeight;
  }

  function breakdowns(list) {
    const box = $("breakdowns");
    box.replaceChildren();
    list.forEach((hand) => {
      const table = document.createElement("table");
      table.className = "breakdown";
      table.setAttribute("data-hand", String(hand.hand));
      const caption = table.createCaption();
      caption.textContent = "Hand " + hand.hand;
      const head = table.createTHead().insertRow();
      ["side"].concat(hand.columns.map((c) => c[1]), ["total", "match"]).forEach((title) => {
        const th = document.createElement("th");
        th.textContent = title;
        head.appendChild(th);
      });
      const body = table.createTBody();
      hand.rows.forEach((row) => {
        const tr = body.insertRow();
        const cells = [["side", row.side]].concat(hand.columns.map((c, i) => [c[0], row.values[i]]),
          [["total", row.total], ["match", row.match]]);
        cells.forEach(([field, value]) => {
          const td = tr.insertCell();
          td.setAttribute("data-field", field);
          td.textContent = String(value);
        });
      });
      box.prepend(table);
    });
  }

  function matchLine(s) {
    const scores = s.sides.map((name, i) => name + " " + s.match_scores[i]).join(" – ");
    const what = s.settings.target === null ? "single hand" : "match to " + s.settings.target;
    $("match").textContent = scores + " · " + what + " · hand " + s.hand_number;
  }

  function controls(s) {
    const kinds = new Set(s.legal.map((m) => m.kind));
    $("facedown").hidden = !kinds.has("down");
    if (!kinds.has("down")) { faceDown = false; }
    $("facedown").setAttribute("aria-pressed", String(faceDown));
    document.body.classList.toggle("face-down", faceDown);
    $("believe").hidden = !kinds.has("believe");
    $("challenge").hidden = !kinds.has("challenge");
    $("hint").hidden = !s.your_turn;
    const playable = new Set(s.legal.filter((m) => m.kind === "play").map((m) => m.card));
    $("stage").querySelectorAll('[data-role="hand"][data-seat="' + s.seat + '"]').forEach((card) => {
      if (playable.has(card.getAttribute("data-card"))) {
        card.classList.add("playable");
        card.setAttribute("tabindex", "0");
      }
    });
    if (s.done || s.failure) {
      $("prompt").textContent = "";
    } else if (kinds.has("believe")) {
      $("prompt").textContent = "Answer the claim: believe it or challenge it (R29).";
    } else if (s.your_turn) {
      $("prompt").textContent = "Your turn: click a card of your hand.";
    }
  }

  async function show(s, animate) {
    setState("busy");
    state = s;
    const frames = s.frames || [];
    for (let i = 0; i < frames.length; i++) {
      showSvg(frames[i].svg);
      logLine(frames[i].line);
      if (animate && delay > 0 && i < frames.length - 1) { await sleep(delay); }
    }
    showSvg(s.svg);
    matchLine(s);
    breakdowns(s.breakdowns);
    $("result").textContent = s.result || (s.failure ? "The game ended: " + s.failure : "");
    $("hint-text").textContent = "";
    controls(s);
    $("setup").hidden = true;
    $("play").hidden = false;
    setState(s.done || s.failure ? "over" : (s.your_turn ? "ready" : "busy"));
  }

  async function play(kind, card) {
    if (!state || document.body.getAttribute("data-state") !== "ready") { return; }
    const move = state.legal.find((m) => m.kind === kind && (card === null || m.card === card));
    if (!move) { message("That move is not allowed now."); return; }
    setState("busy");
    message("");
    try {
      faceDown = false;
      await show(await api("POST", "/api/games/" + encodeURIComponent(token) + "/move", { action: move.action }), true);
    } catch (err) {
      message(err.message);
      setState("ready");
    }
  }

  $("stage").addEventListener("click", (event) => {
    const card = event.target.closest('[data-role="hand"].playable');
    if (card) { play(faceDown ? "down" : "play", card.getAttribute("data-card")); }
  });
  $("stage").addEventListener("keydown", (event) => {
    const card = event.target.closest && event.target.closest('[data-role="hand"].playable');
    if (card && (event.key === "Enter" || event.key === " ")) { play(faceDown ? "down" : "play", card.getAttribute("data-card")); }
  });
  $("facedown").addEventListener("click", () => {
    faceDown = !faceDown;
    $("facedown").setAttribute("aria-pressed", String(faceDown));
    document.body.classList.toggle("face-down", faceDown);
  });
  $("believe").addEventListener("click", () => play("believe", null));
  $("challenge").addEventListener("click", () => play("challenge", null));
  $("hint").addEventListener("click", async () => {
    try {
      const answer = await api("POST", "/api/games/" + encodeURIComponent(token) + "/hint");
      $("hint-text").textContent = answer.hint;
    } catch (err) { message(err.message); }
  });

  function fill(select, values, chosen) {
    select.replaceChildren();
    values.forEach((value) => {
      const option = document.createElement("option");
      option.value = value === null ? "" : value;
      option.textContent = value === null ? "default (the shipped policy for the game)" : value;
      select.appendChild(option);
    });
    select.value = chosen === null || chosen === undefined ? "" : chosen;
  }

  async function setup() {
    const options = await api("GET", "/api/options");
    delay = Math.round(1000 * options.delay);
    const d = options.defaults;
    fill($("opponent"), [null].concat(options.opponents), d.opponent);
    fill($("partner"), [null].concat(options.opponents), d.partner);
    $("players").value = String(d.players);
    $("partnerships").checked = d.partnerships;
    $("seat").value = String(d.seat);
    $("target").textContent = String(options.target);
    (d.match ? $("match-game") : $("single")).checked = true;
    $("bluff").checked = d.bluff;
    $("setup").hidden = false;
    $("play").hidden = true;
    setState("form");
  }

  $("choices").addEventListener("submit", async (event) => {
    event.preventDefault();
    const players = Number($("players").value);
    const partnerships = players === 4 && $("partnerships").checked;
    const body = {
      opponent: $("opponent").value || null, players: players, partnerships: partnerships,
      match: $("match-game").checked, bluff: $("bluff").checked, seat: Number($("seat").value),
    };
    if (partnerships) { body.partner = $("partner").value || null; }
    setState("busy");
    message("Dealing…");
    try {
      const created = await api("POST", "/api/games", body);
      message("");
      token = created.token;
      window.history.replaceState(null, "", created.url);
      $("log").replaceChildren();
      await show(created.state, true);
    } catch (err) {
      message(err.message);
      setState("form");
    }
  });
  $("new").addEventListener("click", () => { setup().catch((err) => message(err.message)); });

  async function start() {
    try {
      if (token) {
        const options = await api("GET", "/api/options");
        delay = Math.round(1000 * options.delay);
        await show(await api("GET", "/api/games/" + encodeURIComponent(token)), false);
      } else {
        await setup();
      }
    } catch (err) {
      message(err.message);
      setState("error");
    }
  }
  start();
})();
