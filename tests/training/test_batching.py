"""Batches: fields, shapes, masks and BOS/EOS placement; length bucketing; seeded shuffling whose
position resumes exactly; every example once per epoch."""

import json
import random

import numpy as np
import pytest

from transformer.data import Example, Vocab
from transformer.data.batching import (
    Batch,
    BatchIterator,
    batches_in_order,
    encode_pairs,
    make_batch,
)

WORDS = [f"w{i}" for i in range(30)]


@pytest.fixture(scope="module")
def vocab():
    return Vocab.build([WORDS])


def random_pairs(vocab, count, seed=0, max_length=20):
    """`count` (source ids, target ids) pairs of 1..max_length random words each."""
    rng = random.Random(seed)

    def sentence():
        return vocab.encode(rng.choices(WORDS, k=rng.randint(1, max_length)))

    return [(sentence(), sentence()) for _ in range(count)]


def padding(batch):
    """Pad positions of a batch, source and target sides together."""
    return int((batch.src.numpy() == 0).sum() + (batch.tgt_out.numpy() == 0).sum())


def one_epoch(iterator):
    """The batches of the iterator's current epoch; the iterator is left at the start of the
    next epoch, with nothing of it taken."""
    epoch, batches = iterator.epoch, []
    while True:
        batch = iterator.next_batch()
        if iterator.epoch != epoch:  # that was the first batch of the next epoch: give it back
            iterator.load_state_dict({"epoch": iterator.epoch, "position": 0})
            return batches
        batches.append(batch)


# ----- one batch ------------------------------------------------------------------------------

def test_a_batch_has_the_conventions_fields_shapes_and_dtypes(vocab):
    pairs = [([4, 5, 6], [7, 8]), ([9], [10, 11, 12, 13])]
    batch = make_batch(pairs, [0, 1], vocab)
    assert isinstance(batch, Batch)
    assert batch.src.shape == (2, 3)
    assert batch.tgt_in.shape == batch.tgt_out.shape == (2, 5)  # longest target + BOS/EOS
    for ids in (batch.src, batch.tgt_in, batch.tgt_out):
        assert ids.dtype == np.int64
    assert batch.src_mask.shape == (2, 1, 1, 3) and batch.src_mask.dtype == np.bool_
    assert batch.tgt_mask.shape == (1, 1, 5, 5) and batch.tgt_mask.dtype == np.bool_
    assert batch.rows == [0, 1]


def test_bos_starts_tgt_in_and_eos_ends_tgt_out_then_padding(vocab):
    pad, bos, eos = vocab.pad_id, vocab.bos_id, vocab.eos_id
    pairs = [([4, 5, 6], [7, 8]), ([9], [10, 11, 12, 13])]
    batch = make_batch(pairs, [0, 1], vocab)
    np.testing.assert_array_equal(batch.src.numpy(), [[4, 5, 6], [9, pad, pad]])
    np.testing.assert_array_equal(batch.tgt_in.numpy(), [[bos, 7, 8, pad, pad],
                                                         [bos, 10, 11, 12, 13]])
    np.testing.assert_array_equal(batch.tgt_out.numpy(), [[7, 8, eos, pad, pad],
                                                          [10, 11, 12, 13, eos]])


def test_masks_are_true_where_masked_out(vocab):
    batch = make_batch([([4, 5, 6], [7, 8]), ([9], [10])], [0, 1], vocab)
    np.testing.assert_array_equal(batch.src_mask.numpy()[:, 0, 0],
                                  [[False, False, False], [False, True, True]])
    causal = batch.tgt_mask.numpy()[0, 0]
    np.testing.assert_array_equal(causal, np.triu(np.ones((3, 3), bool), k=1))  # the future


def test_n_tokens_counts_the_real_target_tokens_eos_included(vocab):
    pairs = [([4], [7, 8]), ([9], [10, 11, 12, 13]), ([5, 6], [])]
    batch = make_batch(pairs, [0, 1, 2], vocab)
    assert batch.n_tokens == (2 + 1) + (4 + 1) + (0 + 1)
    assert batch.n_tokens == int((batch.tgt_out.numpy() != vocab.pad_id).sum())


def test_rows_select_pairs_in_the_given_order(vocab):
    pairs = [([4], [5]), ([6], [7]), ([8], [9])]
    batch = make_batch(pairs, [2, 0], vocab)
    np.testing.assert_array_equal(batch.src.numpy(), [[8], [4]])
    assert batch.rows == [2, 0]


def test_encode_pairs_gives_ids_without_bos_or_eos(vocab):
    pairs = encode_pairs([Example("w1 w2", "w3", "test")], vocab)
    assert pairs == [(vocab.encode(["w1", "w2"]), vocab.encode(["w3"]))]


# ----- the training iterator ------------------------------------------------------------------

def test_an_epoch_covers_every_example_exactly_once(vocab):
    pairs = random_pairs(vocab, 1000)
    iterator = BatchIterator(pairs, vocab, batch_size=16, seed=0)
    for epoch in range(2):
        assert iterator.epoch == epoch
        rows = [row for batch in one_epoch(iterator) for row in batch.rows]
        assert sorted(rows) == list(range(len(pairs)))


def test_each_epoch_has_its_own_order(vocab):
    iterator = BatchIterator(random_pairs(vocab, 300), vocab, batch_size=16, seed=0)
    first = [batch.rows for batch in one_epoch(iterator)]
    second = [batch.rows for batch in one_epoch(iterator)]
    assert first != second


def test_length_bucketing_pads_far_less_than_random_batches(vocab):
    pairs = random_pairs(vocab, 3200)
    batch_size = 32
    bucketed = sum(padding(b) for b in one_epoch(BatchIterator(pairs, vocab, batch_size)))
    order = np.random.default_rng(0).permutation(len(pairs)).tolist()
    shuffled = sum(padding(make_batch(pairs, order[i:i + batch_size], vocab))
                   for i in range(0, len(order), batch_size))
    assert bucketed < 0.5 * shuffled


def test_shuffling_is_determined_by_the_seed(vocab):
    pairs = random_pairs(vocab, 500)

    def sequence(seed):
        iterator = BatchIterator(pairs, vocab, batch_size=16, seed=seed)
        return [iterator.next_batch().rows for _ in range(60)]  # into the second epoch

    assert sequence(7) == sequence(7)
    assert sequence(7) != sequence(8)


@pytest.mark.parametrize("where", ["start", "inside", "end of the epoch"])
def test_state_dict_resumes_the_exact_batch_sequence(vocab, where):
    pairs = random_pairs(vocab, 500)
    per_epoch = len(one_epoch(BatchIterator(pairs, vocab, batch_size=16, seed=3)))
    taken = {"start": 0, "inside": 5, "end of the epoch": per_epoch - 1}[where]
    iterator = BatchIterator(pairs, vocab, batch_size=16, seed=3)
    for _ in range(taken):
        iterator.next_batch()
    state = json.loads(json.dumps(iterator.state_dict()))  # as a checkpoint stores it
    expected = [iterator.next_batch() for _ in range(10)]

    resumed = BatchIterator(pairs, vocab, batch_size=16, seed=3)
    resumed.load_state_dict(state)
    for want, got in zip(expected, (resumed.next_batch() for _ in range(10))):
        assert got.rows == want.rows
        np.testing.assert_array_equal(got.src.numpy(), want.src.numpy())
        np.testing.assert_array_equal(got.tgt_out.numpy(), want.tgt_out.numpy())
    assert resumed.state_dict() == iterator.state_dict()


# ----- evaluation order -----------------------------------------------------------------------

def test_batches_in_order_give_every_pair_once_shortest_sources_first(vocab):
    pairs = random_pairs(vocab, 100)
    batches = list(batches_in_order(pairs, vocab, batch_size=16))
    rows = [row for batch in batches for row in batch.rows]
    assert sorted(rows) == list(range(len(pairs)))
    lengths = [len(pairs[row][0]) for row in rows]
    assert lengths == sorted(lengths)
    for batch in batches:  # each row holds the pair it names
        for i, row in enumerate(batch.rows):
            source = batch.src.numpy()[i]
            assert source[:len(pairs[row][0])].tolist() == pairs[row][0]


def test_ids_outside_the_vocabulary_are_refused_where_the_batch_is_built(vocab):
    """Checked on the host: a GPU would wrap an id out of range into another embedding row."""
    pairs = [([3, len(vocab) + 2], [4])]
    with pytest.raises(IndexError, match=rf"make_batch: token ids must be in \[0, {len(vocab)}\)"):
        make_batch(pairs, [0], vocab)


# ----- target-side word dropout -----------------------------------------------------------------

def test_target_dropout_reads_a_share_of_the_decoders_input_as_unk(vocab):
    pairs = random_pairs(vocab, 2000)
    plain = BatchIterator(pairs, vocab, batch_size=64, seed=4)
    dropped = BatchIterator(pairs, vocab, batch_size=64, seed=4, target_dropout=0.25)
    changed = tokens = 0
    for _ in range(20):
        want, got = plain.next_batch(), dropped.next_batch()
        assert got.rows == want.rows
        np.testing.assert_array_equal(got.src.numpy(), want.src.numpy())
        np.testing.assert_array_equal(got.tgt_out.numpy(), want.tgt_out.numpy())  # the targets
        before, after = want.tgt_in.numpy(), got.tgt_in.numpy()
        np.testing.assert_array_equal(after[:, 0], vocab.bos_id)  # BOS is never dropped
        np.testing.assert_array_equal(after == vocab.pad_id, before == vocab.pad_id)
        differ = after != before
        assert (after[differ] == vocab.unk_id).all()
        changed += int(differ.sum())
        tokens += int((before[:, 1:] != vocab.pad_id).sum())
    assert 0.22 < changed / tokens < 0.28


def test_target_dropout_draws_the_same_tokens_after_a_resume_and_on_every_shard(vocab):
    pairs = random_pairs(vocab, 500)
    iterator = BatchIterator(pairs, vocab, batch_size=16, seed=3, target_dropout=0.3)
    for _ in range(7):
        iterator.next_batch()
    state = iterator.state_dict()
    expected = [iterator.next_batch().tgt_in.numpy() for _ in range(5)]
    resumed = BatchIterator(pairs, vocab, batch_size=16, seed=3, target_dropout=0.3)
    resumed.load_state_dict(state)
    for want in expected:
        np.testing.assert_array_equal(resumed.next_batch().tgt_in.numpy(), want)
    ranks = [BatchIterator(pairs, vocab, 16, seed=3, target_dropout=0.3) for _ in range(2)]
    shards = [rank.next_shards(2, range(part, part + 1))[0][0] for part, rank in enumerate(ranks)]
    again = BatchIterator(pairs, vocab, 16, seed=3, target_dropout=0.3).next_shards(2, range(2))
    for mine, whole in zip(shards, again[0]):
        np.testing.assert_array_equal(mine.tgt_in.numpy(), whole.tgt_in.numpy())
