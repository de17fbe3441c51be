# SPDX-License-Identifier: GPL-3.0-or-later
"""lbsim's real-framework testbed worker (doc/validation.md, "The torch worker").

One process per simulated worker, started by lbsim's coordinator (testbed/
torch.c) in the worker's control group. It trains the scenario's network for
real with PyTorch on the CPU, on one thread: for each batch the coordinator
sends it, a forward pass, a backward pass, the gradient exchange with the
other workers through torch.distributed (gloo over loopback), and an SGD
step. The exchange runs in this process, inside the worker's CPU quota, as a
real job's does.

The networks are the layers of lbsim's networks of the same names
(models/nets/cifar.c, models/nets/resnet.c): `python3 torch_worker.py params
NET` prints the parameter count, which tests/e2e/torch.sh compares with
lbsim's.

Gradients are weighted by batch size, so a policy changes time, never the
maths of the update: each worker's loss is the SUM of its samples' losses
divided by the global batch B, and the exchange SUMS the gradients, which
gives every worker the gradient of the global batch's mean loss whatever the
split. Under DistributedDataParallel (--ddp), which averages over the world
size, the loss is scaled by the world size to the same effect.

Protocol (the blas worker's, testbed/worker.h), on two inherited file
descriptors: the worker writes one 48-byte answer when ready, then one per
batch; a batch is two native int64s, the batch and its offset in the
iteration's global batch; a batch < 0 (or the end of its input) ends it.
An answer is struct lbs_tb_result: int32 status, int32 version (the model
version the worker got back from its exchange: the parameter server's
updates or steps, or its clocks; 0 under bsp and local-sgd), then
doubles compute_s (forward and backward, wall), cpu_s (the CPU time of the
same, on the one thread that computes), start_s (CLOCK_MONOTONIC when the batch was read) and
exchange_s (the exchange and the optimizer step, wall; under DDP the
exchange overlaps the backward pass and is inside compute_s), then
exchange_cpu_s (the CPU time of every thread of the process over the same).
"""

import argparse
import os
import struct
import sys
import time

ANSWER = struct.Struct("=iiddddd")
BATCH = struct.Struct("=qq")  # batch, its offset in the global batch

# The networks this worker builds, as lbsim's models/nets registry names them.
NETS = ("cifarnet", "resnet32", "resnet50", "resnet101", "teacher-student")

# The [sync] modes whose exchange goes through the parameter server, and
# what a worker's header to it says (kind, the version it computed on, b).
PS_MODES = ("ssp", "asp", "backup")
PUSH, WARM, BYE = 0, 1, 2
# dropcompute: flags in a batch's offset (testbed/testbed.c, iterate_drop)
MICRO, DROP_LAST, EXCHANGE = 1 << 62, 1 << 61, 1 << 60
FLAGS = MICRO | DROP_LAST | EXCHANGE


def flatten_into(torch, params):
    """One flat buffer holding every parameter, each a view of it."""
    with torch.no_grad():
        flat = torch.cat([p.detach().reshape(-1) for p in params])
        at = 0
        for p in params:
            p.data = flat[at:at + p.numel()].view_as(p)
            at += p.numel()
    return flat


# The teacher-student task (teacher_student.py) as the net teacher-student
# trains it: a 512-1024-8 tanh network fits a fixed random teacher of the
# same shape, labels with Gaussian noise of sd 0.5 (the held-out loss's
# floor 0.25), plain SGD at 0.2. `python3 teacher_student.py --dim 512
# --hidden 1024 --outputs 8 --lr 0.2` trains the same task in one process.
TASK = dict(dim=512, hidden=1024, outputs=8, noise=0.5, lr=0.2, teacher_seed=1)


def fail(msg, code=3):
    sys.stderr.write("torch_worker: %s\n" % msg)
    sys.exit(code)


def import_torch():
    try:
        import torch  # noqa: F401
    except Exception as e:  # ImportError, or a broken install
        fail("PyTorch cannot be imported by %s: %s (Debian: apt-get install python3-torch)"
             % (sys.executable, e), 4)
    return sys.modules["torch"]


def build(torch, name):
    """The network `name`, layer for layer as lbsim's builder makes it."""
    nn = torch.nn

    if name == "cifarnet":
        # TF-slim's CifarNet (models/nets/cifar.c): conv 5x5x64, max pool
        # 2x2/2, LRN, conv 5x5x64, LRN, max pool 2x2/2, fc 384, 192, 10.
        # TF's lrn(depth_radius=4, bias=1, alpha=0.001/9, beta=0.75) sums
        # over 2 x 4 + 1 = 9 channels and does not divide alpha by the
        # window, as torch's LocalResponseNorm does: alpha x 9 here.
        lrn = lambda: nn.LocalResponseNorm(9, alpha=0.001, beta=0.75, k=1.0)
        return nn.Sequential(
            nn.Conv2d(3, 64, 5, padding=2), nn.ReLU(inplace=True), nn.MaxPool2d(2, 2), lrn(),
            nn.Conv2d(64, 64, 5, padding=2), nn.ReLU(inplace=True), lrn(), nn.MaxPool2d(2, 2),
            nn.Flatten(), nn.Linear(8 * 8 * 64, 384), nn.ReLU(inplace=True),
            nn.Linear(384, 192), nn.ReLU(inplace=True), nn.Linear(192, 10)), (3, 32, 32), 10

    def conv_bn(cin, cout, k, stride, pad):
        return nn.Sequential(nn.Conv2d(cin, cout, k, stride, pad, bias=False), nn.BatchNorm2d(cout))

    if name == "resnet32":
        # He et al. 2016, section 4.2 (models/nets/cifar.c): option-A
        # shortcuts, which subsample and pad channels with zeros.
        class Basic(nn.Module):
            def __init__(self, cin, cout, stride):
                super().__init__()
                self.c1 = conv_bn(cin, cout, 3, stride, 1)
                self.c2 = conv_bn(cout, cout, 3, 1, 1)
                self.stride, self.pad = stride, cout - cin

            def forward(self, x):
                y = self.c2(torch.relu(self.c1(x)))
                s = x
                if self.stride > 1 or self.pad:
                    s = x[:, :, ::self.stride, ::self.stride]
                    s = torch.nn.functional.pad(s, (0, 0, 0, 0, self.pad // 2, self.pad - self.pad // 2))
                return torch.relu(y + s)

        layers = [conv_bn(3, 16, 3, 1, 1), nn.ReLU(inplace=True)]
        cin = 16
        for s, width in enumerate((16, 32, 64)):
            for i in range(5):
                layers.append(Basic(cin, width, 2 if s > 0 and i == 0 else 1))
                cin = width
        layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(64, 10)]
        return nn.Sequential(*layers), (3, 32, 32), 10

    if name in ("resnet50", "resnet101"):
        # torchvision's ResNet v1.5 (models/nets/resnet.c), written out here
        # so that the worker needs nothing but torch.
        class Bottleneck(nn.Module):
            def __init__(self, cin, width, stride, project):
                super().__init__()
                self.c1 = conv_bn(cin, width, 1, 1, 0)
                self.c2 = conv_bn(width, width, 3, stride, 1)
                self.c3 = conv_bn(width, 4 * width, 1, 1, 0)
                self.down = conv_bn(cin, 4 * width, 1, stride, 0) if project else None

            def forward(self, x):
                y = torch.relu(self.c1(x))
                y = torch.relu(self.c2(y))
                y = self.c3(y)
                return torch.relu(y + (self.down(x) if self.down is not None else x))

        blocks = (3, 4, 6, 3) if name == "resnet50" else (3, 4, 23, 3)
        layers = [conv_bn(3, 64, 7, 2, 3), nn.ReLU(inplace=True), nn.MaxPool2d(3, 2, 1)]
        cin = 64
        for s, count in enumerate(blocks):
            for i in range(count):
                layers.append(Bottleneck(cin, 64 << s, 2 if s > 0 and i == 0 else 1, i == 0))
                cin = 4 * (64 << s)
        layers += [nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2048, 1000)]
        return nn.Sequential(*layers), (3, 224, 224), 1000

    if name == "teacher-student":
        return (nn.Sequential(nn.Linear(TASK["dim"], TASK["hidden"]), nn.Tanh(),
                              nn.Linear(TASK["hidden"], TASK["outputs"])), (TASK["dim"],), TASK["outputs"])

    fail("no network '%s' in the torch worker (it builds: %s)" % (name, ", ".join(NETS)))


def teacher_student_module():
    sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
    import teacher_student
    return teacher_student


def parameters(torch, name):
    model, _, _ = build(torch, name)
    return sum(p.numel() for p in model.parameters())


class Trainer:
    """One worker's training state: the model, its data, its optimizer."""

    def __init__(self, torch, args):
        self.torch = torch
        torch.set_num_threads(1)
        self.task = args.net == "teacher-student"
        if self.task:
            # teacher_student.py's student of this seed, its teacher and
            # held-out set
            ts = teacher_student_module()
            teacher, self.x_eval, self.y_eval = ts.make_teacher(
                TASK["dim"], TASK["hidden"], TASK["outputs"], TASK["noise"], TASK["teacher_seed"])
            torch.manual_seed(1000 + args.seed)
            model = ts.mlp(TASK["dim"], TASK["hidden"], TASK["outputs"])
        else:
            torch.manual_seed(args.seed)  # the same initial weights on every rank
            model, shape, classes = build(torch, args.net)
        self.params = [p for p in model.parameters()]
        # [sync] mode (doc/model.md, "Synchronisation"): bsp (one all-
        # reduce a step), local-sgd (a local step, the models averaged
        # every --period steps) or, through the parameter server of rank
        # world - 1 (parameter_server below), ssp, asp and backup.
        self.sync = args.sync
        self.via_ps = args.sync in PS_MODES
        self.period = max(1, args.period)
        self.version = 0
        self.last_b = 0
        self.dist = None
        self.ddp = None
        if args.world > 1:
            import torch.distributed as dist
            dist.init_process_group("gloo", init_method=args.init, rank=args.rank, world_size=args.world)
            self.dist = dist
            if args.ddp:
                from torch.nn.parallel import DistributedDataParallel
                model = DistributedDataParallel(model)
                self.ddp = model
        self.model = model
        self.world = args.world
        self.global_batch = args.global_batch
        # A synthetic in-memory data set, the same on every rank, as a real
        # job's loader holds one: iteration k's global batch is samples
        # k B .. (k + 1) B - 1 (mod its size), and this worker trains on
        # the slice the coordinator gives it, [offset, offset + b), so that
        # every split of a global batch computes the same update. Each
        # iteration gathers its samples into a new tensor, as a loader's
        # collate does.
        gen = torch.Generator().manual_seed(args.seed + 1)
        if self.task:
            # A stream, as teacher_student.py trains on: every sample of
            # the run a fresh one, made when a worker trains on it (as a
            # data loader would: part of its per-sample cost), the
            # teacher's outputs with their noise as its label. Sample j
            # of the stream is the same on every rank: it comes from chunk
            # j // CHUNK, whose generator is seeded by the seed and c.
            self.teacher = teacher
            self.stream_seed = 7919 * (args.seed + 1)
        else:
            n = max(1, min(args.dataset, args.global_batch))
            self.data = torch.randn((n,) + shape, generator=gen)
            self.labels = torch.randint(0, classes, (n,), generator=gen)
        self.iteration = 0
        self.prev = None
        # The gradients live in one flat buffer (the bucket a framework
        # fuses them into for the all-reduce; DDP's gradient_as_bucket_view).
        self.counted = 0
        # (dropcompute accumulates its micro-batches there, even alone)
        if (self.dist is not None and self.ddp is None) or self.sync == "dropcompute":
            total = sum(p.numel() for p in self.params)
            # dropcompute: one more element, the samples that counted
            self.flat = torch.zeros(total + (1 if self.sync == "dropcompute" else 0))
            self.total = total
            at = 0
            for p in self.params:
                p.grad = self.flat[at:at + p.numel()].view_as(p)
                at += p.numel()
        else:
            self.flat = None
        # local-sgd and the parameter server's modes move the parameters
        # themselves: they live in one flat buffer too
        self.pflat = None
        if self.dist is not None and self.sync != "bsp":
            self.pflat = flatten_into(torch, self.params)
        if self.task:
            self.opt = torch.optim.SGD(self.params, lr=TASK["lr"])
            # mean over the global batch's samples and outputs, as
            # teacher_student.py's mse_loss: this worker's share of it
            self.loss_fn = lambda out, y, reduction: torch.nn.functional.mse_loss(
                out, y, reduction=reduction) / TASK["outputs"]
        else:
            self.opt = torch.optim.SGD(self.params, lr=0.01, momentum=0.9)
            self.loss_fn = torch.nn.functional.cross_entropy
        # --loss-file: rank 0 keeps the parameters every --loss-every
        # steps and evaluates them on the held-out set once training is
        # over (outside the timed iterations and the worker's quota).
        self.loss_every = (args.loss_every if (self.task and args.loss_file and args.rank == 0 and not self.via_ps)
                           else 0)
        self.snapshots = []

    CHUNK = 64

    def stream(self, first, b):
        """Samples first .. first + b - 1 of the teacher-student stream."""
        torch = self.torch
        c0, c1 = first // self.CHUNK, (first + b - 1) // self.CHUNK
        xs, ys = [], []
        with torch.no_grad():
            for c in range(c0, c1 + 1):
                g = torch.Generator().manual_seed(self.stream_seed + c)
                x = torch.randn((self.CHUNK, TASK["dim"]), generator=g)
                xs.append(x)
                ys.append(TASK["noise"] * torch.randn((self.CHUNK, TASK["outputs"]), generator=g))
            x = torch.cat(xs)[first - c0 * self.CHUNK:][:b]
            y = self.teacher(x) + torch.cat(ys)[first - c0 * self.CHUNK:][:b]
        return x, y

    def batch(self, b, offset):
        if self.task:
            return self.stream(self.iteration * self.global_batch + offset, b)
        n = self.data.shape[0]
        idx = (self.torch.arange(b) + (self.iteration * self.global_batch + offset)) % n
        return self.data.index_select(0, idx), self.labels.index_select(0, idx)

    def compute(self, b, offset=0, accumulate=False):
        """Forward and backward of b samples; the gradients are the global
        batch's mean loss's share of this worker (accumulate: added to
        those already there, a micro-batch)."""
        self.last_b = b
        if accumulate:
            pass
        elif self.flat is not None:
            self.flat.zero_()
        else:
            self.opt.zero_grad(set_to_none=True)
        if b == 0 and self.ddp is None:
            return  # nothing to compute: a zero gradient goes to the exchange
        x, y = self.batch(b, offset)
        out = self.model(x)
        scale = (self.world if self.ddp is not None else 1) / self.global_batch
        if self.via_ps or self.sync == "dropcompute":
            scale = 1.0  # the sum over its samples: the server, or the exchange, weighs it
        elif self.sync == "local-sgd":
            scale = 1.0 / b  # its own model steps on its own batch's mean
        loss = self.loss_fn(out, y, reduction="sum") * scale
        loss.backward()
        if self.flat is None:  # without an exchange, a never-touched grad is None
            for p in self.params:
                if p.grad is None:
                    p.grad = self.torch.zeros_like(p)

    def exchange_and_step(self):
        if self.via_ps:
            self.push_pull()
            self.iteration += 1
            return
        if self.sync == "local-sgd" and self.dist is not None:
            self.opt.step()
            self.iteration += 1
            if self.iteration % self.period == 0:
                # the models' average weighted by batch: after one local
                # step each, the step of the union of their batches
                with self.torch.no_grad():
                    self.pflat.mul_(self.last_b / self.global_batch)
                    self.dist.all_reduce(self.pflat)
                if self.loss_every and self.iteration % self.loss_every == 0:
                    self.keep()
            return
        if self.flat is not None:
            self.dist.all_reduce(self.flat)  # SUM: the global batch's gradient
        self.opt.step()
        self.iteration += 1
        if self.loss_every and self.iteration % self.loss_every == 0:
            self.keep()

    def keep(self):
        with self.torch.no_grad():
            self.snapshots.append((self.iteration, [p.detach().clone() for p in self.params]))

    def push_pull(self, kind=PUSH):
        """The parameter server's modes: this worker's gradient (the sum over
        its samples) and its batch go to the server, which answers with
        the model's version, what the push was (its staleness, or 1 if
        dropped) and the model to compute the next step on."""
        torch, dist, ps = self.torch, self.dist, self.world - 1
        dist.send(torch.tensor([kind, self.version, self.last_b], dtype=torch.int64), dst=ps, tag=1)
        if kind != BYE:
            dist.send(self.flat, dst=ps, tag=2)
            back = torch.zeros(2, dtype=torch.int64)
            dist.recv(back, src=ps, tag=3)
            with torch.no_grad():
                dist.recv(self.pflat, src=ps, tag=4)
            self.version = int(back[0])

    def micro(self, b, offset, drop_last):
        """dropcompute: one micro-batch accumulated (the first of a step
        after an exchange starts from zero); drop_last discards the one
        before it first."""
        if drop_last:
            self.discard()
        if self.counted == 0 and self.prev is None:
            self.flat.zero_()
        self.prev = (self.flat.clone(), self.counted)
        self.compute(b, offset, accumulate=True)
        self.counted += b

    def discard(self):
        if self.prev is not None:
            self.flat.copy_(self.prev[0])
            self.counted = self.prev[1]

    def exchange_counted(self, drop_last):
        """dropcompute: the gradients and the samples that counted summed
        over the workers, the update their mean, and a step."""
        if drop_last:
            self.discard()
        self.flat[self.total] = self.counted
        if self.dist is not None:
            self.dist.all_reduce(self.flat)
        n = float(self.flat[self.total])
        if n > 0:
            self.flat[:self.total].div_(n)
        self.opt.step()
        self.iteration += 1
        self.counted, self.prev = 0, None
        self.flat.zero_()
        if self.loss_every and self.iteration % self.loss_every == 0:
            self.keep()

    def warm(self, b):
        """The untimed first iteration of the modes other than bsp: a
        forward and backward at b, and an exchange that changes nothing
        (gloo's connections made), no step."""
        self.compute(b)
        if self.via_ps:
            self.push_pull(WARM)
        elif self.sync in ("local-sgd", "dropcompute") and self.dist is not None:
            self.dist.all_reduce(self.flat)
        self.opt.zero_grad(set_to_none=False)
        if self.flat is not None:
            self.flat.zero_()

    def held_out(self, path):
        """Each kept step's held-out loss, as "step loss" lines to path."""
        with self.torch.no_grad(), open(path, "w") as f:
            for step, values in self.snapshots:
                for p, v in zip(self.params, values):
                    p.copy_(v)
                loss = self.torch.nn.functional.mse_loss(self.model(self.x_eval), self.y_eval).item()
                f.write("%d %.6f\n" % (step, loss))

    def digest(self):
        """The sum and the sum of squares of every parameter (float64)."""
        with self.torch.no_grad():
            return (sum(float(p.double().sum()) for p in self.params),
                    sum(float((p.double() ** 2).sum()) for p in self.params))

    def close(self):
        if self.via_ps:
            self.push_pull(BYE)
        if self.dist is not None:
            self.dist.destroy_process_group()


def staleness_weight(penalty, tau):
    """phi(tau), as lbsim's [convergence] staleness_penalty (sim/efficiency.c):
    the learning rate divided by max(1, tau) (Zhang et al. 2016), or kept."""
    return 1.0 / max(1, tau) if penalty == "inverse" else 1.0


def parameter_server(args):
    """Rank world - 1 under ssp, asp and backup: holds the model and applies
    the workers' gradients as lbsim's [sync] modes say (doc/model.md):
      asp     each push at once, as its own step of the worker's b samples
              (its mean gradient), at the learning rate x phi(tau), tau the
              updates applied since the worker read the model; the pull
              follows at once;
      ssp     each push at once as its share b / B of a clock's step, at
              the learning rate x phi(tau), tau the clocks the worker's read
              missed; the pull for step k waits until every worker has
              pushed step k - s - 1 (the staleness bound s);
      backup  a step of the first N - k pushes of the current version, the
              mean over their samples; a push computed on an older version
              is dropped and answered at once with the current model.
    Writes one line per push to --ps-log (monotonic time, worker, its step,
    tau, counted, samples, the version after it), and rank 0's duty of the
    held-out losses is its own: every --loss-every versions (clocks under
    ssp) it keeps the model and evaluates it at the end."""
    torch = import_torch()
    inp = os.fdopen(args.in_fd, "rb", buffering=0)
    out = os.fdopen(args.out_fd, "wb", buffering=0)
    try:
        t = Trainer(torch, args)
    except Exception as e:
        sys.stderr.write("torch_worker: the parameter server could not start: %s\n" % e)
        out.write(ANSWER.pack(5, 0, 0, 0, 0, 0, 0))
        return 1
    out.write(ANSWER.pack(0, 0, 0, 0, 0, 0, 0))
    dist, n, lr = t.dist, args.world - 1, TASK["lr"] if t.task else 0.01
    pflat = t.pflat
    grad = torch.zeros_like(pflat)
    acc = torch.zeros_like(pflat)
    hdr = torch.zeros(3, dtype=torch.int64)
    version, clock = 0, 0
    pushes, tau_of, pending, waiting = [0] * n, [0] * n, [], []
    counted, counted_samples, byes = 0, 0, 0
    log, every = [], max(1, args.loss_every)

    def keep(step):
        if args.loss_file:
            t.snapshots.append((step, [p.detach().clone() for p in t.params]))

    def reply(i, info):
        dist.send(torch.tensor([version if args.sync != "ssp" else clock, info], dtype=torch.int64), dst=i, tag=3)
        dist.send(pflat, dst=i, tag=4)

    with torch.no_grad():
        while byes < n:
            src = dist.recv(hdr, tag=1)
            kind, read, b = (int(v) for v in hdr)
            if kind == BYE:
                byes += 1
                continue
            dist.recv(grad, src=src, tag=2)
            if kind == WARM:
                reply(src, 0)
                continue
            now = time.monotonic()
            step = pushes[src]
            pushes[src] += 1
            if args.sync == "asp":
                tau = version - read
                if b > 0:
                    pflat.add_(grad, alpha=-lr * staleness_weight(args.penalty, tau) / b)
                version += 1
                log.append((now, src, step, tau, 1, b, version))
                if version % every == 0:
                    keep(version)
                reply(src, tau)
            elif args.sync == "ssp":
                tau = tau_of[src]
                pflat.add_(grad, alpha=-lr * staleness_weight(args.penalty, tau) / args.global_batch)
                m = min(pushes)
                log.append((now, src, step, tau, 1, b, m))
                for c in range(clock + 1, m + 1):
                    if c % every == 0:
                        keep(c)
                clock = m
                pending.append(src)
                for j in list(pending):
                    if m >= pushes[j] - args.staleness:  # every worker has pushed k - s - 1
                        tau_of[j] = pushes[j] - m
                        pending.remove(j)
                        reply(j, tau_of[j])
            else:  # backup
                if read < version:
                    log.append((now, src, step, version - read, 0, b, version))
                    reply(src, 1)
                    continue
                acc.add_(grad)
                counted += 1
                counted_samples += b
                waiting.append(src)
                if counted == n - args.backup:
                    if counted_samples > 0:
                        pflat.add_(acc, alpha=-lr / counted_samples)
                    version += 1
                    acc.zero_()
                    counted, counted_samples = 0, 0
                    log.append((now, src, step, 0, 1, b, version))
                    if version % every == 0:
                        keep(version)
                    for j in waiting:
                        reply(j, 0)
                    waiting = []
                else:
                    log.append((now, src, step, 0, 1, b, version + 1))
    if args.ps_log:
        with open(args.ps_log + ".part", "w") as f:
            for e in log:
                f.write("%.9f %d %d %d %d %d %d\n" % e)
        os.rename(args.ps_log + ".part", args.ps_log)  # whole, or not there
    if args.loss_file:
        t.held_out(args.loss_file)
    t.close()
    while True:  # until the coordinator says the run is over
        raw = inp.read(BATCH.size)
        if len(raw) < BATCH.size or BATCH.unpack(raw)[0] < 0:
            break
    return 0


def serve(args):
    torch = import_torch()
    inp = os.fdopen(args.in_fd, "rb", buffering=0)
    out = os.fdopen(args.out_fd, "wb", buffering=0)

    def answer(status, compute=0.0, cpu=0.0, start=0.0, exchange=0.0, exchange_cpu=0.0, version=0):
        out.write(ANSWER.pack(status, version, compute, cpu, start, exchange, exchange_cpu))

    try:
        t = Trainer(torch, args)
        # One untimed iteration at the largest batch, as the blas worker
        # and the calibration warm up; the exchange too, so that gloo's
        # connections are made before the first timed iteration. It
        # changes no weight (learning rate 0) and counts as no iteration.
        if t.sync != "bsp":
            t.warm(args.max_batch)
        else:
            t.compute(args.max_batch)
            for g in t.opt.param_groups:
                g["lr"], lr = 0.0, g["lr"]
            t.exchange_and_step()
            for g in t.opt.param_groups:
                g["lr"] = lr
            t.opt.state.clear()  # no momentum from it
        t.iteration = 0
        t.snapshots = []
    except Exception as e:
        sys.stderr.write("torch_worker: rank %d could not start: %s\n" % (args.rank, e))
        answer(5)
        return 1
    answer(0)
    while True:
        raw = inp.read(BATCH.size)
        if len(raw) < BATCH.size:
            break
        b, offset = BATCH.unpack(raw)
        if b < 0:
            break
        if offset & FLAGS:  # dropcompute: a micro-batch, or the exchange
            flags, offset = offset & FLAGS, offset & ~FLAGS
            t0 = time.monotonic()
            c0 = time.thread_time()
            p0 = time.process_time()
            if flags & EXCHANGE:
                t.exchange_counted(bool(flags & DROP_LAST))
                answer(0, 0.0, 0.0, t0, time.monotonic() - t0, time.process_time() - p0)
            else:
                t.micro(b, offset, bool(flags & DROP_LAST))
                answer(0, time.monotonic() - t0, time.thread_time() - c0, t0)
            continue
        t0 = time.monotonic()
        c0 = time.thread_time()
        t.compute(b, offset)
        c1 = time.thread_time()
        t1 = time.monotonic()
        p1 = time.process_time()
        t.exchange_and_step()
        p2 = time.process_time()
        t2 = time.monotonic()
        answer(0, t1 - t0, c1 - c0, t0, t2 - t1, p2 - p1, t.version)
    # LBSIM_TORCH_DIGEST: rank 0 appends its parameters' digest, for the
    # check that a policy changes time, never the maths (tests/e2e/torch.sh).
    digest = os.environ.get("LBSIM_TORCH_DIGEST")
    if digest and args.rank == 0:
        with open(digest, "a") as f:
            f.write("%d %.12g %.12g\n" % ((t.iteration,) + t.digest()))
    if t.loss_every:
        t.held_out(args.loss_file)
    t.close()
    return 0


def main(argv):
    ap = argparse.ArgumentParser(prog="torch_worker.py", description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    sub.add_parser("probe", help="print the PyTorch version, exit 4 if it cannot be imported")
    sub.add_parser("nets", help="the networks this worker builds")
    p = sub.add_parser("params", help="the parameter count of a network")
    p.add_argument("net")
    s = sub.add_parser("serve", help="be a testbed worker (run by lbsim's coordinator)")
    s.add_argument("--net", required=True)
    s.add_argument("--rank", type=int, default=0)
    s.add_argument("--world", type=int, default=1)
    s.add_argument("--init", default="", help="torch.distributed init method (file://...)")
    s.add_argument("--global-batch", type=int, required=True)
    s.add_argument("--max-batch", type=int, required=True)
    s.add_argument("--dataset", type=int, default=256, help="samples in the synthetic data set")
    s.add_argument("--seed", type=int, default=1)
    s.add_argument("--loss-file", default="", help="teacher-student: rank 0 writes the held-out loss here")
    s.add_argument("--loss-every", type=int, default=5, help="... of every N-th step")
    s.add_argument("--ddp", action="store_true", help="DistributedDataParallel instead of one flat all-reduce")
    s.add_argument("--sync", default="bsp", choices=("bsp", "local-sgd", "dropcompute") + PS_MODES,
                   help="[sync] mode; ssp, asp and backup go through a parameter server of rank world - 1")
    s.add_argument("--role", default="worker", choices=("worker", "ps"), help="a worker, or the parameter server")
    s.add_argument("--staleness", type=int, default=0, help="ssp: the bound s")
    s.add_argument("--backup", type=int, default=0, help="backup: the k pushes a step does not wait for")
    s.add_argument("--period", type=int, default=1, help="local-sgd: the models averaged every H steps")
    s.add_argument("--penalty", default="inverse", choices=("inverse", "none"),
                   help="ssp, asp: a stale gradient's learning rate / max(1, tau), or kept")
    s.add_argument("--ps-log", default="", help="the parameter server: one line per push here")
    s.add_argument("--in-fd", type=int, required=True)
    s.add_argument("--out-fd", type=int, required=True)
    args = ap.parse_args(argv)
    if args.cmd == "nets":
        print("\n".join(NETS))
        return 0
    torch = import_torch()
    if args.cmd == "probe":
        print(torch.__version__)
        return 0
    if args.cmd == "params":
        if args.net not in NETS:
            fail("no network '%s' in the torch worker (it builds: %s)" % (args.net, ", ".join(NETS)))
        print(parameters(torch, args.net))
        return 0
    if args.net not in NETS:
        fail("no network '%s' in the torch worker (it builds: %s)" % (args.net, ", ".join(NETS)))
    if args.role == "ps":
        if args.sync not in PS_MODES or args.world < 2:
            fail("--role ps: with --sync ssp, asp or backup and a world of 2 or more")
        return parameter_server(args)
    return serve(args)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
