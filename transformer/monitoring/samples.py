"""Sample translations during training: at each validation, the first few validation
sentences translated greedily (with the weights validation judges), shown above the progress
bar and appended to the run folder's samples.jsonl."""

from typing import Any

import minigrad as mg

from ..evaluation import translate_ids
from ..training import Callback

SAMPLES_FILE = "samples.jsonl"


class SampleTranslations(Callback):
    """A Trainer callback: at each validation, translate `examples` (Examples with `src` and
    `tgt`), print each on one line (`trainer.write`, see `sample_line`), and append one record
    per sentence to samples.jsonl: `step`, `index` (from 0), `source`, `reference`, `output`.
    `latest` holds the last validation's records."""

    def __init__(self, examples):
        self.examples = list(examples)
        self.latest = []

    def on_validation(self, trainer, step, record) -> None:
        if not self.examples:
            return
        self.latest = self.translate(trainer, step)
        for sample in self.latest:
            trainer.write(sample_line(sample))
        if trainer.folder is not None:
            for sample in self.latest:
                trainer.folder.append_record(SAMPLES_FILE, sample)

    def translate(self, trainer, step) -> list[dict[str, Any]]:
        """The records of `step`: each example's greedy translation by the trainer's model,
        with the weights the run is judged by (its moving average where it keeps one)."""
        vocab, tokenizer, model = trainer.vocab, trainer.tokenizer, trainer.model
        ids = [vocab.encode(tokenizer.source(example.src)) for example in self.examples]
        width = max(len(row) for row in ids)
        src = mg.tensor([row + [vocab.pad_id] * (width - len(row)) for row in ids],
                        dtype="int64", device=model.device)
        was_training = model.training
        model.eval()
        try:
            with trainer.evaluated_weights(), mg.no_grad():
                outputs = translate_ids(model, src, vocab)
        finally:
            model.train(was_training)
        return [{"step": step, "index": index, "source": example.src,
                 "reference": example.tgt,
                 "output": tokenizer.detokenize(vocab.decode(output))}
                for index, (example, output) in enumerate(zip(self.examples, outputs))]


def sample_line(sample) -> str:
    """One sample as printed: `    sample  SOURCE  =>  OUTPUT  (= reference)`, or with
    `(reference: REFERENCE)` where the output differs from it."""
    verdict = ("(= reference)" if sample["output"] == sample["reference"]
               else f"(reference: {sample['reference']})")
    return f"    sample  {sample['source']}  =>  {sample['output']}  {verdict}"


def read_samples(folder) -> dict[int, list[dict[str, Any]]]:
    """{step: [records of that validation, by index]} of a RunFolder's samples.jsonl ({} when
    the run recorded none)."""
    by_step: dict = {}
    for record in folder.records(SAMPLES_FILE):
        by_step.setdefault(record["step"], []).append(record)
    return {step: sorted(records, key=lambda r: r["index"])
            for step, records in sorted(by_step.items())}
