"""What every command-line tool of the project shares: flags checked as they are parsed, and
every mistake answered with one line on stderr instead of a traceback.

    parser = cli.ArgumentParser(description=__doc__)
    parser.add_argument("--steps", type=cli.positive_int)
    ...
    if __name__ == "__main__":
        cli.run(main)

The line is `error: <what is wrong, naming the flag or file and the value, and what to do>`.
Exit status 2 is a usage error (a flag, an argument or an input file the user named, or a
configuration they asked for, ConfigError: fix the command line), 1 a failure while running
(a damaged checkpoint, a missing device, ...), 130 an interrupt (the shell's convention for
Ctrl-C).
`--debug` on the command line, or MINIGRAD_DEBUG=1 in the environment, shows the traceback.
"""

import argparse
import os
import re
import sys
import traceback
from pathlib import Path
from typing import NoReturn

from minigrad.errors import ConfigError, MinigradError  # the engine's; transformer.errors'

#                                                         are narrower kinds of these


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


def device(text) -> str:
    """A device name: cpu, cuda or cuda:N (whether that device is there is checked when it
    is first used)."""
    if not re.fullmatch(r"cpu|cuda(:\d+)?", text):
        raise argparse.ArgumentTypeError(f"{text!r} is not a device; use cpu, cuda or cuda:N")
    return text


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
