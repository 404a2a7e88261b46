"""Peak memory (RSS) of reading a pairs TSV file and batching it, at several corpus sizes: the
growth per line beyond a fixed base is what the streaming reader keeps per corpus line.

For each size, a file of that many generated lines (distinct sentence pairs of 4 to 14 words,
about 90 bytes a line) is written to a temporary folder; a fresh process then reads it with
`transformer.data.corpus.PairsFile`, splits it, and takes 20 training batches from a
`BatchIterator` over it (word-level vocabulary of the generator's words). Each process
reports its peak RSS; the growth between two sizes, divided by the lines between them, is
the memory per corpus line.

    python benchmarks/corpus_memory.py [--lines 100000 1000000 3000000] [--json]

With `--json`, one record per size, one per line (`figure` "corpus_peak_rss"; `median_ms` is
the reading and splitting time of that one run), then a summary record with
`bytes_per_line` between the smallest and the largest size.
"""

import argparse
import json
import random
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from transformer import cli

WORDS = [f"{stem}{ending}" for stem in ("haus", "baum", "weg", "tag", "licht", "wort", "zeit",
                                         "hand", "land", "see") for ending in
         ("", "e", "en", "er", "es", "chen", "lein", "ung", "heit", "ig")]
BATCHES = 20


def write_corpus(path, lines, seed=0):
    """`lines` distinct generated pairs (each target names its line, so none repeats)."""
    rng = random.Random(seed)
    with open(path, "w", encoding="utf-8") as file:
        for number in range(lines):
            source = " ".join(rng.choices(WORDS, k=rng.randint(4, 14)))
            target = " ".join(rng.choices(WORDS, k=rng.randint(4, 14)))
            file.write(f"{source} {number}\t{target} {number}\n")


def measure(path):
    """Read, split and batch the corpus at `path` in this process: a record."""
    from transformer.data import Vocab
    from transformer.data.batching import BatchIterator, encode_pairs
    from transformer.data.corpus import PairsFile

    vocab = Vocab.build([WORDS])
    start = time.perf_counter()
    corpus = PairsFile(path)
    splits = corpus.split(seed=0)
    elapsed_ms = (time.perf_counter() - start) * 1e3
    batches = BatchIterator(encode_pairs(splits["train"], vocab), vocab, batch_size=64)
    tokens = sum(batches.next_batch().n_tokens for _ in range(BATCHES))
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"config": f"{len(corpus)} lines", "framework": "minigrad", "device": "cpu",
            "figure": "corpus_peak_rss", "lines": len(corpus),
            "train": len(splits["train"]), "valid": len(splits["valid"]),
            "test": len(splits["test"]), "batch_tokens": tokens,
            "median_ms": round(elapsed_ms, 1), "min_ms": round(elapsed_ms, 1),
            "max_ms": round(elapsed_ms, 1), "peak_rss_mb": round(peak_mb, 1),
            "file_mb": round(Path(path).stat().st_size / 2**20, 1)}


def run_sizes(sizes, folder):
    """One record per size, each measured in a fresh process, and the summary record."""
    records = []
    for lines in sizes:
        path = Path(folder) / f"corpus-{lines}.tsv"
        write_corpus(path, lines)
        result = subprocess.run([sys.executable, __file__, "--measure", str(path)],
                                capture_output=True, text=True, check=True)
        records.append(json.loads(result.stdout.splitlines()[-1]))
        path.unlink()
    low, high = records[0], records[-1]
    growth = (high["peak_rss_mb"] - low["peak_rss_mb"]) * 2**20
    per_line = growth / max(high["lines"] - low["lines"], 1)
    summary = {"figure": "corpus_bytes_per_line", "from_lines": low["lines"],
               "to_lines": high["lines"], "bytes_per_line": round(per_line, 1),
               "base_rss_mb": low["peak_rss_mb"]}
    return records, summary


def main(argv=None):
    parser = cli.ArgumentParser(description=__doc__)
    parser.add_argument("--lines", type=cli.positive_int, nargs="+",
                        default=[100_000, 1_000_000, 3_000_000],
                        help="corpus sizes, smallest first (default 0.1M 1M 3M)")
    parser.add_argument("--json", action="store_true", help="JSON records, one per line")
    parser.add_argument("--measure", help=argparse.SUPPRESS)  # the child process
    args = parser.parse_args(argv)
    if args.measure:
        print(json.dumps(measure(args.measure)))
        return 0
    if len(args.lines) < 2 or args.lines != sorted(args.lines):
        parser.error(f"--lines {' '.join(map(str, args.lines))}: give at least two sizes, "
                     "smallest first")
    with tempfile.TemporaryDirectory() as folder:
        records, summary = run_sizes(args.lines, folder)
    for record in records:
        print(json.dumps(record) if args.json else
              f"{record['lines']:>9} lines ({record['file_mb']:>6.1f} MB file): peak RSS "
              f"{record['peak_rss_mb']:7.1f} MB, read and split in {record['median_ms']:.0f} "
              "ms")
    print(json.dumps(summary) if args.json else
          f"growth {summary['bytes_per_line']:.1f} bytes per corpus line from "
          f"{summary['from_lines']} to {summary['to_lines']} lines (base "
          f"{summary['base_rss_mb']:.1f} MB)")
    return 0


if __name__ == "__main__":
    cli.run(main)
