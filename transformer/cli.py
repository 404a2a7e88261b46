"""What every command-line tool of the project shares: flags checked as they are parsed, and
every mistake answered with one line on stderr instead of a traceback.

    parser = cli.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=cli.positive_int)
    ...
    if __name__ == "__main__":
        cli.run(main)

The line is `error: <what is wrong, naming the flag or file and the value, and what to do>`.
Exit status 2 is a usage error (a flag, an argument or an input file the user named, a path
that is missing or not what the flag takes, or a configuration they asked for, ConfigError:
fix the command line), 1 a failure while running (a damaged checkpoint, a missing device,
...), 130 an interrupt (the shell's convention for Ctrl-C). Every tool that reads a trained
run takes `--checkpoint` and `--which` from `add_checkpoint_arguments` and resolves them with
`run_checkpoint`, so that they word a wrong path alike; every tool that translates takes
`--beam` and `--length-penalty` from `add_decoding_arguments`.
`--debug` on the command line, or MINIGRAD_DEBUG=1 in the environment, shows the traceback.
"""

from __future__ import annotations

import argparse
import os
import re
import sys
import traceback
from pathlib import Path
from typing import TYPE_CHECKING, NoReturn

from minigrad.errors import ConfigError, MinigradError  # the engine's; transformer.errors'

#                                                         are narrower kinds of these
if TYPE_CHECKING:
    from .run_folder import RunFolder


class UsageError(Exception):
    """A flag, argument or input file of the command line is wrong (exit status 2)."""


class ArgumentParser(argparse.ArgumentParser):
    """argparse, with its errors as one `error: ...` line (argparse prints the usage first) and
    a `--debug` flag on every tool."""

    def __init__(self, *args, **kwargs) -> None:
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)
        self.add_argument("--debug", action="store_true",
                          help="show the full traceback of an error (or MINIGRAD_DEBUG=1)")

    def error(self, message) -> NoReturn:
        raise UsageError(f"{message} (see {self.prog} --help)")


def debugging(argv=None) -> bool:
    argv = sys.argv[1:] if argv is None else argv
    return "--debug" in argv or os.environ.get("MINIGRAD_DEBUG", "") not in ("", "0")


def run(main, argv=None):
    """Call `main()` and turn what it raises into an exit status and one line on stderr."""
    try:
        status = main()
    except KeyboardInterrupt:
        if debugging(argv):
            raise
        print("error: interrupted", file=sys.stderr)
        status = 130
    except (UsageError, ConfigError) as error:
        status = _fail(error, 2, argv)
    except (MinigradError, OSError, ValueError, ImportError) as error:
        status = _fail(error, 1, argv)
    sys.exit(status or 0)


def _fail(error, status, argv):
    if debugging(argv):
        traceback.print_exception(error)
    print(f"error: {one_line(error)}", file=sys.stderr)
    return status


def one_line(error) -> str:
    """The message of `error` on one line (a FileNotFoundError names its file)."""
    if isinstance(error, OSError) and error.filename is not None and error.strerror:
        text = f"{error.filename}: {error.strerror}"
    else:
        text = str(error) or type(error).__name__
    return " ".join(text.split())


# ----- argparse types: each names what is allowed ------------------------------------------------

def _number(kind, text, check, allowed):
    try:
        value = kind(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not {allowed}") from None
    if not check(value):
        raise argparse.ArgumentTypeError(f"{text!r} is not {allowed}")
    return value


def positive_int(text) -> int:
    return _number(int, text, lambda v: v > 0, "a positive integer")


def non_negative_int(text) -> int:
    return _number(int, text, lambda v: v >= 0, "an integer >= 0")


def positive_float(text) -> float:
    return _number(float, text, lambda v: v > 0 and v != float("inf"), "a positive number")


def non_negative_float(text) -> float:
    return _number(float, text, lambda v: 0 <= v < float("inf"), "a number >= 0")


def probability(text) -> float:
    """A dropout rate: 0 <= p < 1."""
    return _number(float, text, lambda v: 0 <= v < 1, "a rate in [0, 1)")


def output_folder(text) -> Path:
    """A folder to write results into: missing is fine (the tool makes it), a file is not."""
    path = Path(text)
    if path.exists() and not path.is_dir():
        raise argparse.ArgumentTypeError(f"{text} is a file; give a folder to write into")
    return path


def port(text) -> int:
    """A TCP port to listen on: 0 (a free one, chosen by the system) to 65535."""
    return _number(int, text, lambda v: 0 <= v <= 65535, "a port number (0 to 65535; 0 "
                   "takes a free one)")


def device(text) -> str:
    """A device name: cpu, cuda or cuda:N (whether that device is there is checked when it
    is first used)."""
    if not re.fullmatch(r"cpu|cuda(:\d+)?", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a device; use cpu, cuda or cuda:N")
    return text


# ----- a trained run ---------------------------------------------------------------------------

CHECKPOINTS = ("best", "last")
_WHAT_TO_GIVE = ("give a training run folder (the --out of examples/train_translation.py) or a "
                 "checkpoint file in it (RUN/best.npz or RUN/last.npz)")


def add_checkpoint_arguments(parser: argparse.ArgumentParser, required: bool = True) -> None:
    """--checkpoint RUN (a run folder, or RUN/best.npz or RUN/last.npz) and --which."""
    parser.add_argument("--checkpoint", required=required, metavar="RUN",
                        help="a training run folder, or a checkpoint file in it (RUN/best.npz, "
                             "RUN/last.npz)")
    parser.add_argument("--which", choices=CHECKPOINTS, default=None,
                        help="the checkpoint of a run folder: best (by validation, the default) "
                             "or last (a checkpoint file names its own)")


def run_checkpoint(given: str | os.PathLike, which: str | None = None) -> tuple[RunFolder, str]:
    """The run folder and the checkpoint ("best" or "last") that `--checkpoint given` and
    `--which which` name; UsageError, one line saying what to give, when the path is missing,
    is not a run folder or one of its checkpoint files, or the checkpoint is not there yet."""
    from .run_folder import RunFolder  # it reads models: not needed to parse flags

    path, flag = Path(given), f"--checkpoint {given}"
    if path.is_file():
        if path.name not in (f"{name}.npz" for name in CHECKPOINTS):
            raise UsageError(f"{flag} is a file but not a run's best.npz or last.npz; "
                             f"{_WHAT_TO_GIVE}")
        if which is not None and which != path.stem:
            raise UsageError(f"{flag} and --which {which} name different checkpoints; give "
                             "one of them")
        folder, which = RunFolder(path.parent), path.stem
    else:
        folder, which = RunFolder(path), which or "best"
        folder.recover()
        if not path.exists():
            raise UsageError(f"{flag} does not exist; {_WHAT_TO_GIVE}")
    if not folder.file("config.json").exists():
        raise UsageError(f"{flag}: no training run there (config.json is missing); "
                         f"{_WHAT_TO_GIVE}")
    if not folder.checkpoint(which).exists():
        other = CHECKPOINTS[1 - CHECKPOINTS.index(which)]
        why = "the run has not validated yet" if which == "best" else "the run is damaged"
        remedy = (f"give --which {other} ({other}.npz is there)"
                  if folder.checkpoint(other).exists() else "the folder holds no checkpoint")
        raise UsageError(f"{flag}: {folder.checkpoint(which)} does not exist ({why}); {remedy}")
    return folder, which


# ----- decoding ---------------------------------------------------------------------------

def add_decoding_arguments(parser: argparse.ArgumentParser) -> None:
    """--beam and --length-penalty: how a translation is searched for (the same in every tool
    that translates, so that their translations agree)."""
    parser.add_argument("--beam", type=positive_int, default=1,
                        help="beam size (1 = greedy)")
    parser.add_argument("--length-penalty", type=non_negative_float, default=0.6,
                        metavar="ALPHA", help="GNMT length penalty of beam search's score "
                                              "(default 0.6; 0 turns it off)")


# ----- several processes ------------------------------------------------------------------

def add_distributed_arguments(parser) -> None:
    """--distributed and --collective-timeout (docs/distributed.md)."""
    group = parser.add_argument_group("several processes (docs/distributed.md)")
    group.add_argument("--distributed", action="store_true",
                       help="data-parallel over the ranks of `mpiexec -n N python -m mpi4py "
                            f"{parser.prog} --distributed ...`")
    group.add_argument("--collective-timeout", type=positive_float, default=600.0,
                       help="seconds a rank waits for the others before it aborts the job "
                            "(default 600)")


def communicator(args):
    """The communicator of `--distributed` (None without it). On GPUs each rank takes the one
    of its local rank: `args.device` "cuda" becomes "cuda:LOCAL_RANK"."""
    if not args.distributed:
        return None
    from minigrad import distributed

    device = getattr(args, "device", None) or "cpu"
    result = distributed.init(required=True, timeout_s=args.collective_timeout, device=device)
    if device == "cuda" and result.world_size > 1:
        args.device = f"cuda:{result.local_rank}"
    return result
