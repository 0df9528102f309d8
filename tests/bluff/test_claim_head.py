"""R29's claim head: with ``claim_hidden_sizes`` a bluff-variant policy's choice between face
down (a claim) and face up on a lone card is P(face down) = sigmoid of a small MLP reading
only `ClaimChanceView`'s facts; the card within each kind still comes from the card
logits. Checkpoints record the head; warm starts, resumes and best responses keep it."""

from __future__ import annotations

import json
import random
import shutil

import pytest

torch = pytest.importorskip("torch")

from pisti_env import Game, make_settings  # noqa: E402
from pisti_env.rules.actions import BELIEVE, FACE_DOWN  # noqa: E402
from pisti_env.rules.cards import NUM_CARD_IDS, NUM_RANKS, RANK  # noqa: E402
from pisti_env.views.observation import ObservationEncoder, ObservationLayout  # noqa: E402
from training.exploit.exploit import ExploitConfig, resolve  # noqa: E402
from training.trainer.checkpoint import CheckpointError, read_metadata  # noqa: E402
from pisti_env.policies.claim_heads import ClaimChanceView  # noqa: E402
from pisti_env.policies.loader import load_policy  # noqa: E402
from pisti_env.policies.network import log_probs, policy_network  # noqa: E402
from training.trainer.runner import run  # noqa: E402
from training.trainer.train import Trainer  # noqa: E402

from bluff_support import claim_chances, train_bluff  # noqa: E402
from helpers import tiny_config  # noqa: E402

BLUFF = make_settings(num_players=2, bluff=True, target=None)


def _real_weights(network: PolicyNetwork) -> PolicyNetwork:
    with torch.no_grad():  # heads with real weights (the initial ones are near zero)
        for p in network.claim_head.parameters():
            p.normal_()
        for p in network.card_head.parameters():
            p.normal_()
    return network


def test_r29_the_claim_chance_view_reads_the_lone_rank_its_cards_the_hands_and_the_stock():
    layout = ObservationLayout(BLUFF)
    view = ClaimChanceView(layout)
    k = layout.num_card_features
    hand = layout.feature_index["hand"]
    for game, obs, _ in claim_chances(40):
        x = torch.as_tensor(obs)[None]
        of_rank = x[:, : NUM_CARD_IDS * k].reshape(1, 4, NUM_RANKS, k).sum(1)
        facts = view(x, of_rank)[0]
        lone = game.pile[-1]
        assert facts[:NUM_RANKS].tolist() == [float(r == RANK[lone]) for r in range(NUM_RANKS)]
        where = facts[NUM_RANKS : NUM_RANKS + k]
        held = sum(RANK[c] == RANK[lone] for c in game.hands[game.turn])
        assert where[hand] == held  # a true claim is possible exactly when this is > 0
        assert where[layout.feature_index["pile_top"]] == 1
        sizes = facts[NUM_RANKS + k : NUM_RANKS + k + 2].tolist()
        assert sizes == pytest.approx([len(game.hands[(game.turn + j) % 2]) / 4 for j in range(2)])
        assert facts[-1] == pytest.approx((len(game.deck) - game.stock_pos) / 52)


def test_r29_the_claim_heads_odds_are_the_probability_of_face_down_and_read_only_its_view():
    """At a claim chance P(face down) is sigmoid(claim head) and the cards within each kind
    keep the card logits' softmax; inputs outside the view change neither the odds nor (so)
    the kinds' masses, and move the card choice."""
    torch.manual_seed(0)
    network = _real_weights(policy_network(BLUFF, (32,), claim_hidden_sizes=(16,)))
    without = policy_network(BLUFF, (32,))
    without.load_state_dict({k: v for k, v in network.state_dict().items() if not k.startswith("claim_head.")})
    layout = ObservationLayout(BLUFF)
    k = layout.num_card_features
    top = layout.feature_index["pile_top"]
    for game, obs, legal in claim_chances(12, seed=3):
        x = torch.as_tensor(obs)[None].clone()
        mask = torch.zeros(1, 106, dtype=torch.bool)
        mask[0, legal] = True
        with torch.no_grad():
            logits = network(x)
            p = log_probs(logits, mask).exp()[0]
            of_rank = x[:, : NUM_CARD_IDS * k].reshape(1, 4, NUM_RANKS, k).sum(1)
            odds = network.claim_head(network.extension.claim_chance_view(x, of_rank))[0, 0]
        assert float(p[FACE_DOWN:BELIEVE].sum()) == pytest.approx(float(torch.sigmoid(odds)), abs=1e-6)
        held = [a for a in legal if a < FACE_DOWN]
        assert sorted(a - FACE_DOWN for a in legal if FACE_DOWN <= a < BELIEVE) == held
        with torch.no_grad():  # within each kind: the card logits' own softmax over the held cards
            q = log_probs(without(x), mask).exp()[0]
        for start in (0, FACE_DOWN):
            kind, plain = p[start : start + NUM_CARD_IDS], q[start : start + NUM_CARD_IDS]
            assert torch.allclose(kind / kind.sum(), plain / plain.sum(), atol=1e-6)
        # Inputs outside the view: all but the lone rank's cards, the top card, the hand sizes,
        # the stock, and which cards are held (they are the legal plays, the kinds' support).
        rank = RANK[game.pile[-1]]
        read = torch.zeros_like(x, dtype=torch.bool)
        for card in range(NUM_CARD_IDS):
            read[0, card * k + top] = True
            read[0, card * k + layout.feature_index["hand"]] = True
            if RANK[card] == rank:
                read[0, card * k : card * k + k] = True
        read[0, layout.by_name["hand_sizes"].slice] = True
        read[0, layout.by_name["stock_size"].slice] = True
        noisy = torch.where(read, x, x + torch.rand_like(x))
        with torch.no_grad():
            noisy_logits = network(noisy)
            p_noisy = log_probs(noisy_logits, mask).exp()[0]
        assert float(p_noisy[FACE_DOWN:BELIEVE].sum()) == pytest.approx(float(p[FACE_DOWN:BELIEVE].sum()), abs=1e-6)
        assert not torch.equal(noisy_logits[:, :BELIEVE], logits[:, :BELIEVE])


def test_r29_without_a_claim_chance_the_claim_head_changes_no_probability():
    """Where face down is not allowed, the factored logits give the card logits' own
    distribution: the head shifts a row's face-up logits by one constant."""
    torch.manual_seed(1)
    with_head = _real_weights(policy_network(BLUFF, (32,), claim_hidden_sizes=(16,)))
    without = policy_network(BLUFF, (32,))
    without.load_state_dict({k: v for k, v in with_head.state_dict().items() if not k.startswith("claim_head.")})
    encoder = ObservationEncoder(BLUFF)
    rng = random.Random(5)
    checked = 0
    game = Game(BLUFF, seed=9)
    while checked < 30:
        if game.done:
            game = Game(BLUFF, seed=rng.randrange(10**6))
        legal = game.legal_actions()
        if not any(FACE_DOWN <= a < BELIEVE for a in legal):
            x = torch.as_tensor(encoder.encode(game, game.turn))[None]
            mask = torch.zeros(1, 106, dtype=torch.bool)
            mask[0, legal] = True
            with torch.no_grad():
                assert torch.allclose(log_probs(with_head(x), mask).exp(), log_probs(without(x), mask).exp(), atol=1e-6)
            checked += 1
        game.step(rng.choice(legal))


def test_r29_a_claim_head_needs_the_bluff_variant(tmp_path):
    plain = make_settings(num_players=2)
    layout = ObservationLayout(plain)
    with pytest.raises(ValueError, match="needs the bluff variant"):
        policy_network(plain, (32,), claim_hidden_sizes=(8,))
    with pytest.raises(ValueError, match="needs the bluff variant"):
        ClaimChanceView(layout)
    with pytest.raises(ValueError, match="claim_hidden_sizes needs the bluff variant"):
        Trainer(tiny_config(tmp_path, claim_hidden_sizes=(8,)))
    assert policy_network(BLUFF, (32,)).extension is None  # the default: the card logits alone


def test_r29_a_policy_with_a_claim_head_is_saved_loaded_resumed_and_exploited_with_it(tmp_path, headless):
    trainer = train_bluff(tmp_path, "head", claim_hidden_sizes=(8,), answer_hidden_sizes=(8,))
    policy = tmp_path / "head" / "policy"
    assert read_metadata(policy)["claim_hidden_sizes"] == [8]
    player = load_policy(policy)
    assert player.network.spec.claim_hidden_sizes == (8,) and player.play == "sample_bluffs"
    x = torch.as_tensor(claim_chances(1)[0][1])[None]
    with torch.no_grad():
        assert torch.equal(player.network(x), trainer.network.policy.cpu()(x))
    resumed = run(tiny_config(tmp_path, out_dir=str(tmp_path / "head")), resume=True, progress=False,
                  resume_changes={"total_steps": 16 * 8 * 8})
    assert resumed.network.policy.spec.claim_hidden_sizes == (8,) and resumed.step > trainer.step
    # A warm-started best response keeps the target's head; a fresh one claims from its context.
    _, warm = resolve(ExploitConfig(target=str(policy), warm_start=True, out_dir=str(tmp_path / "x")))
    _, fresh = resolve(ExploitConfig(target=str(policy), out_dir=str(tmp_path / "y")))
    assert warm.claim_hidden_sizes == (8,) and fresh.claim_hidden_sizes == ()
    # Other claim widths, or none, cannot start from it.
    for widths in ((4,), ()):
        with pytest.raises(CheckpointError, match="claim_hidden_sizes"):
            Trainer(tiny_config(tmp_path, bluff=True, target=None, init_from=str(policy), answer_hidden_sizes=(8,),
                                claim_hidden_sizes=widths))
    # A run with a claim head starts from a policy without one: all but the head is the start's,
    # and the head starts at even odds.
    start = load_policy(headless).network
    fresh_head = Trainer(tiny_config(tmp_path, bluff=True, target=None, init_from=headless, claim_hidden_sizes=(8,)))
    mine = fresh_head.network.policy.state_dict()
    for key, value in start.state_dict().items():
        assert torch.equal(mine[key], value), key
    assert {k for k in mine if k not in start.state_dict()} == {k for k in mine if k.startswith("claim_head.")}
    game, obs, legal = claim_chances(1, seed=2)[0]
    mask = torch.zeros(1, 106, dtype=torch.bool)
    mask[0, legal] = True
    with torch.no_grad():
        p = log_probs(fresh_head.network.policy(torch.as_tensor(obs)[None]), mask).exp()[0]
    assert float(p[FACE_DOWN:BELIEVE].sum()) == pytest.approx(0.5, abs=0.02)


def test_r29_a_checkpoint_names_its_claim_head_as_the_schema_allows(tmp_path, headless):
    copy = tmp_path / "copy"
    shutil.copytree(headless, copy)
    metadata = json.loads((copy / "metadata.json").read_text())
    for bad in ([0], "32", [8] * 99):
        (copy / "metadata.json").write_text(json.dumps({**metadata, "claim_hidden_sizes": bad}))
        with pytest.raises(CheckpointError, match="claim_hidden_sizes"):
            read_metadata(copy)
    (copy / "metadata.json").write_text(json.dumps({**metadata, "claim_hidden_sizes": [8]}))
    with pytest.raises(CheckpointError):  # declared, but the weights have no such head
        load_policy(copy)
    (copy / "metadata.json").write_text(json.dumps({**metadata, "claim_hidden_sizes": []}))
    assert load_policy(copy).network.extension is None
