"""R29's claim game solved (``solved_claims``, `pisti_env.policies.claim_game`): the solution
is an equilibrium of the claim game, its chance model is the uniform deal of what neither side
sees, each seat reads its counts from its own observation, and a policy with solved claims
plays them, is saved, trained, converted and exploited."""

from __future__ import annotations

import itertools
import json
import random
import shutil
from pathlib import Path

import numpy as np
import pytest

torch = pytest.importorskip("torch")

from pisti_env import make_settings  # noqa: E402
from pisti_env.rules.actions import BELIEVE, CHALLENGE, FACE_DOWN  # noqa: E402
from pisti_env.rules.cards import NUM_CARD_IDS, RANK  # noqa: E402
from pisti_env.rules.locations import PLAYED_BY  # noqa: E402
from pisti_env.views.observation import ObservationLayout  # noqa: E402
from training.exploit.exploit import ExploitConfig, resolve  # noqa: E402
from training.trainer.checkpoint import CheckpointError, read_metadata  # noqa: E402
from training.bluff.capture_value import main as capture_value_main  # noqa: E402
from pisti_env.policies.claim_game import SolvedClaims, hypergeometric, solve, thresholds  # noqa: E402
from pisti_env.policies.loader import load_policy  # noqa: E402
from pisti_env.policies.network import log_probs, policy_network  # noqa: E402
from training.bluff.solve_claims import main as solve_claims_main  # noqa: E402
from training.trainer.train import Trainer  # noqa: E402

from bluff_support import random_positions, train_bluff  # noqa: E402
from helpers import tiny_config  # noqa: E402

BLUFF = make_settings(num_players=2, bluff=True, target=None)
# (hidden cards, of the lone rank, claimant's hand, answerer's hand): a hand's start to its end.
GRID = [(t, m, hc, ha) for t in (6, 8, 12, 20, 30, 44) for m in range(4) for hc in range(1, 5) for ha in range(1, 5)
        if hc + ha <= t]


def _joint(t, m, hc, ha):
    k = torch.arange(4.0).view(1, -1, 1)
    j = torch.arange(4.0).view(1, 1, -1)
    t, m, hc, ha = (torch.tensor(float(x)) for x in (t, m, hc, ha))
    return (hypergeometric(k, t, m, hc) * hypergeometric(j, t - hc, m - k, ha))[0]


def test_r29_the_claim_games_chance_model_is_the_uniform_deal_of_both_hands():
    """P(k, j) against counting every way to deal the two hands out of the hidden cards."""
    for t, m, hc, ha in [(8, 3, 2, 2), (7, 2, 3, 1), (6, 3, 3, 3), (9, 0, 4, 4), (10, 1, 1, 4)]:
        counts = torch.zeros(4, 4)
        cards = range(t)  # cards 0 .. m-1 are of the lone rank
        for claimant in itertools.combinations(cards, hc):
            rest = [c for c in cards if c not in claimant]
            for answerer in itertools.combinations(rest, ha):
                counts[sum(c < m for c in claimant), sum(c < m for c in answerer)] += 1
        assert torch.allclose(_joint(t, m, hc, ha), counts / counts.sum(), atol=1e-6), (t, m, hc, ha)


@pytest.mark.parametrize("capture", [0.0, 0.3])
def test_r29_the_solved_claim_game_is_an_equilibrium(capture):
    """Neither side gains by deviating, for every count of a hand: the answerer challenges
    where more of the claims it sees are bluffs than its threshold (a quarter with the stakes
    alone) and believes where fewer, mixing only at it, and the claimant without the rank
    bluffs unless its bluffs are challenged at least as often as deters it (a third), mixing
    only there. With a capture value both thresholds move (`thresholds`)."""
    DETER, BLUFF_SHARE, _ = thresholds(capture)
    tol = 1e-4
    mixed_both = 0
    for t, m, hc, ha in GRID:
        beta, challenge = solve(*(torch.tensor([float(x)]) for x in (t, m, hc, ha)), copies=3, capture=capture)
        beta, challenge = float(beta[0]), challenge[0]
        joint = _joint(t, m, hc, ha)
        without, holding = joint[0], joint[1:].sum(0)
        for j in range(4):
            claims = holding[j] + beta * without[j]
            if claims <= 1e-9:
                continue  # this j never sees a claim on the equilibrium path
            bluffs = beta * without[j] / claims
            if bluffs > BLUFF_SHARE + tol:
                assert challenge[j] == pytest.approx(1.0), (t, m, hc, ha, j)
            elif bluffs < BLUFF_SHARE - tol:
                assert challenge[j] == pytest.approx(0.0), (t, m, hc, ha, j)
        if without.sum() > 1e-9:
            caught = float((challenge * without).sum() / without.sum())  # E[c | k = 0]
            if caught > DETER + tol:
                assert beta == pytest.approx(0.0), (t, m, hc, ha)
            elif caught < DETER - tol:
                assert beta == pytest.approx(1.0), (t, m, hc, ha)
            mixed_both += 0 < beta < 1 and abs(caught - DETER) < tol
    assert mixed_both > len(GRID) // 4  # the mixed case is the common one, not an edge


def test_r29_the_thresholds_are_the_indifference_points_of_the_payoffs():
    """With a believed claim worth (1 + a) stakes, a true one challenged F + a, a bluff caught
    -F (F = 2): the bluff gains nothing at the deterring challenge rate, and the answerer is
    indifferent at the bluff share; a capture value makes both demand more challenges."""
    for a in (0.0, 0.3, 1.0):
        deter, share, odds = thresholds(a)
        assert (1 - deter) * (1 + a) - 2 * deter == pytest.approx(0.0)
        believe, challenge = 1 + a, share * -2 + (1 - share) * (2 + a)
        assert believe == pytest.approx(challenge)
        assert odds == pytest.approx(share / (1 - share))  # beta * odds_j = odds: the posterior is the share
    assert thresholds(0.3)[0] > thresholds(0.0)[0] and thresholds(0.3)[1] < thresholds(0.0)[1]


def test_r29_a_sure_bluff_is_always_challenged_and_never_made():
    # No hidden card of the rank: any claim is a bluff.
    beta, challenge = solve(*(torch.tensor([x]) for x in (20.0, 0.0, 4.0, 4.0)), copies=3)
    assert float(beta[0]) == 0.0 and torch.all(challenge[0] == 1.0)
    # The last eight cards, both hands of four: without the rank, the answerer holds every one.
    beta, challenge = solve(*(torch.tensor([x]) for x in (8.0, 2.0, 4.0, 4.0)), copies=3)
    assert float(beta[0]) == 0.0 and challenge[0, 2] == 1.0 and challenge[0, 0] == 0.0


def _positions(count: int, settings, seed: int = 0):
    """(game, seat to move, its observation) at claim chances and pending claims of random play."""
    def keep(game, legal):
        return game.claimant >= 0 or any(FACE_DOWN <= a < BELIEVE for a in legal)

    return [(game, seat, obs) for game, seat, obs, _ in random_positions(count, settings, seed, keep, claim_share=0.5)]


@pytest.mark.parametrize("players", [2, 3])
def test_r29_each_seat_reads_the_claim_games_counts_from_its_own_observation(players):
    """T, m and the two hands as the game holds them: T is the seat's own hand and every card it
    cannot identify (R31), m the lone rank's cards among them."""
    settings = make_settings(num_players=players, bluff=True, target=None)
    solved = SolvedClaims(ObservationLayout(settings))
    k = ObservationLayout(settings).num_card_features
    for game, seat, obs in _positions(60, settings):
        x = torch.as_tensor(obs)[None]
        counts = solved.counts(x, x[:, : NUM_CARD_IDS * k].reshape(1, NUM_CARD_IDS, k))
        answering = game.claimant >= 0
        lone = game.pile[0] if answering else game.pile[-1]
        unknown = game.unknown_cards(seat)
        own = [c for c in game.hands[seat]]
        rank = RANK[lone % NUM_CARD_IDS]
        assert counts["hidden"].item() == len(unknown) + len(own)
        assert counts["of_rank"].item() == sum(RANK[c % NUM_CARD_IDS] == rank for c in unknown + own)
        assert counts["own"].item() == sum(RANK[c % NUM_CARD_IDS] == rank for c in own)
        if answering:
            assert counts["claimant_hand"].item() == len(game.hands[game.claimant]) + 1
            assert counts["answerer_hand"].item() == len(own)
        else:
            assert counts["claimant_hand"].item() == len(own)
            assert counts["answerer_hand"].item() == len(game.hands[game.played_by[lone] - PLAYED_BY])
        assert bool(counts["answering"]) == answering


def test_r29_r19_the_last_deal_plays_its_own_capture_value():
    """With ``last_deal_capture_value`` the claims and answers on the hand's last deal (the
    stock empty, R19) are the solution for that value, and those before it for
    ``capture_value``: row by row, both seats, against one value for every deal."""
    layout = ObservationLayout(BLUFF)
    k = layout.num_card_features
    split, early, late = SolvedClaims(layout, 5.0, 1.5), SolvedClaims(layout, 5.0), SolvedClaims(layout, 1.5)
    positions = _positions(400, BLUFF, seed=3)
    x = torch.as_tensor(np.stack([obs for _, _, obs in positions]))
    cards = x[:, : NUM_CARD_IDS * k].reshape(-1, NUM_CARD_IDS, k)
    last = torch.tensor([game.stock_size == 0 for game, _, _ in positions])
    assert 0 < int(last.sum()) < len(positions)
    got, want_early, want_late = split(x, cards), early(x, cards), late(x, cards)
    differ = torch.zeros(len(positions), dtype=torch.bool)
    for g, e, lt in zip(got, want_early, want_late):
        assert torch.equal(g[last], lt[last]) and torch.equal(g[~last], e[~last])
        differ |= (e != lt).flatten(1).any(1)
    assert differ[last].any() and differ[~last].any()  # the two values play differently on both
    assert SolvedClaims(layout, 5.0).last_deal_capture_value == 5.0  # None: the same value everywhere
    with pytest.raises(ValueError, match="last_deal_capture_value"):
        SolvedClaims(layout, 3.0, -1.0)


def test_r29_the_answerers_chance_of_a_true_claim_is_what_a_uniform_redeal_gives():
    """The model's P(the claimant held the rank | the answerer's counts) against the share of
    uniform redeals of what the answerer cannot know (Game.determinize) where it did."""
    game, seat, _ = next(p for p in _positions(200, BLUFF, seed=3) if p[0].claimant >= 0 and p[0].stock_size > 8)
    claimant, lone = game.pending_claim
    rank = RANK[lone]
    unknown = game.unknown_cards(seat)
    t = len(unknown) + len(game.hands[seat])
    j = sum(RANK[c % NUM_CARD_IDS] == rank for c in game.hands[seat])
    m = j + sum(RANK[c % NUM_CARD_IDS] == rank for c in unknown)
    hc, ha = len(game.hands[claimant]) + 1, len(game.hands[seat])
    joint = _joint(t, m, hc, ha)
    model = float(joint[1:, j].sum() / joint[:, j].sum())
    rng = random.Random(0)
    held, samples = 0, 1500
    for _ in range(samples):
        world = game.determinize(seat, rng)
        cards = list(world.hands[claimant]) + [world.claim_card]  # its hand and its face-down card
        held += any(RANK[c % NUM_CARD_IDS] == rank for c in cards)
    assert held / samples == pytest.approx(model, abs=0.05)


def _mask(legal):
    mask = torch.zeros(1, 106, dtype=torch.bool)
    mask[0, legal] = True
    return mask


def test_r29_a_policy_with_solved_claims_plays_the_solution():
    """Holding the lone rank it claims with a card of that rank; without, P(face down) is the
    solution's bluff probability and the card the card logits' choice; an answer challenges with
    the solution's probability for the cards held; elsewhere the card logits decide alone."""
    torch.manual_seed(0)
    network = policy_network(BLUFF, (32,), solved_claims=True)
    plain = policy_network(BLUFF, (32,))
    with torch.no_grad():
        for p in network.parameters():
            p.normal_()
    plain.load_state_dict(network.state_dict())
    layout = ObservationLayout(BLUFF)
    k = layout.num_card_features
    seen = {"true": 0, "bluff": 0, "answer": 0}
    for game, seat, obs in _positions(80, BLUFF, seed=1):
        x = torch.as_tensor(obs)[None]
        legal = game.legal_actions()
        with torch.no_grad():
            p = log_probs(network(x), _mask(legal)).exp()[0]
            card_logits = log_probs(plain(x), _mask([a for a in legal if a < FACE_DOWN]))[0].exp()
        counts = network.extension.solved_claims.counts(x, x[:, : NUM_CARD_IDS * k].reshape(1, NUM_CARD_IDS, k))
        beta, challenge = solve(counts["hidden"], counts["of_rank"], counts["claimant_hand"], counts["answerer_hand"], 3)
        if game.claimant >= 0:
            j = int(counts["own"])
            assert float(p[CHALLENGE]) == pytest.approx(float(challenge[0, j]), abs=1e-6)
            assert float(p[BELIEVE] + p[CHALLENGE]) == pytest.approx(1.0, abs=1e-6)
            seen["answer"] += 1
            continue
        rank = RANK[game.pile[-1] % NUM_CARD_IDS]
        down = p[FACE_DOWN:BELIEVE]
        if any(RANK[c] == rank for c in game.hand_card_ids(seat)):
            assert float(down.sum()) == pytest.approx(1.0, abs=1e-6)
            assert all(RANK[c] == rank for c in range(NUM_CARD_IDS) if down[c] > 1e-9)
            seen["true"] += 1
        else:
            assert float(down.sum()) == pytest.approx(float(beta[0]), abs=1e-5)
            up = p[:FACE_DOWN] / p[:FACE_DOWN].sum()
            assert torch.allclose(up, card_logits[:FACE_DOWN], atol=1e-5)  # face up: the card logits' own
            seen["bluff"] += 1
    assert min(seen.values()) > 3, seen


def test_r29_solved_claims_need_the_bluff_variant_and_no_heads(tmp_path):
    layout = ObservationLayout(BLUFF)
    with pytest.raises(ValueError, match="bluff variant"):
        SolvedClaims(ObservationLayout(make_settings(num_players=2)))
    with pytest.raises(ValueError, match="not with answer_hidden_sizes"):
        policy_network(BLUFF, (32,), answer_hidden_sizes=(8,), solved_claims=True)
    with pytest.raises(ValueError, match="solved_claims needs the bluff variant"):
        Trainer(tiny_config(tmp_path, solved_claims=True))
    with pytest.raises(ValueError, match="not with answer_hidden_sizes"):
        Trainer(tiny_config(tmp_path, bluff=True, target=None, solved_claims=True, claim_hidden_sizes=(8,)))
    for field in ("claim_capture_value", "claim_capture_value_last_deal"):
        with pytest.raises(ValueError, match="need solved_claims"):
            Trainer(tiny_config(tmp_path, bluff=True, target=None, **{field: 3.0}))
    for bad in (-1.0, 101.0, float("nan"), True):
        with pytest.raises(ValueError, match="capture_value"):
            SolvedClaims(layout, bad)


def test_r29_a_policy_with_solved_claims_is_trained_saved_converted_and_exploited(tmp_path, headless, capsys):
    # A run warm-started from a policy with heads drops them and trains the rest around the solution.
    heads = train_bluff(tmp_path, "heads", answer_hidden_sizes=(8,), claim_hidden_sizes=(8,))
    start = tmp_path / "heads" / "policy"
    trainer = train_bluff(tmp_path, "solved", solved_claims=True, init_from=str(start))
    policy = tmp_path / "solved" / "policy"
    assert read_metadata(policy)["solved_claims"] is True
    player = load_policy(policy)
    assert player.network.extension.solved_claims is not None and player.play == "sample_bluffs"
    assert player.network.answer_head is None and player.network.claim_head is None
    game, seat, obs = _positions(1, BLUFF)[0]
    x = torch.as_tensor(obs)[None]
    with torch.no_grad():
        assert torch.equal(player.network(x), trainer.network.policy.cpu()(x))
    # pisti-solve-claims: the source's card play with the claims solved, no step taken.
    out = tmp_path / "converted"
    assert solve_claims_main([str(start), "--claim-capture-value", "2.5", "--out", str(out)]) == 0
    assert read_metadata(out)["claim_capture_value"] == 2.5
    assert "claim_capture_value_last_deal" not in read_metadata(out)
    assert load_policy(out).network.extension.solved_claims.capture_value == 2.5
    split = tmp_path / "split"
    assert solve_claims_main([str(start), "--claim-capture-value", "5", "--claim-capture-value-last-deal", "1.5",
                              "--out", str(split)]) == 0
    assert read_metadata(split)["claim_capture_value_last_deal"] == 1.5
    assert load_policy(split).network.extension.solved_claims.last_deal_capture_value == 1.5
    converted = load_policy(out).network
    source = heads.network.policy.cpu().state_dict()
    for key, value in converted.state_dict().items():
        assert torch.equal(value, source[key]), key
    assert read_metadata(out)["solved_claims"] is True and read_metadata(out)["step"] == read_metadata(start)["step"]
    assert solve_claims_main([str(start), "--out", str(out)]) == 2  # never overwritten
    assert "already exists" in capsys.readouterr().err
    # A best response to it learns its own claims and answers (no solved claims of its own).
    _, warm = resolve(ExploitConfig(target=str(out), warm_start=True, out_dir=str(tmp_path / "x")))
    assert not warm.solved_claims and warm.answer_hidden_sizes == ()


def test_r29_a_checkpoint_states_solved_claims_as_the_schema_allows(tmp_path, headless):
    copy = tmp_path / "copy"
    shutil.copytree(headless, copy)
    metadata = json.loads((copy / "metadata.json").read_text())
    for bad, message in ((1, "true or false"), ("yes", "true or false")):
        (copy / "metadata.json").write_text(json.dumps({**metadata, "solved_claims": bad}))
        with pytest.raises(CheckpointError, match=message):
            read_metadata(copy)
    (copy / "metadata.json").write_text(json.dumps({**metadata, "solved_claims": True, "answer_hidden_sizes": [8]}))
    with pytest.raises(CheckpointError, match="replace the answer and claim heads"):
        read_metadata(copy)
    plain = {**metadata, "settings": {**metadata["settings"], "bluff": False}, "solved_claims": True}
    (copy / "metadata.json").write_text(json.dumps(plain))
    with pytest.raises(CheckpointError):
        read_metadata(copy)
    for bad in (-1, 1e9, "3", None):
        (copy / "metadata.json").write_text(json.dumps({**metadata, "solved_claims": True, "claim_capture_value": bad}))
        with pytest.raises(CheckpointError, match="claim_capture_value"):
            read_metadata(copy)
    for bad in (-1, "1.5", None, True):
        (copy / "metadata.json").write_text(json.dumps({**metadata, "solved_claims": True,
                                                        "claim_capture_value_last_deal": bad}))
        with pytest.raises(CheckpointError, match="claim_capture_value_last_deal"):
            read_metadata(copy)
    for field in ("claim_capture_value", "claim_capture_value_last_deal"):
        (copy / "metadata.json").write_text(json.dumps({**metadata, field: 3.0}))
        with pytest.raises(CheckpointError, match="only with solved_claims"):
            read_metadata(copy)
    (copy / "metadata.json").write_text(json.dumps({**metadata, "solved_claims": True, "claim_capture_value": 3.0}))
    assert load_policy(copy).network.extension.solved_claims.capture_value == 3.0
    (copy / "metadata.json").write_text(json.dumps({**metadata, "solved_claims": True}))
    assert load_policy(copy).network.extension.solved_claims.capture_value == 0.0
    (copy / "metadata.json").write_text(json.dumps({**metadata, "solved_claims": True, "claim_capture_value": 3.0,
                                                    "claim_capture_value_last_deal": 1.0}))
    assert load_policy(copy).network.extension.solved_claims.last_deal_capture_value == 1.0


def test_r29_the_capture_value_is_measured_by_rollouts_from_claim_chances(headless, capsys):
    assert capture_value_main([headless, "--states", "3", "--rollouts", "1"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("A (a believed claim's capture, beyond its stake) = ") and "3 claim chances" in out
    assert "A on the last deal" in out and "A on the deals before the last" in out
    # Against an opponent: only the policy's own claim chances, the opponent answering.
    assert capture_value_main([headless, "--opponent", "challenger", "--states", "2", "--rollouts", "1"]) == 0
    assert "2 claim chances" in capsys.readouterr().out
    assert capture_value_main([headless, "--opponent", "nobody"]) == 2
    assert "unknown player 'nobody'" in capsys.readouterr().err
    plain = str(Path(__file__).resolve().parents[2] / "checkpoints" / "pisti-2p")
    assert capture_value_main([plain]) == 2
    assert "not a bluff-variant policy" in capsys.readouterr().err

