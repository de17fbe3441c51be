# SPDX-License-Identifier: GPL-3.0-or-later
"""Real convergence for lbsim's time-to-target model (doc/model.md, "Time to
target"): PyTorch trains a student network to fit a fixed random teacher
network's outputs on generated inputs, at each batch size asked, and prints
the held-out loss every few steps as the CSV `lbsim calibrate --convergence`
reads (seed,batch,step,loss and staleness: see --staleness).

The task needs no download and has a known attainable loss: the student has
the teacher's architecture, so zero is attainable; the teacher's outputs
carry Gaussian label noise of variance `noise`^2, so the held-out loss
(mean squared error against noisy labels) has the floor noise^2. Every
step draws a fresh batch (training on an unbounded stream, as the
gradient-noise-scale model assumes); the learning rate is the same at every
batch size.

    python3 testbed/teacher_student.py --batches 16,32,64,128 --seeds 1,2,3 --steps 3000 > loss.csv
    lbsim calibrate --convergence loss.csv --target 0.38 --smooth 5

Two ways of training that lbsim's [sync] modes stand for, to check their
efficiency model (doc/model.md, "Time to target") on real training:
--staleness TAU computes each step's gradient on the model as it was TAU
updates before (the fixed-delay model of asynchronous SGD) and applies it
with the learning rate divided by max(1, TAU) (Zhang et al. 2016's
staleness-aware rate; --no-lr-penalty keeps the rate); --local H --workers N
trains N models on batch/N samples each, from the same start, and averages
them after every H-th step (local SGD), logging the averaged model's loss
at averaging steps only. In both, `batch` is the samples of a step over all
workers and `step` counts steps (clocks).
"""
import argparse
import sys

import torch


def mlp(d_in, hidden, d_out):
    return torch.nn.Sequential(torch.nn.Linear(d_in, hidden), torch.nn.Tanh(),
                               torch.nn.Linear(hidden, d_out))


def make_teacher(dim, hidden, outputs, noise, teacher_seed, n_eval=4096):
    """The fixed random teacher and the held-out set (its inputs and noisy
    outputs), as every run of the task makes them; shared with the torch
    worker (torch_worker.py, net teacher-student)."""
    g = torch.Generator().manual_seed(teacher_seed)
    torch.manual_seed(teacher_seed)
    teacher = mlp(dim, hidden, outputs)
    for p in teacher.parameters():
        with torch.no_grad():
            p.copy_(torch.randn(p.shape, generator=g) * (2.0 / p.shape[-1]) ** 0.5)
    x_eval = torch.randn(n_eval, dim, generator=g)
    with torch.no_grad():
        y_eval = teacher(x_eval) + noise * torch.randn(n_eval, outputs, generator=g)
    return teacher, x_eval, y_eval


def train_local(a, student, b, batch_of, log):
    """Local SGD: a.workers copies of the student, batch b split evenly (the
    first b % workers one sample more), an SGD step each, the models averaged
    (weighted by their samples) after every a.local-th step."""
    n = a.workers
    shares = [b // n + (1 if k < b % n else 0) for k in range(n)]
    models = [mlp(a.dim, a.hidden, a.outputs) for _ in range(n)]
    for m in models:
        m.load_state_dict(student.state_dict())
    opts = [torch.optim.SGD(m.parameters(), lr=a.lr) for m in models]
    for step in range(1, a.steps + 1):
        for m, o, share in zip(models, opts, shares):
            x, y = batch_of(share)
            o.zero_grad()
            torch.nn.functional.mse_loss(m(x), y).backward()
            o.step()
        if step % a.local == 0:
            with torch.no_grad():
                for ps in zip(student.parameters(), *[m.parameters() for m in models]):
                    ps[0].copy_(sum(share * p for share, p in zip(shares, ps[1:])) / b)
                for m in models:
                    m.load_state_dict(student.state_dict())
            if step % a.every == 0 or a.local > a.every:
                log(step, student)


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--batches", default="16,32,64,128")
    ap.add_argument("--steps", type=int, default=4000)
    ap.add_argument("--every", type=int, default=10, help="log the held-out loss every N steps")
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--noise", type=float, default=0.5, help="label noise (standard deviation)")
    ap.add_argument("--dim", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--outputs", type=int, default=8)
    ap.add_argument("--seeds", default="1", help="seeds, comma-separated: each one's student weights and data")
    ap.add_argument("--teacher-seed", type=int, default=1, help="the teacher and the held-out set")
    ap.add_argument("--staleness", type=int, default=0, help="gradients computed on the model this many updates old")
    ap.add_argument("--no-lr-penalty", action="store_true", help="with --staleness: keep the learning rate")
    ap.add_argument("--local", type=int, default=0, help="local SGD: average the models every H steps")
    ap.add_argument("--workers", type=int, default=4, help="local SGD: models trained in parallel")
    a = ap.parse_args()
    if a.staleness < 0 or a.local < 0 or a.workers < 1 or (a.staleness and a.local):
        ap.error("--staleness and --local are >= 0 and exclusive, --workers >= 1")
    torch.set_num_threads(1)
    teacher, x_eval, y_eval = make_teacher(a.dim, a.hidden, a.outputs, a.noise, a.teacher_seed)
    out = sys.stdout
    # the staleness column, as `lbsim calibrate --convergence` reads it: the
    # gradients' age at the learning rate / staleness; with the rate kept,
    # another column (calibrate refuses such curves: their model is
    # staleness_penalty = none, no exponent to fit)
    col = "kept_lr_staleness" if a.no_lr_penalty else "staleness"
    out.write("seed,batch,step,loss,%s\n" % col)
    for seed, b in [(int(s), int(b)) for s in a.seeds.split(",") for b in a.batches.split(",")]:
        torch.manual_seed(1000 + seed)  # the same student at every batch size
        student = mlp(a.dim, a.hidden, a.outputs)
        data = torch.Generator().manual_seed(1000003 * seed + b)

        def batch_of(n):
            x = torch.randn(n, a.dim, generator=data)
            with torch.no_grad():
                return x, teacher(x) + a.noise * torch.randn(n, a.outputs, generator=data)

        def log(step, model):
            with torch.no_grad():
                ev = torch.nn.functional.mse_loss(model(x_eval), y_eval).item()
            out.write(f"{seed},{b},{step},{ev:.6f},{a.staleness}\n")

        if a.local:
            train_local(a, student, b, batch_of, log)
            continue
        opt = torch.optim.SGD(student.parameters(), lr=a.lr)
        lr = a.lr if a.no_lr_penalty else a.lr / max(1, a.staleness)
        for group in opt.param_groups:
            group["lr"] = lr
        # the models of the last `staleness` updates, oldest first
        past = [[p.detach().clone() for p in student.parameters()] for _ in range(a.staleness)]
        stale = mlp(a.dim, a.hidden, a.outputs)
        for step in range(1, a.steps + 1):
            x, y = batch_of(b)
            if a.staleness:
                with torch.no_grad():
                    for q, v in zip(stale.parameters(), past[0]):
                        q.copy_(v)
                stale.zero_grad()
                torch.nn.functional.mse_loss(stale(x), y).backward()
                past.pop(0)
                past.append([p.detach().clone() for p in student.parameters()])
                for p, q in zip(student.parameters(), stale.parameters()):
                    p.grad = q.grad.clone()
            else:
                opt.zero_grad()
                torch.nn.functional.mse_loss(student(x), y).backward()
            opt.step()
            if step % a.every == 0:
                log(step, student)
    out.flush()


if __name__ == "__main__":
    main()
