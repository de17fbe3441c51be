# SPDX-License-Identifier: GPL-3.0-or-later
"""DBS's convergence claim on real training (doc/model.md, "Batch sizes and
convergence"): PyTorch trains the teacher-student task of teacher_student.py
on a finite dataset in synchronous data parallelism, each worker computing
its own gradient on its own mini-batch, with the per-worker batch sizes an
lbsim run's policy set (its results database's `batches` table), and prints
the steps and epochs to a target held-out loss per policy and seed, with
their mean, 95% interval and the paired difference from the first policy.

DBS (Ye et al. 2020) re-sizes each worker's batch every epoch and gives it a
part of the dataset in proportion, so every worker ends the epoch together;
its paper argues that convergence is unchanged at an equal global batch.
That holds when the gradients are aggregated by sample, sum_k (b_k / B) g_k:
the step is then exactly the step of one process on the union of the
workers' samples (`--check` verifies it to 1e-6). Aggregated as a plain mean
over workers, (1 / N) sum_k g_k, the samples of a worker with a small batch
weigh more: `--aggregate mean` measures what that costs.

Every run of a seed sees the same dataset, the same initial student and the
same shuffle of each epoch (common random numbers), so the policies differ
only in how each step's samples are split and weighted.

    lbsim scenarios/reproduce/dbs.ini --policy static,dbs -o dbs.db --set run.epochs=3
    python3 testbed/dbs_convergence.py dbs.db --seeds 1,2,3,4,5,6,7,8,9,10 --target 0.38
"""
import argparse
import math
import sqlite3
import sys

import torch

# Student's t quantile t_{0.975, df} for the 95% interval of a mean
T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160,
        2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056,
        2.052, 2.048, 2.045, 2.042]


def interval(xs):
    """Mean and the half-width of its 95% interval (Student's t)."""
    n = len(xs)
    m = sum(xs) / n
    if n < 2:
        return m, float("nan")
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    t = T975[n - 2] if n - 1 <= len(T975) else 1.96
    return m, t * sd / math.sqrt(n)


def mlp(d_in, hidden, d_out):
    return torch.nn.Sequential(torch.nn.Linear(d_in, hidden), torch.nn.Tanh(),
                               torch.nn.Linear(hidden, d_out))


def splits_of(db, policies):
    """Each policy's batch sizes as a function of the iteration: a sorted
    list of (first iteration, [b_0 .. b_{N-1}]) from the `batches` table."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    out = {}
    for name in policies:
        row = con.execute("SELECT run_id FROM runs WHERE policy = ? ORDER BY run_id LIMIT 1", (name,)).fetchone()
        if row is None:
            have = [r[0] for r in con.execute("SELECT DISTINCT policy FROM runs")]
            sys.exit(f"dbs_convergence: {db}: no run of policy '{name}' (it has: {', '.join(have)})")
        rows = con.execute("SELECT iteration, worker, batch_samples FROM batches WHERE run_id = ? "
                           "ORDER BY iteration, worker", (row[0],)).fetchall()
        n = 1 + max(w for _, w, _ in rows)
        changes, cur = [], [0] * n
        for it in sorted({r[0] for r in rows}):
            for i, w, b in rows:
                if i == it:
                    cur[w] = b
            changes.append((it, list(cur)))
        out[name] = changes
    con.close()
    return out


def split_at(changes, iteration):
    cur = changes[0][1]
    for it, b in changes:
        if it > iteration:
            break
        cur = b
    return cur


def worker_gradients(student, xs, ys):
    """Each worker's own gradient (mean loss over its mini-batch)."""
    grads = []
    for x, y in zip(xs, ys):
        student.zero_grad()
        if len(x) == 0:
            grads.append(None)
            continue
        torch.nn.functional.mse_loss(student(x), y).backward()
        grads.append([p.grad.detach().clone() for p in student.parameters()])
    return grads


def aggregate(grads, sizes, how):
    total = sum(sizes)
    live = [(g, b) for g, b in zip(grads, sizes) if g is not None]
    out = None
    for g, b in live:
        w = b / total if how == "weighted" else 1.0 / len(live)
        out = [w * t for t in g] if out is None else [o + w * t for o, t in zip(out, g)]
    return out


def train(a, teacher, data, x_eval, y_eval, changes, seed, how):
    """Steps to the target, or None within --max-steps."""
    n_data = len(data[0])
    torch.manual_seed(1000 + seed)  # the same student for every policy
    student = mlp(a.dim, a.hidden, a.outputs)
    step, epoch = 0, 0
    while step < a.max_steps:
        # DBS's partition: at the epoch's start, each worker's part of the
        # (shuffled) dataset in proportion to its batch, so that all end
        # the epoch together
        sizes = split_at(changes, step)
        global_batch = sum(sizes)
        steps_per_epoch = n_data // global_batch
        perm = torch.randperm(n_data, generator=torch.Generator().manual_seed(7919 * seed + epoch))
        starts, off = [], 0
        for b in sizes:
            starts.append(off)
            off += b * steps_per_epoch
        for j in range(steps_per_epoch):
            xs, ys = [], []
            for k, b in enumerate(sizes):
                idx = perm[starts[k] + j * b: starts[k] + (j + 1) * b]
                xs.append(data[0][idx])
                ys.append(data[1][idx])
            g = aggregate(worker_gradients(student, xs, ys), sizes, how)
            with torch.no_grad():
                for p, d in zip(student.parameters(), g):
                    p -= a.lr * d
            step += 1
            if step % a.every == 0:
                with torch.no_grad():
                    loss = torch.nn.functional.mse_loss(student(x_eval), y_eval).item()
                if loss <= a.target:
                    return step, step / steps_per_epoch
            if step >= a.max_steps:
                break
        epoch += 1
    return None, None


def check(a, teacher):
    """Aggregated by sample, the workers' gradients are one process's on
    the union of their samples (to 1e-6); as a plain mean they are not."""
    torch.manual_seed(5)
    student = mlp(a.dim, a.hidden, a.outputs)
    sizes = [3, 5, 8, 48]
    x = torch.randn(sum(sizes), a.dim)
    with torch.no_grad():
        y = teacher(x)
    xs, ys, off = [], [], 0
    for b in sizes:
        xs.append(x[off:off + b])
        ys.append(y[off:off + b])
        off += b
    grads = worker_gradients(student, xs, ys)
    student.zero_grad()
    torch.nn.functional.mse_loss(student(x), y).backward()
    whole = [p.grad.detach().clone() for p in student.parameters()]
    diff = lambda agg: max((u - v).abs().max().item() / max(v.abs().max().item(), 1e-30)
                           for u, v in zip(agg, whole))
    weighted, mean = diff(aggregate(grads, sizes, "weighted")), diff(aggregate(grads, sizes, "mean"))
    print(f"check: weighted aggregate against one process on the union: max relative difference {weighted:.2e}; "
          f"plain mean: {mean:.2e}")
    return weighted < 1e-6 and mean > 1e-3


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("db", nargs="?", help="an lbsim results database (its batches table)")
    ap.add_argument("--policies", default="static,dbs", help="runs of the database, by policy; the first is the baseline")
    ap.add_argument("--aggregate", default="weighted,mean", help="weighted (by sample), mean (over workers), or both")
    ap.add_argument("--seeds", default="1,2,3,4,5")
    ap.add_argument("--target", type=float, default=0.38, help="held-out loss to reach (the floor is noise^2)")
    ap.add_argument("--max-steps", type=int, default=20000)
    ap.add_argument("--every", type=int, default=5, help="evaluate the held-out loss every N steps")
    ap.add_argument("--lr", type=float, default=0.05)
    ap.add_argument("--noise", type=float, default=0.5, help="label noise (standard deviation)")
    ap.add_argument("--dataset", type=int, default=0, help="samples (default: the run's dataset_samples, else 97 x B)")
    ap.add_argument("--dim", type=int, default=32)
    ap.add_argument("--hidden", type=int, default=64)
    ap.add_argument("--outputs", type=int, default=8)
    ap.add_argument("--check", action="store_true", help="only verify the aggregation (no database needed)")
    a = ap.parse_args()
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(1)
    teacher = mlp(a.dim, a.hidden, a.outputs)
    with torch.no_grad():
        for p in teacher.parameters():
            p.copy_(torch.randn(p.shape, generator=g) * (2.0 / p.shape[-1]) ** 0.5)
    ok = check(a, teacher)
    if a.check or not ok:
        sys.exit(0 if ok else 1)
    if not a.db:
        sys.exit("dbs_convergence: give a results database (or --check)")
    policies = a.policies.split(",")
    hows = a.aggregate.split(",")
    for h in hows:
        if h not in ("weighted", "mean"):
            sys.exit(f"dbs_convergence: --aggregate {h}: weighted or mean")
    changes = splits_of(a.db, policies)
    n_data = a.dataset
    if not n_data:
        con = sqlite3.connect(f"file:{a.db}?mode=ro", uri=True)
        row = con.execute("SELECT value FROM run_config WHERE key = 'dataset_samples' LIMIT 1").fetchone()
        con.close()
        n_data = int(float(row[0])) if row and row[0] not in (None, "") else 97 * sum(changes[policies[0]][0][1])
    x_eval = torch.randn(4096, a.dim, generator=g)
    with torch.no_grad():
        y_eval = teacher(x_eval) + a.noise * torch.randn(4096, a.outputs, generator=g)
    print(f"dataset {n_data} samples; target held-out loss {a.target} (floor {a.noise ** 2}); lr {a.lr}")
    for p in policies:
        print(f"{p}: batches {changes[p][0][1]} from iteration {changes[p][0][0]}"
              + "".join(f", {b} from {it}" for it, b in changes[p][1:4]) + (" ..." if len(changes[p]) > 4 else ""))
    results = {}
    print("policy,aggregate,seed,steps,epochs")
    for seed in [int(s) for s in a.seeds.split(",")]:
        dg = torch.Generator().manual_seed(104729 * seed)
        x = torch.randn(n_data, a.dim, generator=dg)
        with torch.no_grad():
            y = teacher(x) + a.noise * torch.randn(n_data, a.outputs, generator=dg)
        for p in policies:
            for h in hows:
                steps, epochs = train(a, teacher, (x, y), x_eval, y_eval, changes[p], seed, h)
                results.setdefault((p, h), {})[seed] = (steps, epochs)
                print(f"{p},{h},{seed},{steps if steps else 'NA'},{f'{epochs:.3f}' if epochs else 'NA'}")
                sys.stdout.flush()
    base = (policies[0], hows[0])
    print("\npolicy aggregate n steps_mean steps_95%_interval epochs_mean diff_from_first_steps diff_95%_interval")
    for key, per in results.items():
        seeds = [s for s, (st, _) in per.items() if st]
        st = [per[s][0] for s in seeds]
        ep = [per[s][1] for s in seeds]
        if not st:
            print(f"{key[0]} {key[1]} 0 (never reached the target)")
            continue
        m, h = interval(st)
        em, _ = interval(ep)
        paired = [per[s][0] - results[base][s][0] for s in seeds if results[base].get(s, (None,))[0]]
        dm, dh = interval(paired) if paired else (float("nan"), float("nan"))
        print(f"{key[0]} {key[1]} {len(st)} {m:.1f} +-{h:.1f} {em:.3f} {dm:+.1f} +-{dh:.1f}")


if __name__ == "__main__":
    main()
