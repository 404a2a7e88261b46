"""The main job's defaults live in one object, transformer.main_job.MAIN_JOB (a RunSpec): the
example script starts a new run with exactly them and formats its help from them, and every
default that the README and the docs state is the object's."""

import re
from dataclasses import asdict
from pathlib import Path

import pytest

from transformer.main_job import FLOW_EVERY, MAIN_JOB

REPO = Path(__file__).resolve().parents[2]

# Where a default of the main job is stated: the file, and the statement with each figure as a
# named group (the name of what it states, in `stated_values`).
STATEMENTS = [
    ("README.md", r"\(d_model (?P<d_model>\d+), (?P<n_heads>\d+) heads, "
                  r"(?P<n_encoder_layers>\d+)\+(?P<n_decoder_layers>\d+) layers\) trains for "
                  r"(?P<steps>\d+) steps, (?P<target_dropout_percent>\d+)% of the decoder's "
                  r"input words hidden"),
    ("README.md", r"validating every (?P<eval_every>\d+) steps"),
    ("docs/data.md", r"The default `python examples/train_translation.py`: d_model "
                     r"(?P<d_model>\d+), (?P<n_heads>\d+) heads, (?P<n_encoder_layers>\d+)\+"
                     r"(?P<n_decoder_layers>\d+) layers, (?P<steps>\d+) steps of "
                     r"(?P<batch_size>\d+) pairs"),
    ("docs/data.md", r"\(`--lr-factor (?P<lr_factor>[\d.]+)`: a peak of (?P<peak_lr>[\d.e-]+) "
                     r"at step (?P<warmup_steps>\d+)\), then [^(]*"
                     r"\(`--schedule (?P<schedule>\w+)`\), target-side word dropout "
                     r"(?P<target_dropout>[\d.]+), and a moving average of the weights "
                     r"\(`--ema-decay (?P<ema_decay>[\d.]+)`"),
]


def object_values():
    """What each statement's names mean, from MAIN_JOB."""
    training = asdict(MAIN_JOB.training)
    return {**MAIN_JOB.model, **training, "peak_lr": MAIN_JOB.peak_lr(),
            "target_dropout_percent": 100 * training["target_dropout"]}


def stated_differences(texts, statements=STATEMENTS):
    """(file, name, stated, the object's) for each stated figure that is not the object's,
    and (file, pattern, None, None) for a statement not found. `texts`: file -> its text."""
    values, differences = object_values(), []
    for file, pattern in statements:
        found = re.search(pattern, " ".join(texts[file].split()))  # lines joined
        if found is None:
            differences.append((file, pattern, None, None))
            continue
        for name, stated in found.groupdict().items():
            expected = values[name]
            if stated != expected if isinstance(expected, str) else \
                    float(stated) != rounded_as(stated, expected):
                differences.append((file, name, stated, expected))
    return differences


def rounded_as(stated, value):
    """`value` rounded as `stated` is written: to its decimals (of its mantissa: 3.1e-3)."""
    mantissa, exponent, _ = stated.partition("e")
    decimals = len(mantissa.partition(".")[2])
    return float(f"{value:.{decimals}{exponent or 'f'}}")


def read_texts():
    return {file: (REPO / file).read_text(encoding="utf-8") for file, _ in STATEMENTS}


def test_each_default_the_readme_and_docs_state_is_the_objects():
    assert stated_differences(read_texts()) == []


def test_a_stated_default_that_differs_from_the_object_fails():
    texts = read_texts()
    steps, ema = MAIN_JOB.training.steps, MAIN_JOB.training.ema_decay
    texts["README.md"] = texts["README.md"].replace(f"trains for {steps} steps",
                                                    f"trains for {steps + 1000} steps")
    texts["docs/data.md"] = texts["docs/data.md"].replace(
        f"`--ema-decay {ema}`", "`--ema-decay 0.99`").replace(
        f"`--schedule {MAIN_JOB.training.schedule}`", "`--schedule other`")
    assert stated_differences(texts) == [
        ("README.md", "steps", str(steps + 1000), steps),
        ("docs/data.md", "schedule", "other", MAIN_JOB.training.schedule),
        ("docs/data.md", "ema_decay", "0.99", ema)]
    texts["README.md"] = texts["README.md"].replace("validating every", "checking every")
    assert ("README.md", STATEMENTS[1][1], None, None) in stated_differences(texts)


def test_peak_rates_are_compared_as_rounded():
    lr = MAIN_JOB.peak_lr()
    assert stated_differences({"f": f"peak {lr:.1e}"}, [("f", r"peak (?P<peak_lr>\S+)")]) == []
    assert stated_differences({"f": f"peak {1.1 * lr:.1e}"},
                              [("f", r"peak (?P<peak_lr>\S+)")]) != []


@pytest.fixture
def started(example_script, monkeypatch):
    """run(argv) -> ("start", spec, out, options) or ("resume", out, changes, options): what
    the example passes to start_run or resume_run."""
    script = example_script("train_translation")
    calls = []
    monkeypatch.setattr(script, "start_run", lambda spec, out, **options:
                        calls.append(("start", spec, out, options)) or {})
    monkeypatch.setattr(script, "resume_run", lambda out, changes, **options:
                        calls.append(("resume", out, changes, options)) or {})

    def run(*argv):
        assert script.main(list(argv)) == 0
        return calls.pop()

    return run, script


def test_the_example_starts_a_new_run_with_the_main_jobs_settings(started):
    run, _ = started
    kind, spec, out, options = run()
    assert (kind, spec, out) == ("start", MAIN_JOB, f"runs/{MAIN_JOB.task.name}")
    assert options == {"overwrite": False, "device": "cpu", "communicator": None}
    _, spec, _, _ = run("--steps", "10", "--eval-every", "5", "--no-progress", "--layers", "3")
    assert spec == MAIN_JOB.with_changes({
        "training.steps": 10, "training.eval_every": 5, "training.checkpoint_every": 5,
        "training.progress": False, "model.n_encoder_layers": 3,
        "model.n_decoder_layers": 3})
    kind, out, changes, _ = run("--resume", "--steps", "10")  # a resumed run keeps its own
    assert (kind, out, changes) == ("resume", f"runs/{MAIN_JOB.task.name}",
                                    {"training.steps": 10})


def test_the_examples_help_states_the_objects_defaults(started, capsys, monkeypatch):
    _, script = started
    monkeypatch.setenv("COLUMNS", "200")  # no flag broken over two lines
    with pytest.raises(SystemExit):
        script.parse_arguments(["--help"])
    text = " ".join(capsys.readouterr().out.split())
    training = MAIN_JOB.training
    for default in (training.steps, training.batch_size, training.warmup_steps,
                    training.lr_factor, training.target_dropout, training.ema_decay,
                    training.eval_every, MAIN_JOB.monitors.samples, FLOW_EVERY,
                    *MAIN_JOB.model.values()):
        assert f"default {default}" in text
    peak = f"{MAIN_JOB.peak_lr():.1e}".replace("e-0", "e-")  # 3.1e-3: 0.5 / sqrt(64 x 400)
    assert f"the rate peaks at {peak})" in text
    assert "only --steps, --eval-every, --sync-every, --time-limit, --accumulate, " \
           "--no-progress, --samples, --record-flow and --tensorboard may change" in text
