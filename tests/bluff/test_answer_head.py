"""R29's answer head: with ``answer_hidden_sizes`` a bluff-variant policy believes or
challenges from the facts that bear on the claim's truth (`ClaimView`) and nothing
else; checkpoints record the head, warm starts and resumes keep it, and a run with a head may
start from a policy without one."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")

from pisti_env import make_settings  # noqa: E402
from pisti_env.rules.actions import BELIEVE, CHALLENGE  # noqa: E402
from pisti_env.rules.cards import NUM_CARD_IDS, NUM_RANKS, RANK  # noqa: E402
from pisti_env.views.observation import ObservationLayout  # noqa: E402
from training.exploit.exploit import ExploitConfig, resolve  # noqa: E402
from training.trainer.checkpoint import CheckpointError, read_metadata  # noqa: E402
from pisti_env.policies.claim_heads import ClaimView  # noqa: E402
from pisti_env.policies.loader import load_policy  # noqa: E402
from pisti_env.policies.network import policy_network  # noqa: E402
from training.trainer.runner import run  # noqa: E402
from training.trainer.train import Trainer  # noqa: E402

from bluff_support import answering_positions, train_bluff  # noqa: E402
from helpers import tiny_config  # noqa: E402

ROOT = Path(__file__).resolve().parents[2]
BLUFF = make_settings(num_players=2, bluff=True, target=None)


def test_r29_the_claim_view_reads_the_lone_rank_its_cards_the_claimants_hand_and_the_stock():
    layout = ObservationLayout(BLUFF)
    view = ClaimView(layout)
    k = layout.num_card_features
    hand, unseen = layout.feature_index["hand"], layout.feature_index["unseen"]
    for game, obs in answering_positions(40):
        x = torch.as_tensor(obs)[None]
        of_rank = x[:, : NUM_CARD_IDS * k].reshape(1, 4, NUM_RANKS, k).sum(1)
        facts = view(x, of_rank)[0]
        claimant, lone = game.pending_claim
        rank = RANK[lone]
        assert facts.shape == (view.size,) == (NUM_RANKS + k + 2,)
        assert facts[:NUM_RANKS].tolist() == [float(r == rank) for r in range(NUM_RANKS)]
        where = facts[NUM_RANKS : NUM_RANKS + k]
        mine = sum(RANK[c] == rank for c in game.hands[game.turn])
        assert where[hand] == mine
        # Unseen by the answerer: in the claimant's hand, the stock, or the face-down card...
        assert where[unseen] >= sum(RANK[c] == rank for c in game.hands[claimant]) + (RANK[game.claim_card] == rank)
        assert where.sum() >= 4 - 1e-6  # every card of the rank somewhere (some with two features)
        assert facts[-2] == pytest.approx(len(game.hands[claimant]) / 4)
        assert facts[-1] == pytest.approx((len(game.deck) - game.stock_pos) / NUM_CARD_IDS)


def test_r29_the_answer_head_reads_nothing_but_the_claim_view():
    """Changing every input the view does not read leaves believe/challenge exactly as they
    were (and moves the card logits); changing one it reads moves them."""
    torch.manual_seed(0)
    network = policy_network(BLUFF, (32,), answer_hidden_sizes=(16,))
    with torch.no_grad():  # a head with real weights (the initial ones are near zero)
        for p in network.answer_head.parameters():
            p.normal_()
    layout = ObservationLayout(BLUFF)
    k = layout.num_card_features
    top = layout.feature_index["pile_top"]
    for game, obs in answering_positions(10, seed=1):
        x = torch.as_tensor(obs)[None].clone()
        rank = RANK[game.pending_claim[1]]
        read = torch.zeros_like(x, dtype=torch.bool)
        for card in range(NUM_CARD_IDS):
            read[0, card * k + top] = True
            if RANK[card] == rank:
                read[0, card * k : card * k + k] = True
        read[0, layout.by_name["hand_sizes"].slice] = True
        read[0, layout.by_name["claimant"].slice] = True
        read[0, layout.by_name["stock_size"].slice] = True
        noisy = torch.where(read, x, x + torch.rand_like(x))
        with torch.no_grad():
            before, after = network(x), network(noisy)
        assert torch.equal(before[:, BELIEVE:], after[:, BELIEVE:])
        assert not torch.equal(before[:, :BELIEVE], after[:, :BELIEVE])
        lone_rank_card = next(c for c in range(NUM_CARD_IDS) if RANK[c] == rank)
        moved = x.clone()
        moved[0, lone_rank_card * k + layout.feature_index["hand"]] += 1.0
        with torch.no_grad():
            assert not torch.equal(network(moved)[:, BELIEVE:], before[:, BELIEVE:])


def test_r29_an_answer_head_needs_the_bluff_variant(tmp_path):
    plain = make_settings(num_players=2)
    layout = ObservationLayout(plain)
    with pytest.raises(ValueError, match="needs the bluff variant"):
        policy_network(plain, (32,), answer_hidden_sizes=(8,))
    with pytest.raises(ValueError, match="needs the bluff variant"):
        ClaimView(layout)
    with pytest.raises(ValueError, match="answer_hidden_sizes needs the bluff variant"):
        Trainer(tiny_config(tmp_path, answer_hidden_sizes=(8,)))
    assert policy_network(BLUFF, (32,)).extension is None  # the default: answers from the context


def test_r29_a_policy_with_an_answer_head_is_saved_loaded_resumed_and_exploited_with_it(tmp_path):
    trainer = train_bluff(tmp_path, "head", answer_hidden_sizes=(8,), magnet_coef=0.1, magnet_every=2)
    policy = tmp_path / "head" / "policy"
    assert read_metadata(policy)["answer_hidden_sizes"] == [8]
    player = load_policy(policy)
    assert player.network.spec.answer_hidden_sizes == (8,) and player.play == "sample_bluffs"
    x = torch.as_tensor(answering_positions(1)[0][1])[None]
    with torch.no_grad():
        assert torch.equal(player.network(x), trainer.network.policy.cpu()(x))
    # A resumed run rebuilds the head from its config and goes on.
    resumed = run(tiny_config(tmp_path, out_dir=str(tmp_path / "head")), resume=True, progress=False,
                  resume_changes={"total_steps": 16 * 8 * 8})
    assert resumed.network.policy.spec.answer_hidden_sizes == (8,) and resumed.step > trainer.step
    # A warm-started best response keeps the target's head; a fresh one answers from its context.
    _, warm = resolve(ExploitConfig(target=str(policy), warm_start=True, out_dir=str(tmp_path / "x")))
    _, fresh = resolve(ExploitConfig(target=str(policy), out_dir=str(tmp_path / "y")))
    assert warm.answer_hidden_sizes == (8,) and fresh.answer_hidden_sizes == ()
    # A run of other answer widths cannot start from it.
    with pytest.raises(CheckpointError, match="answer_hidden_sizes"):
        Trainer(tiny_config(tmp_path, bluff=True, target=None, init_from=str(policy), answer_hidden_sizes=(4,)))
    with pytest.raises(CheckpointError, match="answer_hidden_sizes"):
        Trainer(tiny_config(tmp_path, bluff=True, target=None, init_from=str(policy)))


def test_r29_a_run_with_an_answer_head_starts_from_a_policy_without_one(tmp_path, headless):
    """Everything but the new head is the starting policy's; the head starts near 50/50."""
    start = load_policy(headless).network
    trainer = Trainer(tiny_config(tmp_path, bluff=True, target=None, init_from=headless, answer_hidden_sizes=(8,)))
    mine = trainer.network.policy.state_dict()
    for key, value in start.state_dict().items():
        assert torch.equal(mine[key], value), key
    assert {k for k in mine if k not in start.state_dict()} == {k for k in mine if k.startswith("answer_head.")}
    x = torch.as_tensor(answering_positions(1)[0][1])[None]
    with torch.no_grad():
        p = torch.softmax(trainer.network.policy(x)[0, BELIEVE : CHALLENGE + 1], 0)
    assert p.tolist() == pytest.approx([0.5, 0.5], abs=0.02)


def test_r29_a_checkpoint_names_its_answer_head_as_the_schema_allows(tmp_path, headless):
    copy = tmp_path / "copy"
    shutil.copytree(headless, copy)
    metadata = json.loads((copy / "metadata.json").read_text())
    for bad, message in (([0], "widths"), ("32", "list"), ([8] * 99, "list")):
        (copy / "metadata.json").write_text(json.dumps({**metadata, "answer_hidden_sizes": bad}))
        with pytest.raises(CheckpointError, match="answer_hidden_sizes"):
            read_metadata(copy)
    # Declared but absent from the weights: the shapes do not match.
    (copy / "metadata.json").write_text(json.dumps({**metadata, "answer_hidden_sizes": [8]}))
    with pytest.raises(CheckpointError):
        load_policy(copy)
    (copy / "metadata.json").write_text(json.dumps({**metadata, "answer_hidden_sizes": []}))
    assert load_policy(copy).network.extension is None
    plain = json.loads((ROOT / "checkpoints" / "pisti-2p" / "metadata.json").read_text())
    shutil.rmtree(copy)
    shutil.copytree(ROOT / "checkpoints" / "pisti-2p", copy)
    (copy / "metadata.json").write_text(json.dumps({**plain, "answer_hidden_sizes": [8]}))
    with pytest.raises(CheckpointError, match="bluff variant"):
        read_metadata(copy)


def test_r29_a_frozen_answer_head_keeps_its_weights_while_the_rest_learns_and_resumes(tmp_path):
    """``freeze_answer_head``: the claims and the cards learn, the answers stay the starting
    policy's, through a resume too (the optimizer holds no moments for the head)."""
    train_bluff(tmp_path, "start", answer_hidden_sizes=(8,))
    start = tmp_path / "start" / "policy"
    before = load_policy(start).network.state_dict()
    trainer = train_bluff(tmp_path, "frozen", answer_hidden_sizes=(8,), init_from=str(start), freeze_answer_head=True,
                     checkpoint_every=2)
    after = trainer.network.policy.cpu().state_dict()
    changed = {k for k in before if not torch.equal(before[k], after[k])}
    assert changed and not any(k.startswith("answer_head.") for k in changed)
    assert all(not p.requires_grad for p in trainer.network.policy.answer_head.parameters())
    resumed = run(tiny_config(tmp_path, out_dir=str(tmp_path / "frozen")), resume=True, progress=False,
                  resume_changes={"total_steps": 16 * 8 * 10})
    assert resumed.config.freeze_answer_head and resumed.step > trainer.step
    again = resumed.network.policy.cpu().state_dict()
    for key in before:
        assert torch.equal(before[key], again[key]) == key.startswith("answer_head."), key


def test_r29_freezing_the_answer_head_needs_a_head_and_a_start_with_one(tmp_path, headless):
    with pytest.raises(ValueError, match="freeze_answer_head needs answer_hidden_sizes"):
        Trainer(tiny_config(tmp_path, bluff=True, target=None, freeze_answer_head=True))
    with pytest.raises(ValueError, match="freeze_answer_head needs init_from"):
        Trainer(tiny_config(tmp_path, bluff=True, target=None, answer_hidden_sizes=(8,), freeze_answer_head=True))
    with pytest.raises(CheckpointError, match="no answer head to freeze"):
        Trainer(tiny_config(tmp_path, bluff=True, target=None, init_from=headless, answer_hidden_sizes=(8,),
                            freeze_answer_head=True))
