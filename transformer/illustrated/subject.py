"""What the walkthrough is about: the model (a training run's checkpoint, or a freshly
initialized one), its vocabulary, and a sentence saying where they came from."""

from dataclasses import dataclass
from pathlib import Path

import numpy as np

import minigrad as mg

from ..builders import fresh_setup
from ..data import Vocab
from ..data.tokenizer import tokenize
from ..model import Transformer
from ..run_folder import RunFolder


@dataclass
class Subject:
    """The model (eval mode), its vocabulary, a Markdown sentence saying where it came from, the
    output folder of the figures, and their resolution."""

    model: Transformer
    vocab: Vocab
    origin: str
    out: Path
    trained: bool
    dpi: int = 72
    command: str = ""

    def tokens(self, sentence) -> list[str]:
        return tokenize(sentence)

    def tensor(self, array) -> mg.Tensor:
        """A float32 tensor on the model's device."""
        return mg.tensor(np.asarray(array, dtype=np.float32), device=self.model.device)

    def ids(self, tokens) -> mg.Tensor:
        """(1, len) int64 ids of `tokens` (unknown words as <unk>)."""
        return mg.tensor([self.vocab.encode(tokens)], dtype="int64", device=self.model.device)

    def unknown_words(self, tokens) -> str:
        """A Markdown note naming the words of `tokens` this vocabulary reads as <unk> ("" when
        it knows them all)."""
        unknown = self.vocab.unknown(tokens)
        return f"*Not in this vocabulary, read as `<unk>`: {', '.join(unknown)}.*" if unknown \
            else ""


def load_subject(checkpoint=None, which="best", out="runs/illustrated", model_options=None,
                 seed=0, dpi=72, device=None) -> Subject:
    """The model to illustrate: run folder `checkpoint`'s `which` checkpoint, or, without one,
    a model freshly initialized from `seed` on the toy-en-es vocabulary with the main job's
    configuration (`model_options` override its fields, e.g. a tiny model for tests)."""
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    if checkpoint is not None:
        folder = RunFolder(checkpoint)
        model, vocab = folder.load_model(which, device), folder.vocab()
        origin = _run_origin(folder, checkpoint, which)
        command = f"python examples/illustrated.py --checkpoint {checkpoint}" + \
            (f" --which {which}" if which != "best" else "")
    else:
        vocab, config = fresh_setup("toy-en-es", model_options, seed=seed)
        mg.manual_seed(seed)
        model = Transformer(config)
        if device is not None:
            model.to(device)
        origin = (f"**No checkpoint was given: this walkthrough uses a freshly initialized, "
                  f"untrained model** (seed {seed}), on the `toy-en-es` vocabulary built with "
                  "the default settings and the main job's model configuration. Every number "
                  "below is real, but the weights are random: expect nearly uniform attention "
                  "and nonsense translations. Run with `--checkpoint runs/toy-en-es` to see "
                  "the trained model.")
        command = "python examples/illustrated.py" + (f" --seed {seed}" if seed else "")
    command += f" --out {out}"
    return Subject(model.eval(), vocab, origin, out, checkpoint is not None, dpi, command)


def _run_origin(folder, checkpoint, which):
    """The sentence saying which run's checkpoint this is: its step, task and test scores,
    those the run folder records."""
    state = mg.load(folder.checkpoint(which))
    step = state.get("step")
    origin = (f"This walkthrough uses the trained model of the run folder `{checkpoint}` "
              f"(its `{which}.npz` checkpoint" +
              (f", saved at training step {step}" if step is not None else "") +
              (": the moving average of its weights" if "average" in state else "") + ")")
    task = folder.read_json("config.json").get("task", {}).get("name")
    if task:
        origin += f", trained on the `{task}` task"
    if folder.file("metrics.json").exists():
        metrics = folder.read_json("metrics.json")
        if "test_exact_match" in metrics:
            origin += (f"; it translates {metrics['test_exact_match']:.1%} of the test "
                       f"sentences exactly (BLEU {metrics.get('test_bleu', float('nan')):.1f})")
    return origin + "."
