"""How well each decoder layer's cross-attention aligns words, measured on the toy
English→Spanish grammar, whose lexicon knows which English word each Spanish word translates:
the figures behind the layer `translate.py --align` reads by default (docs/translating.md).

    python examples/alignment_layers.py --checkpoint runs/toy-en-es [--sentences 500]
    python examples/alignment_layers.py --checkpoint RUN --data pairs.tsv

The model scores the reference translations (teacher forcing: `Translator.score`) of the
first --sentences test sentences of toy-en-es (or of the 'source<TAB>target' lines of
--data), and its cross-attention is recorded. A target word has a gold source word when
exactly one source word is one of its English forms in the lexicon (nouns, adjectives and
verbs: "content"; el, la, los, las for "the": "articles"); others are not counted. Printed,
per decoder layer: the share of those target words whose hard alignment (the most attended
source word) is the gold one, from the heads' average (the rule `--align` uses) and from
each head alone.
"""

from collections import defaultdict

import numpy as np

from transformer import cli
from transformer.data import load_task
from transformer.data.lexicon import ADJECTIVES, ARTICLES, NOUNS, VERBS
from transformer.inspection import hard_alignment
from transformer.translator import Translator


def english_forms():
    """{Spanish word: the English words it translates}, from the grammar's lexicon."""
    forms = defaultdict(set)
    for noun in NOUNS:
        forms[noun.spanish].add(noun.english)
        if noun.countable:
            forms[noun.spanish_plural].add(noun.english_plural)
    for adjective in ADJECTIVES:
        for form in adjective.forms:
            forms[form].add(adjective.english)
    for verb in VERBS:
        for form in verb.spanish:
            forms[form].update(verb.english)
    for article in ARTICLES.values():
        forms[article].add("the")
    return forms


def read_pairs(path):
    """(source, target) of each 'source<TAB>target' line of `path`."""
    pairs = []
    with open(path, encoding="utf-8") as file:
        for number, line in enumerate(file, start=1):
            fields = line.rstrip("\n").split("\t")
            if len(fields) != 2 or not all(f.strip() for f in fields):
                raise cli.UsageError(f"--data {path} line {number} is not "
                                     "'source<TAB>target'")
            pairs.append(tuple(fields))
    return pairs


def agreement(results, forms):
    """{(kind, layer, head): [hit, ...]}: head "average" is the heads' average."""
    articles = set(ARTICLES.values())
    hits = defaultdict(list)
    for result in results:
        [translation] = result.translations
        source, words = result.source_tokens, translation.tokens[:-1]  # EOS aside
        aligned = {}  # (layer, head): the source word of each target word
        for layer, per_head in enumerate(translation.attention, start=1):
            aligned[(layer, "average")] = hard_alignment(per_head, range(len(source)),
                                                         range(len(words)))
            for head in range(1, len(per_head) + 1):
                aligned[(layer, head)] = hard_alignment(per_head[head - 1:head],
                                                        range(len(source)), range(len(words)))
        for target_index, word in enumerate(words):
            gold = [i for i, token in enumerate(source) if token in forms.get(word, ())]
            if len(gold) != 1:
                continue
            kind = "articles" if word in articles else "content"
            for (layer, head), pairs in aligned.items():
                hits[(kind, layer, head)].append(pairs[target_index][0] == gold[0])
    return hits


def main():
    parser = cli.ArgumentParser(description=__doc__)
    cli.add_checkpoint_arguments(parser)
    parser.add_argument("--data", help="'source<TAB>target' lines to align (default: the "
                                       "toy-en-es test split of the run's seed)")
    parser.add_argument("--sentences", type=cli.positive_int, default=500,
                        help="how many pairs to align (default 500)")
    args = parser.parse_args()
    folder, which = cli.run_checkpoint(args.checkpoint, args.which)
    if args.data is not None:
        pairs = read_pairs(args.data)[:args.sentences]
    else:
        seed = folder.spec().training.seed
        pairs = [(e.src, e.tgt) for e in load_task("toy-en-es", seed=seed)["test"]]
        pairs = pairs[:args.sentences]
    translator = Translator.from_checkpoint(folder.path, which)
    if translator.tokenizer.kind != "word":
        raise cli.UsageError(f"--checkpoint {args.checkpoint} is a subword run; the lexicon "
                             "aligns words: give a word-level run")
    results = translator.score([s for s, _ in pairs], [t for _, t in pairs], attention=True)
    hits = agreement(results, english_forms())
    heads = translator.model.config.n_heads
    print(f"hard alignment against the lexicon, {len(pairs)} sentence pairs: the share of "
          "target words aligned with their one gold source word")
    print(f"{'':10}{'layer':>6}{'words':>7}{'heads average':>15}"
          + "".join(f"{'head ' + str(h):>8}" for h in range(1, heads + 1)))
    for kind in ("content", "articles"):
        for layer in range(1, translator.model.config.n_decoder_layers + 1):
            counted = hits[(kind, layer, "average")]
            shares = [np.mean(hits[(kind, layer, head)]) if counted else float("nan")
                      for head in ["average", *range(1, heads + 1)]]
            print(f"{kind:10}{layer:>6}{len(counted):>7}{shares[0]:>15.3f}"
                  + "".join(f"{share:>8.3f}" for share in shares[1:]))


if __name__ == "__main__":
    cli.run(main)
