"""Write tests/fixtures/optim.npz: PyTorch's optimizer updates and learning-rate schedules,
which tests/optim compares minigrad's against (needs the `bench` extra: torch).

Every case starts from the same float64 parameters and receives the same gradients for
STEPS steps; the fixture holds the parameters after each step. A case is described by JSON
(stored in the fixture too) that the test turns into a minigrad optimizer:

    {"optimizer": "SGD", "options": {...}, "groups": [{"params": [0, 2], "lr": ...}, ...],
     "skip": [[step, param], ...]}        (that parameter has no gradient at that step)

Run: python scripts/make_optim_fixtures.py
"""

import json
import math
from pathlib import Path

import numpy as np
import torch

STEPS = 5
SHAPES = [(2, 3), (4,), (2, 1, 2)]
SCHEDULE_STEPS = 12

CASES = {
    "sgd": {"optimizer": "SGD", "options": {"lr": 0.1}},
    "sgd_momentum": {"optimizer": "SGD", "options": {"lr": 0.1, "momentum": 0.9}},
    "sgd_nesterov": {"optimizer": "SGD",
                     "options": {"lr": 0.1, "momentum": 0.9, "nesterov": True}},
    "sgd_weight_decay": {"optimizer": "SGD",
                         "options": {"lr": 0.1, "momentum": 0.5, "weight_decay": 0.1}},
    "adam": {"optimizer": "Adam", "options": {"lr": 0.01}},
    "adam_betas": {"optimizer": "Adam",
                   "options": {"lr": 0.01, "betas": [0.8, 0.98], "eps": 1e-3}},
    "adam_weight_decay": {"optimizer": "Adam", "options": {"lr": 0.01, "weight_decay": 0.1}},
    "adamw": {"optimizer": "AdamW", "options": {"lr": 0.01, "weight_decay": 0.1}},
    "adamw_groups": {"optimizer": "AdamW", "options": {"lr": 0.01, "weight_decay": 0.1},
                     "groups": [{"params": [0, 2]}, {"params": [1], "lr": 0.1,
                                                     "weight_decay": 0.0}]},
    "adam_skip": {"optimizer": "Adam", "options": {"lr": 0.01}, "skip": [[1, 1], [3, 1]]},
    "sgd_momentum_skip": {"optimizer": "SGD", "options": {"lr": 0.1, "momentum": 0.9},
                          "skip": [[0, 2], [2, 0]]},
}

D_MODEL, WARMUP, FACTOR = 16, 4, 2.0
SCHEDULES = {
    "noam": {"schedule": "NoamSchedule", "lr": 1.0,
             "options": {"d_model": D_MODEL, "warmup_steps": WARMUP, "factor": FACTOR}},
    "lambda": {"schedule": "LambdaLR", "lr": 0.5, "options": {}},  # lr_lambda: 0.9 ** step
    "warmup_cosine": {"schedule": "WarmupCosine", "lr": 0.1,
                      "options": {"warmup_steps": 3, "total_steps": 10, "min_lr": 0.01}},
}


def torch_lambda(name):
    """Each schedule as a function of PyTorch's LambdaLR step count (0 for the first update)."""
    options = SCHEDULES[name]["options"]
    if name == "noam":
        return lambda e: FACTOR * D_MODEL ** -0.5 * min((e + 1) ** -0.5,
                                                         (e + 1) * WARMUP ** -1.5)
    if name == "lambda":
        return lambda e: 0.9 ** e
    base, warmup, total, min_lr = (SCHEDULES[name]["lr"], options["warmup_steps"],
                                   options["total_steps"], options["min_lr"])

    def warmup_cosine(e):
        s = e + 1
        if s <= warmup:
            return s / warmup
        if s >= total:
            return min_lr / base
        progress = (s - warmup) / (total - warmup)
        return (min_lr + (base - min_lr) * (1 + math.cos(math.pi * progress)) / 2) / base

    return warmup_cosine


def run_case(case, initial, grads):
    params = [torch.tensor(p, requires_grad=True) for p in initial]
    options = dict(case["options"])
    if "betas" in options:
        options["betas"] = tuple(options["betas"])
    groups = [{**g, "params": [params[i] for i in g["params"]]}
              for g in case.get("groups", [{"params": list(range(len(params)))}])]
    optimizer = getattr(torch.optim, case["optimizer"])(groups, **options, foreach=False)
    skip = {tuple(s) for s in case.get("skip", [])}
    history = []
    for step in range(STEPS):
        for i, param in enumerate(params):
            param.grad = None if (step, i) in skip else torch.tensor(grads[step][i])
        optimizer.step()
        history.append(np.concatenate([p.detach().numpy().ravel() for p in params]))
    return np.stack(history)


def run_schedule(name):
    param = torch.zeros(1, requires_grad=True)
    optimizer = torch.optim.SGD([param], lr=SCHEDULES[name]["lr"])
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, torch_lambda(name))
    lrs = []
    for _ in range(SCHEDULE_STEPS):
        lrs.append(scheduler.get_last_lr()[0])
        optimizer.step()
        scheduler.step()
    return np.array(lrs)


def main():
    rng = np.random.default_rng(20240601)
    initial = [rng.standard_normal(shape) for shape in SHAPES]
    grads = [[rng.standard_normal(shape) for shape in SHAPES] for _ in range(STEPS)]
    fixture = {
        "shapes": np.array(json.dumps(SHAPES)),
        "cases": np.array(json.dumps(CASES)),
        "schedules": np.array(json.dumps(SCHEDULES)),
        "initial": np.concatenate([p.ravel() for p in initial]),
        "grads": np.stack([np.concatenate([g.ravel() for g in step]) for step in grads]),
    }
    for name, case in CASES.items():
        fixture[f"case/{name}"] = run_case(case, initial, grads)
    for name in SCHEDULES:
        fixture[f"schedule/{name}"] = run_schedule(name)
    path = Path(__file__).resolve().parent.parent / "tests" / "fixtures" / "optim.npz"
    path.parent.mkdir(parents=True, exist_ok=True)
    np.savez_compressed(path, **fixture)
    print(f"wrote {path} ({path.stat().st_size} bytes, torch {torch.__version__})")


if __name__ == "__main__":
    main()
