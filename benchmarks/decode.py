"""Milliseconds to decode greedily 32 tokens for 8 sentences, with and without the key/value
cache, in minigrad or in PyTorch; or, in minigrad, by beam search and its n-best lists.

The model is the benchmark Transformer of `configs.py` (random weights, eval mode); the
sources are 8 random sentences of the config's length, with some padding. Decoding runs
exactly 32 steps (`stop_at_eos=False`), so both frameworks do the same work whatever they
predict. Without the cache every step re-runs the decoder over the whole prefix; with it each
step feeds only the newest token (`transformer.greedy_decode(..., use_cache=...)`, mirrored
by `torch_reference.greedy_decode`). The encoder runs once per decoding, inside the timing.

`--beam K` (minigrad only) decodes by beam search instead (`transformer.beam_search`, or with
`--n-best N` `beam_search_n_best`, which also returns the N best hypotheses and each token's
log-probability), 32 steps too: EOS is an id the model cannot produce.

    python benchmarks/decode.py --framework minigrad|torch --config tiny|small|base
        [--device cpu|cuda] [--cache on|off|both] [--beam K [--n-best N]] [--repeats 5]
        [--json]

With `--json`, one record per cache setting, one per line (off first); the `on` record of
`--cache both` adds `cache_speedup` (uncached / cached median) and `same_tokens` (both
settings decoded the same ids). `benchmarks/compare.py` reads the last line of a run, so give
it one setting: `compare.py --benchmark decode --args --config base --cache on`.
"""

import functools
import json
import resource
import statistics
import time

from configs import BOS_ID, CONFIGS, DECODE_BATCH, DECODE_STEPS, EOS_ID, SEED, random_batch

from transformer import cli


def minigrad_decoder(config, device, beam=1, n_best=None):
    """A function use_cache -> decoded ids (NumPy), and the device's synchronize."""
    import numpy as np

    import minigrad as mg
    from minigrad.backend import get_backend
    from transformer import Transformer, beam_search, greedy_decode

    mg.manual_seed(SEED)
    model = Transformer(config.model_kwargs()).to(device).eval()
    src, _, _ = random_batch(config, batch=DECODE_BATCH)
    src = mg.tensor(src, device=device)
    never = config.vocab  # an EOS the model cannot produce: beam search runs every step

    def decode(use_cache):
        if beam == 1:
            return greedy_decode(model, src, DECODE_STEPS, BOS_ID, EOS_ID, use_cache=use_cache,
                                 stop_at_eos=False)
        if n_best is None:
            return beam_search(model, src, beam, DECODE_STEPS, BOS_ID, never,
                               use_cache=use_cache)
        from transformer import beam_search_n_best

        lists = beam_search_n_best(model, src, beam, DECODE_STEPS, BOS_ID, never, n_best,
                                   use_cache=use_cache)
        return mg.tensor(np.stack([h.tokens for found in lists for h in found]))

    return decode, get_backend(device).synchronize


def torch_decoder(config, device):
    import torch
    from torch_reference import Transformer, greedy_decode

    torch.manual_seed(SEED)
    model = Transformer(**config.model_kwargs()).to(device).eval()
    src, _, _ = random_batch(config, batch=DECODE_BATCH)
    src = torch.from_numpy(src).to(device)

    def decode(use_cache):
        return greedy_decode(model, src, DECODE_STEPS, BOS_ID, EOS_ID, use_cache=use_cache,
                             stop_at_eos=False)

    def synchronize():
        if src.is_cuda:
            torch.cuda.synchronize()

    return decode, synchronize


FRAMEWORKS = {"minigrad": minigrad_decoder, "torch": torch_decoder}


def milliseconds(call, synchronize, repeats, warmup):
    """Wall-clock ms of each of `repeats` calls after `warmup` untimed ones; the last result."""
    for _ in range(warmup):
        result = call()
    synchronize()
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        result = call()
        synchronize()
        times.append(1e3 * (time.perf_counter() - start))
    return times, result


def main(argv=None):
    parser = cli.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--framework", choices=sorted(FRAMEWORKS), default="minigrad")
    parser.add_argument("--config", choices=list(CONFIGS), default="tiny")
    parser.add_argument("--device", type=cli.device, default="cpu", help="cpu or cuda")
    parser.add_argument("--cache", choices=("on", "off", "both"), default="both")
    parser.add_argument("--repeats", type=cli.positive_int, default=5,
                        help="timed decodings per setting")
    parser.add_argument("--warmup", type=cli.non_negative_int, default=1,
                        help="untimed decodings first")
    parser.add_argument("--beam", type=cli.positive_int, default=1,
                        help="beam size (default 1: greedy decoding); minigrad only")
    parser.add_argument("--n-best", type=cli.positive_int, default=None,
                        help="with --beam, return the N best hypotheses (N <= --beam)")
    parser.add_argument("--json", action="store_true", help="one JSON record per line")
    args = parser.parse_args(argv)
    if args.repeats < 1 or args.warmup < 1:
        parser.error("--repeats and --warmup must be >= 1")
    if args.beam > 1 and args.framework != "minigrad":
        parser.error(f"--beam {args.beam}: the PyTorch reference decodes greedily only; "
                     "use --framework minigrad")
    if args.n_best is not None and args.n_best > args.beam:
        parser.error(f"--n-best {args.n_best} is larger than --beam {args.beam}; give --beam "
                     f"{args.n_best} or more")

    config = CONFIGS[args.config]
    decode, synchronize = (
        minigrad_decoder(config, args.device, args.beam, args.n_best)
        if args.framework == "minigrad" else torch_decoder(config, args.device))
    settings = {"off": [False], "on": [True], "both": [False, True]}[args.cache]
    records, decoded = [], []
    for use_cache in settings:
        times, ids = milliseconds(functools.partial(decode, use_cache), synchronize,
                                  args.repeats, args.warmup)
        median = statistics.median(times)
        decoded.append(ids.cpu().numpy())  # both frameworks spell it so
        records.append({
            "benchmark": "decode",
            "config": args.config,
            "framework": args.framework,
            "device": args.device,
            "cache": "on" if use_cache else "off",
            "beam": args.beam,
            "n_best": args.n_best,
            "figure": "tokens_per_s",
            "tokens_per_s": DECODE_BATCH * DECODE_STEPS / (median * 1e-3),
            "median_ms": median,
            "min_ms": min(times),
            "max_ms": max(times),
            "batch": DECODE_BATCH,
            "steps": DECODE_STEPS,
            "repeats": args.repeats,
            "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        })
    if len(records) == 2:
        uncached, cached = records
        cached["cache_speedup"] = uncached["median_ms"] / cached["median_ms"]
        cached["same_tokens"] = bool((decoded[0] == decoded[1]).all())

    for record in records:
        if args.json:
            print(json.dumps(record))
        else:
            search = f"beam {args.beam}" + (f", {args.n_best}-best" if args.n_best else "") \
                if args.beam > 1 else "greedy"
            print(f"{record['framework']} {record['config']} on {record['device']}, {search}, "
                  f"cache {record['cache']}: {record['median_ms']:.1f} ms for {DECODE_STEPS} "
                  f"tokens × {DECODE_BATCH} sentences (min {record['min_ms']:.1f}, max "
                  f"{record['max_ms']:.1f}), {record['tokens_per_s']:.0f} tokens/s")
    if len(records) == 2 and not args.json:
        print(f"cache speedup {records[1]['cache_speedup']:.2f}x, same tokens: "
              f"{records[1]['same_tokens']}")


if __name__ == "__main__":
    cli.run(main)
