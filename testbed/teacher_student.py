# SPDX-License-Identifier: GPL-3.0-or-later
"""Real convergence for lbsim's time-to-target model (doc/model.md, "Time to
target"): PyTorch trains a student network to fit a fixed random teacher
network's outputs on generated inputs, at each batch size asked, and prints
the held-out loss every few steps as the CSV `lbsim calibrate --convergence`
reads (batch,step,loss).

The task needs no download and has a known attainable loss: the student has
the teacher's architecture, so zero is attainable; the teacher's outputs
carry Gaussian label noise of variance `noise`^2, so the held-out loss
(mean squared error against noisy labels) has the floor noise^2. Every
step draws a fresh batch (training on an unbounded stream, as the
gradient-noise-scale model assumes); the learning rate is the same at every
batch size.

    python3 testbed/teacher_student.py --batches 16,32,64,128 --seeds 1,2,3 --steps 3000 > loss.csv
    lbsim calibrate --convergence loss.csv --target 0.38 --smooth 5
"""
import argparse
import sys

import torch


def mlp(d_in, hidden, d_out):
    return torch.nn.Sequential(torch.nn.Linear(d_in, hidden), torch.nn.Tanh(),
                               torch.nn.Linear(hidden, d_out))


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
    a = ap.parse_args()
    torch.set_num_threads(1)
    g = torch.Generator().manual_seed(a.teacher_seed)
    torch.manual_seed(a.teacher_seed)
    teacher = mlp(a.dim, a.hidden, a.outputs)
    for p in teacher.parameters():
        with torch.no_grad():
            p.copy_(torch.randn(p.shape, generator=g) * (2.0 / p.shape[-1]) ** 0.5)
    x_eval = torch.randn(4096, a.dim, generator=g)
    with torch.no_grad():
        y_eval = teacher(x_eval) + a.noise * torch.randn(4096, a.outputs, generator=g)
    out = sys.stdout
    out.write("seed,batch,step,loss\n")
    for seed, b in [(int(s), int(b)) for s in a.seeds.split(",") for b in a.batches.split(",")]:
        torch.manual_seed(1000 + seed)  # the same student at every batch size
        student = mlp(a.dim, a.hidden, a.outputs)
        opt = torch.optim.SGD(student.parameters(), lr=a.lr)
        data = torch.Generator().manual_seed(1000003 * seed + b)
        for step in range(1, a.steps + 1):
            x = torch.randn(b, a.dim, generator=data)
            with torch.no_grad():
                y = teacher(x) + a.noise * torch.randn(b, a.outputs, generator=data)
            loss = torch.nn.functional.mse_loss(student(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()
            if step % a.every == 0:
                with torch.no_grad():
                    ev = torch.nn.functional.mse_loss(student(x_eval), y_eval).item()
                out.write(f"{seed},{b},{step},{ev:.6f}\n")
    out.flush()


if __name__ == "__main__":
    main()
