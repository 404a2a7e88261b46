"""One batch plan for every rank: each rank of a data-parallel run builds the same global plan
and takes its share, so the shares are disjoint, cover the epoch (but for fewer than
world_size batches cut at its end) and give every rank the same number of steps; a corpus
file's pairs are sorted by their byte lengths without being encoded."""

import pytest
from test_batching import WORDS, one_epoch, random_pairs

from transformer.data import Vocab
from transformer.data.batching import BatchIterator, encode_pairs
from transformer.data.corpus import PairsFile


@pytest.fixture(scope="module")
def vocab():
    return Vocab.build([WORDS])


def rows_of(batches):
    return [tuple(batch.rows) for batch in batches]


@pytest.mark.parametrize("world_size", [2, 3, 4])
def test_ranks_share_out_the_global_plan_in_equal_numbers_of_steps(vocab, world_size):
    pairs = random_pairs(vocab, 1000)
    whole = rows_of(one_epoch(BatchIterator(pairs, vocab, batch_size=16, seed=2)))
    shards = [rows_of(one_epoch(BatchIterator(pairs, vocab, 16, seed=2).shard(r, world_size)))
              for r in range(world_size)]
    assert len({len(shard) for shard in shards}) == 1  # the same number of steps
    assert shards[0] == whole[0::world_size][:len(shards[0])]
    taken = [batch for shard in shards for batch in shard]
    assert len(set(taken)) == len(taken)  # no batch twice
    assert set(taken) <= set(whole) and len(whole) - len(taken) < world_size


def test_a_rank_resumes_its_own_share(vocab):
    pairs = random_pairs(vocab, 500)
    rank = BatchIterator(pairs, vocab, 16, seed=1, rank=1, world_size=2)
    for _ in range(5):
        rank.next_batch()
    resumed = BatchIterator(pairs, vocab, 16, seed=1, rank=1, world_size=2)
    resumed.load_state_dict(rank.state_dict())
    assert resumed.next_batch().rows == rank.next_batch().rows


def test_bad_ranks_and_too_few_batches_are_refused(vocab):
    pairs = random_pairs(vocab, 40)
    with pytest.raises(ValueError, match="rank 2 is not one of world_size 2's ranks"):
        BatchIterator(pairs, vocab, 16, rank=2, world_size=2)
    with pytest.raises(ValueError, match="40 pairs make 3 batch\\(es\\) of 16, fewer than "
                                         "world_size 4"):
        BatchIterator(pairs, vocab, 16, world_size=4)


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
