"""One batch plan for every rank: each rank of a data-parallel run builds the same global plan
and takes its shards of each global batch, so the shards of all ranks are the global batch,
in order, and every rank runs the same steps; a corpus file's pairs are sorted by their byte
lengths without being encoded."""

import pytest
from test_batching import WORDS, one_epoch, random_pairs

from transformer.data import Vocab
from transformer.data.batching import BatchIterator, encode_pairs
from transformer.data.corpus import PairsFile


@pytest.fixture(scope="module")
def vocab():
    return Vocab.build([WORDS])


@pytest.mark.parametrize("parts", [2, 3, 4])
def test_the_shards_of_every_rank_make_up_the_global_batch(vocab, parts):
    pairs = random_pairs(vocab, 1000)
    whole = BatchIterator(pairs, vocab, batch_size=16, seed=2)
    ranks = [BatchIterator(pairs, vocab, 16, seed=2) for _ in range(parts)]
    for _ in range(len(whole) + 3):  # into the second epoch
        batch = whole.next_batch()
        shares = [iterator.next_shards(parts, range(rank, rank + 1))
                  for rank, iterator in enumerate(ranks)]
        assert [row for shards, _ in shares for row in shards[0].rows] == batch.rows
        assert {tokens for _, tokens in shares} == {batch.n_tokens}


def test_a_rank_resumes_its_own_shards(vocab):
    pairs = random_pairs(vocab, 500)
    rank = BatchIterator(pairs, vocab, 16, seed=1)
    for _ in range(5):
        rank.next_shards(2, range(1, 2))
    resumed = BatchIterator(pairs, vocab, 16, seed=1)
    resumed.load_state_dict(rank.state_dict())
    assert resumed.next_shards(2, range(1, 2))[0][0].rows == \
        rank.next_shards(2, range(1, 2))[0][0].rows


def test_a_global_batch_too_small_for_its_shards_is_refused(vocab):
    pairs = random_pairs(vocab, 40)
    with pytest.raises(ValueError, match="cannot be cut into 32 shards"):
        BatchIterator(pairs, vocab, 16).next_shards(32, range(1))


def test_a_corpus_files_pairs_are_batched_by_byte_length_and_encoded_when_used(tmp_path,
                                                                                vocab):
    path = tmp_path / "c.tsv"
    path.write_text("".join(f"{'w1 ' * (i % 7)}{1000 + i}\t{'w2 ' * (i % 5)}{i}\n"
                            for i in range(300)), encoding="utf-8")
    train = PairsFile(path).split(seed=0)["train"]
    pairs = encode_pairs(train, vocab)
    assert not isinstance(pairs, list)
    batches = one_epoch(BatchIterator(pairs, vocab, batch_size=32, seed=0))
    assert sorted(r for b in batches for r in b.rows) == list(range(len(train)))
    for batch in batches:  # a pool sorted by source length: one or two lengths per batch
        lengths = {len(pairs[r][0]) for r in batch.rows}
        assert max(lengths) - min(lengths) <= 1
