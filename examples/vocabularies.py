"""Compare the word-level vocabulary of a task with subword ones: size, unknown tokens and
tokens per sentence on each held-out split (nothing is trained but the tokenizers).

    python examples/vocabularies.py --task de-en --subword 2000 4000
    python examples/vocabularies.py --task pairs --data my_pairs.tsv --subword 8000
"""

import statistics

from transformer import cli
from transformer.builders import build_tokenizer, build_vocab, load_splits, unknown_rate
from transformer.data import TASKS, WORDS


def report(name, splits, tokenizer):
    vocab = build_vocab(splits, tokenizer)
    for split in ("test", "compositional"):
        if split not in splits or not splits[split]:
            continue
        examples = splits[split]
        source = statistics.mean(len(tokenizer.source(e.src)) for e in examples)
        target = statistics.mean(len(tokenizer.target(e.tgt)) for e in examples)
        print(f"{name:<16} {len(vocab):>7} tokens  {split:<13} unknown "
              f"{unknown_rate(examples, vocab, tokenizer):6.2%}  tokens per sentence: source "
              f"{source:.1f}, target {target:.1f}")


def main(argv=None):
    parser = cli.ArgumentParser(description=__doc__)
    parser.add_argument("--task", choices=TASKS, default="toy-en-es")
    parser.add_argument("--data", help="the TSV file of --task pairs (or the dictionary)")
    parser.add_argument("--subword", type=cli.positive_int, nargs="+", default=[],
                        metavar="PIECES", help="subword sizes to compare (pieces per language)")
    parser.add_argument("--seed", type=cli.non_negative_int, default=0, help="the split's")
    args = parser.parse_args(argv)
    if args.task == "pairs" and args.data is None:
        parser.error("--task pairs needs --data FILE, a TSV file of 'source<TAB>target' lines")
    splits = load_splits(args.task, args.data, args.seed)
    report("word-level", splits, WORDS)
    for pieces in args.subword:
        report(f"--subword {pieces}", splits, build_tokenizer(splits, pieces))
    return 0


if __name__ == "__main__":
    cli.run(main)
