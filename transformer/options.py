"""The options of a training run on the command line: one row per option (the RunSpec
fields it sets, its flag, its parser, its help, whether a resumed run may change it). The
example scripts' parsers (`add_arguments`), the mapping from their flags to a RunSpec
(`changes`), the resumable fields (`RESUMABLE`) and the names in a resumed run's conflicts
(`flag_of`) all come from `OPTIONS`.

Adding a training option is a field of TrainingConfig (its rule declared on it) and one row
here."""

from __future__ import annotations

import argparse
import re
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from . import cli
from .data import TASKS
from .errors import ConfigError
from .main_job import FLOW_EVERY, MAIN_JOB
from .run_spec import RunSpec
from .training_config import SCHEDULES


@dataclass(frozen=True)
class Option:
    """`flag` sets every field of `fields` (RunSpec paths) to its value: the text parsed by
    `parse`, or for a switch (`parse` None) `switch`; given bare, a flag with a `bare` value
    takes it. `help` may name the job's `{default}` (of the first field), `{job}` and `{peak}`
    (the job's peak learning rate)."""

    flag: str
    fields: tuple[str, ...]
    parse: Callable[[str], Any] | None
    help: str
    group: str
    resumable: bool = False
    switch: Any = True
    bare: Any = None
    metavar: str | None = None


def _one_of(choices: Iterable[str]) -> Callable[[str], str]:
    choices = tuple(choices)

    def parse(text: str) -> str:
        if text not in choices:
            raise argparse.ArgumentTypeError(f"{text!r} is not one of {', '.join(choices)}")
        return text
    return parse


TASK, MODEL, TRAINING, WATCH = "task and data", "model", "training", \
    "seeing inside the run (docs/inspecting.md)"
OPTIONS = (
    Option("--task", ("task.name",), _one_of(TASKS), f"{' | '.join(TASKS)} (default "
           "{default})", TASK),
    Option("--data", ("task.data",), str, "a TSV file of 'source<TAB>target' lines (--task "
           "pairs; or the dictionary of de-en, the SWORD modules' folder of en-es-bible)", TASK),
    Option("--skip-bad-lines", ("task.skip_bad_lines",), None, "leave out the bad lines of "
           "--data (they are listed) instead of refusing the file", TASK),
    Option("--subword", ("tokenizer.subword",), cli.positive_int, "subword vocabulary: a "
           "SentencePiece model of at most PIECES pieces per language, trained on the train "
           "split (default: word-level)", TASK, metavar="PIECES"),
    Option("--d-model", ("model.d_model",), cli.positive_int, "default {default}", MODEL),
    Option("--heads", ("model.n_heads",), cli.positive_int, "default {default}", MODEL),
    Option("--layers", ("model.n_encoder_layers", "model.n_decoder_layers"), cli.positive_int,
           "encoder and decoder layers each (default {default})", MODEL),
    Option("--d-ff", ("model.d_ff",), cli.positive_int, "default {default}", MODEL),
    Option("--dropout", ("model.dropout",), cli.probability, "default {default}", MODEL),
    Option("--norm-first", ("model.norm_first",), None, "pre-LN instead of post-LN", MODEL),
    Option("--steps", ("training.steps",), cli.positive_int, "training steps (default "
           "{default}; with --resume: extend the run)", TRAINING, resumable=True),
    Option("--batch-size", ("training.batch_size",), cli.positive_int, "default {default}",
           TRAINING),
    Option("--warmup", ("training.warmup_steps",), cli.positive_int, "warmup steps (default "
           "{default})", TRAINING),
    Option("--lr-factor", ("training.lr_factor",), cli.positive_float, "scales the "
           "schedule's rate (default {default}: with d_model {job.model[d_model]} and "
           "{job.training.warmup_steps} warmup steps the rate peaks at {peak})", TRAINING),
    Option("--schedule", ("training.schedule",), _one_of(SCHEDULES), "noam: the paper's, the "
           "rate decaying as 1 / sqrt(step) after the warmup; cosine: the same warmup and "
           "peak, then a half cosine to 0 at the last step; a run no longer than its warmup "
           "only warms up (default {default})", TRAINING),
    Option("--target-dropout", ("training.target_dropout",), cli.probability, "target-side "
           "word dropout: replace this share of the decoder's input tokens by <unk> in "
           "training, so that it reads the source rather than its own prefix (default "
           "{default}; 0: off)", TRAINING, metavar="P"),
    Option("--ema-decay", ("training.ema_decay",), cli.probability, "validate, keep best.npz "
           "by and translate with a moving average of the weights, each step's weight 1 - "
           "DECAY (default {default}; 0: the weights as trained)", TRAINING, metavar="DECAY"),
    Option("--eval-every", ("training.eval_every", "training.checkpoint_every"),
           cli.positive_int, "validate and checkpoint every N steps (default {default})",
           TRAINING, resumable=True),
    Option("--sync-every", ("training.sync_every",), cli.positive_int, "read the loss from "
           "the device every N steps (default: the logging interval); between reads a GPU "
           "step never waits", TRAINING, resumable=True),
    Option("--time-limit", ("training.time_limit_s",), cli.positive_float, "stop training "
           "after this many seconds (default: no limit)", TRAINING, resumable=True),
    Option("--seed", ("training.seed",), cli.non_negative_int, "default {default}", TRAINING),
    Option("--accumulate", ("training.accumulate",), cli.positive_int, "micro-batches per "
           "step and rank (gradient accumulation; default {default}): the global batch is "
           "--batch-size all the same", TRAINING, resumable=True),
    Option("--no-progress", ("training.progress",), None, "log lines, no tqdm bar", TRAINING,
           resumable=True, switch=False),
    Option("--samples", ("monitors.samples",), cli.non_negative_int, "translate the first N "
           "validation sentences at each validation, print them and keep them in "
           "samples.jsonl (default {default}; 0: none)", WATCH, resumable=True, metavar="N"),
    Option("--record-flow", ("monitors.record_flow_every",), cli.positive_int, "record the "
           f"gradient flow every N steps (N: default {FLOW_EVERY}) into flow.jsonl, drawn in "
           "flow.png (without the flag: not recorded)", WATCH, resumable=True,
           bare=FLOW_EVERY, metavar="N"),
    Option("--tensorboard", ("monitors.tensorboard",), str, "also log to "
           "TensorBoard in DIR: scalars, the samples, histograms of the weights and gradients "
           "(pip install -e '.[tensorboard]')", WATCH, resumable=True, metavar="DIR"),
)

# The RunSpec fields without a flag, and why.
WITHOUT_FLAG = {
    **dict.fromkeys(("tokenizer.pieces", "tokenizer.digest"), "known once the subword "
                    "models are trained"),
    **dict.fromkeys(("model.src_vocab_size", "model.tgt_vocab_size", "model.share_embeddings",
                     "model.max_len", "model.pad_id"), "decided by the data and the "
                    "vocabulary (builders.build_model_config)"),
    **dict.fromkeys(("model.positional", "model.attention_dropout", "model.residual",
                     "model.activation", "training.label_smoothing", "training.clip_norm",
                     "training.log_every", "training.eval_examples"),
                    "a study's choice, set in a RunSpec (the main job keeps the paper's)"),
}

# What a resumed run may change: how long it goes on and how it reports (nothing that would
# make it differ from an uninterrupted run of the same length).
RESUMABLE = frozenset(path for option in OPTIONS if option.resumable for path in option.fields)
RESUMABLE_FLAGS = [option.flag for option in OPTIONS if option.resumable]


def flag_of(path: str) -> str:
    """The flag that sets the RunSpec field `path` (the path itself where none does)."""
    return next((option.flag for option in OPTIONS if path in option.fields), path)


def resumable_text() -> str:
    """"--steps, ... and --tensorboard": the flags a resumed run may change."""
    return f"{', '.join(RESUMABLE_FLAGS[:-1])} and {RESUMABLE_FLAGS[-1]}"


def add_arguments(parser: argparse.ArgumentParser, job: RunSpec = MAIN_JOB,
                  flags: Iterable[str] | None = None) -> None:
    """The rows of OPTIONS (those of `flags`, or all) as arguments of `parser`, in their
    groups, their help stating `job`'s values; a flag not given parses as None."""
    wanted = None if flags is None else set(flags)
    groups: dict[str, Any] = {}
    peak = f"{job.peak_lr():.1e}".replace("e-0", "e-")
    for option in OPTIONS:
        if wanted is not None and option.flag not in wanted:
            continue
        group = groups.get(option.group) or groups.setdefault(
            option.group, parser.add_argument_group(option.group))
        help_text = option.help.format(default=job.value(option.fields[0]), job=job,
                                       peak=peak)
        if option.parse is None:
            group.add_argument(option.flag, action="store_const", const=option.switch,
                               help=help_text)
        elif option.bare is not None:
            group.add_argument(option.flag, type=option.parse, nargs="?", const=option.bare,
                               metavar=option.metavar, help=help_text)
        else:
            group.add_argument(option.flag, type=option.parse, metavar=option.metavar,
                               help=help_text)
    unknown = (wanted or set()) - {option.flag for option in OPTIONS}
    if unknown:
        raise ValueError(f"add_arguments: no option {sorted(unknown)} in OPTIONS")


def changes(args: argparse.Namespace) -> dict[str, Any]:
    """{RunSpec path: value} of the options given on the command line."""
    given = {}
    for option in OPTIONS:
        value = getattr(args, _dest(option.flag), None)
        if value is not None:
            given.update(dict.fromkeys(option.fields, value))
    return given


def new_spec(parser: argparse.ArgumentParser, job: RunSpec, given: Mapping[str, Any],
             ) -> RunSpec:
    """`job` with the changes `given` (`changes(args)`), checked: a value that breaks a rule
    is `parser`'s error, one line naming the flags given for the fields it names."""
    try:
        return job.with_changes(given)
    except ConfigError as error:
        named = [_as_given(path, value) for path, value in given.items()
                 if re.search(rf"\b{_word(path)}\b", str(error))]
        parser.error(f"{' '.join(dict.fromkeys(named))}: {error}" if named else str(error))


def _word(path: str) -> str:
    """How a message names the field `path`: its name (the task's: "task")."""
    return "task" if path == "task.name" else path.partition(".")[2]


def _as_given(path: str, value: Any) -> str:
    """The flag of `path` as given: `--steps 5`, `--norm-first`."""
    option = next(option for option in OPTIONS if path in option.fields)
    return option.flag if option.parse is None else f"{option.flag} {value}"


def conflicts(spec: RunSpec, given: Mapping[str, Any]) -> list[tuple[str, Any, Any]]:
    """(flag, given, the spec's) for each change of `given` that a resumed run of `spec` may
    not make: a field outside RESUMABLE with another value."""
    return [(flag_of(path), value, spec.value(path)) for path, value in given.items()
            if path not in RESUMABLE and value != spec.value(path)]


def _dest(flag: str) -> str:
    return flag.lstrip("-").replace("-", "_")

