# SPDX-License-Identifier: GPL-3.0-or-later
"""Time real PyTorch training steps of lbsim's GPT-3 and Llama presets on one CUDA GPU.

The measured twin of `lbsim calibrate --datasheet DEVICE:MODEL:SEQ`
(doc/gpus.md): the same network, operation for operation as lbsim's
transformer builder makes it (models/nets/transformer.c: learned positions,
LayerNorm, fused QKV with biases, GELU MLP of 4h, tied logits), trained as
the datasheet model's published figures were: bf16 autocast over fp32
weights, fused causal attention (scaled_dot_product_attention), AdamW, no
dropout. A step is forward, backward and the optimizer step; it is timed
with CUDA events after warm-up steps, and the median, the spread
((max - min) / median) and the step's CUDA kernels (torch.profiler: how
many, and their summed device time) are written one row per batch.

The CNNs of the torch worker (resnet50, ...) are timed too, in fp32 with
TF32 off, as `lbsim calibrate --cuda` times their GEMMs: the framework's
step beside its matrix products.

Usage: python3 testbed/gpu_steps.py --models gpt3-125m,gpt3-1.3b --batches 1,2,4,8 -o steps.csv

Exit status: 0 measured, 2 usage, 4 no PyTorch or no CUDA GPU.
"""
import argparse
import statistics
import sys
import time

# lbsim's presets (models/nets/transformer.c, after Brown et al. 2020,
# Table 2.1): layers, d_model, heads, head size; vocabulary 50,257, 2,048
# positions, tied embeddings. `params` is lbsim's own count, checked here.
GPT3 = {
    "gpt3-125m": (12, 768, 12, 64, 125226240),
    "gpt3-350m": (24, 1024, 16, 64, 355871744),
    "gpt3-760m": (24, 1536, 16, 96, 760300032),
    "gpt3-1.3b": (24, 2048, 16, 128, 1315723264),
    "gpt3-2.7b": (32, 2560, 32, 80, 2651553280),
    "gpt3-6.7b": (32, 4096, 32, 128, 6658404352),
}
# The torch worker's CNNs (testbed/torch_worker.py), trained in fp32 with
# TF32 off and SGD: the precision of `lbsim calibrate --cuda`'s SGEMMs.
CNNS = ("resnet50", "resnet101", "resnet32", "cifarnet")
VOCAB, MAX_SEQ = 50257, 2048
# Llama (Touvron et al. 2023, as models/nets/transformer.c): layers, d_model,
# heads, KV heads, FFN width, vocabulary, positions (RoPE), lbsim's count;
# RMSNorm, SwiGLU, no biases, untied logits.
LLAMA = {
    "llama2-7b": (32, 4096, 32, 32, 11008, 32000, 4096, 6738415616),
    "llama3-8b": (32, 4096, 32, 8, 14336, 128256, 8192, 8030261248),
}


def causal_attention(torch):
    """Fused causal attention; before PyTorch 2.0 (Debian 12's), unfused, for a dry run on the CPU."""
    sdpa = getattr(torch.nn.functional, "scaled_dot_product_attention", None)
    if sdpa is not None:
        return lambda q, k, v: sdpa(q, k, v, is_causal=True)

    def attention(q, k, v):
        s = q.shape[-2]
        mask = torch.ones(s, s, dtype=torch.bool, device=q.device).triu(1)
        w = (q @ k.transpose(-2, -1)) / q.shape[-1] ** 0.5
        return torch.softmax(w.masked_fill(mask, float("-inf")), -1) @ v
    return attention


def build(torch, name, device=None):
    """The GPT-3 preset `name`, its parameters made on `device` ("meta": none allocated)."""
    nn, F = torch.nn, torch.nn.functional
    dv = {"device": device}
    layers, h, heads, dh, _ = GPT3[name]
    attention = causal_attention(torch)

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.norm2 = nn.LayerNorm(h, **dv), nn.LayerNorm(h, **dv)
            self.qkv = nn.Linear(h, 3 * heads * dh, **dv)
            self.proj = nn.Linear(heads * dh, h, **dv)
            self.fc1, self.fc2 = nn.Linear(h, 4 * h, **dv), nn.Linear(4 * h, h, **dv)

        def forward(self, x):
            b, s, _ = x.shape
            q, k, v = self.qkv(self.norm1(x)).view(b, s, 3, heads, dh).permute(2, 0, 3, 1, 4)
            a = attention(q, k, v)
            x = x + self.proj(a.transpose(1, 2).reshape(b, s, heads * dh))
            return x + self.fc2(F.gelu(self.fc1(self.norm2(x))))

    class GPT(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(VOCAB, h, **dv)
            self.pos = nn.Parameter(torch.zeros(MAX_SEQ, h, **dv))
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.norm = nn.LayerNorm(h, **dv)

        def forward(self, tokens):
            x = self.embed(tokens) + self.pos[: tokens.shape[1]]
            for blk in self.blocks:
                x = blk(x)
            return self.norm(x) @ self.embed.weight.t()  # tied logits

    return GPT()


def build_llama(torch, name, device=None):
    """The Llama preset `name`, its parameters made on `device`."""
    nn, F = torch.nn, torch.nn.functional
    layers, h, heads, kv, ffn, vocab, max_seq, _ = LLAMA[name]
    dh, dv = h // heads, {"device": device}
    attention = causal_attention(torch)

    class RMSNorm(nn.Module):
        def __init__(self):
            super().__init__()
            self.weight = nn.Parameter(torch.ones(h, **dv))

        def forward(self, x):
            return x * torch.rsqrt(x.float().pow(2).mean(-1, keepdim=True) + 1e-5).to(x.dtype) * self.weight

    def rope(x, cos, sin):  # rotate-half form, over the head dimension
        a, b = x[..., : dh // 2], x[..., dh // 2:]
        return x * cos + torch.cat((-b, a), -1) * sin

    class Block(nn.Module):
        def __init__(self):
            super().__init__()
            self.norm1, self.norm2 = RMSNorm(), RMSNorm()
            self.q = nn.Linear(h, heads * dh, bias=False, **dv)
            self.k = nn.Linear(h, kv * dh, bias=False, **dv)
            self.v = nn.Linear(h, kv * dh, bias=False, **dv)
            self.o = nn.Linear(heads * dh, h, bias=False, **dv)
            self.gate = nn.Linear(h, ffn, bias=False, **dv)
            self.up = nn.Linear(h, ffn, bias=False, **dv)
            self.down = nn.Linear(ffn, h, bias=False, **dv)

        def forward(self, x, cos, sin):
            b, s, _ = x.shape
            y = self.norm1(x)
            q = rope(self.q(y).view(b, s, heads, dh).transpose(1, 2), cos, sin)
            k = rope(self.k(y).view(b, s, kv, dh).transpose(1, 2), cos, sin)
            v = self.v(y).view(b, s, kv, dh).transpose(1, 2)
            if kv < heads:  # grouped-query attention: each KV head serves heads / kv
                k, v = k.repeat_interleave(heads // kv, 1), v.repeat_interleave(heads // kv, 1)
            a = attention(q, k, v)
            x = x + self.o(a.transpose(1, 2).reshape(b, s, heads * dh))
            y = self.norm2(x)
            return x + self.down(F.silu(self.gate(y)) * self.up(y))

    class Llama(nn.Module):
        def __init__(self):
            super().__init__()
            self.embed = nn.Embedding(vocab, h, **dv)
            self.blocks = nn.ModuleList(Block() for _ in range(layers))
            self.norm = RMSNorm()
            self.head = nn.Linear(h, vocab, bias=False, **dv)

        def forward(self, tokens):
            s = tokens.shape[1]
            f = 1.0 / 10000 ** (torch.arange(0, dh, 2, device=tokens.device).float() / dh)
            ang = torch.outer(torch.arange(s, device=tokens.device).float(), f)
            cos, sin = torch.cat((ang.cos(), ang.cos()), -1), torch.cat((ang.sin(), ang.sin()), -1)
            x = self.embed(tokens)
            for blk in self.blocks:
                x = blk(x, cos, sin)
            return self.head(self.norm(x))

    return Llama()


def transformer(torch, name, device):
    """lbsim's preset `name` (GPT-3 or Llama) on `device`, and its vocabulary."""
    if name in GPT3:
        return build(torch, name, device), VOCAB
    return build_llama(torch, name, device), LLAMA[name][5]


def lbsim_params(name):
    return GPT3[name][4] if name in GPT3 else LLAMA[name][7]


def positions(name):
    return MAX_SEQ if name in GPT3 else LLAMA[name][6]


def measure(torch, dev, name, batch, seq, warmup, steps, profile, compiled=False):
    F = torch.nn.functional
    torch.manual_seed(1)
    if name in CNNS:
        import torch_worker
        model, shape, classes = torch_worker.build(torch, name)
        model = model.to(dev)
        opt = torch.optim.SGD(model.parameters(), lr=0.01, momentum=0.9)
        x = torch.randn((batch,) + tuple(shape), device=dev)
        y = torch.randint(0, classes, (batch,), device=dev)

        def forward():
            return F.cross_entropy(model(x), y)
    else:
        model, vocab = transformer(torch, name, dev)  # made where it trains: seconds at 6.7B
        if sum(p.numel() for p in model.parameters()) != lbsim_params(name):
            raise SystemExit("%s: not lbsim's %d parameters" % (name, lbsim_params(name)))
        if compiled:  # torch.compile: inductor fuses the element-wise kernels, as Megatron-LM's are
            model = torch.compile(model)
        opt = torch.optim.AdamW(model.parameters(), lr=1e-4, **({"fused": True} if dev == "cuda" else {}))
        x = torch.randint(0, vocab, (batch, seq), device=dev)
        y = torch.randint(0, vocab, (batch, seq), device=dev)

        def forward():
            with torch.autocast(dev, dtype=torch.bfloat16):
                logits = model(x)
            return F.cross_entropy(logits.float().view(-1, vocab), y.view(-1))
    params = sum(p.numel() for p in model.parameters())

    def step():
        forward().backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    for _ in range(warmup):
        step()
    times = []
    if dev == "cuda":
        torch.cuda.synchronize()
        for _ in range(steps):
            a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            a.record()
            step()
            b.record()
            b.synchronize()
            times.append(a.elapsed_time(b) / 1e3)
    else:
        for _ in range(steps):
            t0 = time.perf_counter()
            step()
            times.append(time.perf_counter() - t0)
    kernels, busy, mem = -1, -1.0, 0.0
    if profile and dev == "cuda":
        from torch.profiler import ProfilerActivity, profile as prof
        try:
            with prof(activities=[ProfilerActivity.CUDA]) as p:
                step()
                torch.cuda.synchronize()
            ev = [e for e in p.events() if e.device_type == torch.autograd.DeviceType.CUDA]
            kernels = len(ev)
            # microseconds; cuda_time before PyTorch 2.4
            busy = sum(getattr(e, "device_time", None) or e.cuda_time for e in ev) / 1e6
        except Exception as e:  # no CUPTI where the GPU is virtualised: times only
            print("gpu_steps.py: no kernel count (%s)" % e, file=sys.stderr)
    del model, opt, x, y
    if dev == "cuda":
        mem = torch.cuda.max_memory_allocated() / 1e9
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats()
    med = statistics.median(times)
    return params, med, (max(times) - min(times)) / med, kernels, busy, mem


def main(argv):
    ap = argparse.ArgumentParser(prog="gpu_steps.py", description=__doc__.split("\n")[0])
    ap.add_argument("--models", default="gpt3-125m,gpt3-350m,gpt3-1.3b,gpt3-2.7b")
    ap.add_argument("--batches", default="1,2,4,8")
    ap.add_argument("--seq", type=int, default=2048)
    ap.add_argument("--warmup", type=int, default=3)
    ap.add_argument("--steps", type=int, default=10)
    ap.add_argument("--no-profile", action="store_true", help="skip the kernel count")
    ap.add_argument("--compile", action="store_true",
                    help="the transformers through torch.compile (fused element-wise kernels)")
    ap.add_argument("--device", default="cuda", choices=("cuda", "cpu"),
                    help="cpu: a dry run of the script (wall-clock times, no kernel count)")
    ap.add_argument("--count", action="store_true",
                    help="print each model's parameter count and exit (no timing, no GPU)")
    ap.add_argument("-o", "--output")
    a = ap.parse_args(argv)
    if not a.count and not a.output:
        ap.error("-o OUTPUT is required")
    models = a.models.split(",")
    for m in models:
        if m not in GPT3 and m not in LLAMA and m not in CNNS:
            ap.error("no model '%s' (it builds: %s)" % (m, ", ".join(list(GPT3) + list(LLAMA) + list(CNNS))))
    try:
        batches = [int(b) for b in a.batches.split(",")]
    except ValueError:
        ap.error("--batches: comma-separated integers")
    longest = min([positions(m) for m in models if m not in CNNS] or [a.seq])
    if not 1 <= a.seq <= longest or a.warmup < 1 or a.steps < 2 or min(batches) < 1:
        ap.error("--seq 1..%d (the models' positions), --warmup >= 1, --steps >= 2, batches >= 1" % longest)
    try:
        import torch
    except Exception as e:
        print("gpu_steps.py: PyTorch cannot be imported: %s" % e, file=sys.stderr)
        return 4
    if a.count:
        for m in models:
            if m in CNNS:
                import torch_worker
                net = torch_worker.build(torch, m)[0]
            else:  # counted, not allocated
                net = transformer(torch, m, "meta")[0]
            print(m, sum(p.numel() for p in net.parameters()))
        return 0
    if a.device == "cuda" and not torch.cuda.is_available():
        print("gpu_steps.py: no CUDA GPU", file=sys.stderr)
        return 4
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.backends.cudnn.benchmark = False
    if a.device == "cuda":
        p = torch.cuda.get_device_properties(0)
        host = "%s, %.0f GiB" % (p.name, p.total_memory / 2**30)
    else:
        host = "CPU, %d threads" % torch.get_num_threads()
    with open(a.output, "w") as out:
        out.write("# %s; torch %s, CUDA %s, cuDNN %s; %s\n" % (
            host, torch.__version__, torch.version.cuda, torch.backends.cudnn.version(),
            time.strftime("%Y-%m-%d")))
        out.write("# transformers: bf16 autocast, fp32 weights, fused AdamW, SDPA causal attention, no dropout%s;"
                  " CNNs: fp32 (TF32 off), SGD; median of %d steps after %d warm-up steps\n"
                  % (", torch.compile" if a.compile else "", a.steps, a.warmup))
        out.write("model,seq,batch,params,time_s,spread,kernels,kernel_s,peak_gb\n")
        for m in models:
            for b in batches:
                try:
                    r = measure(torch, a.device, m, b, a.seq, a.warmup, a.steps, not a.no_profile, a.compile)
                except getattr(torch.cuda, "OutOfMemoryError", MemoryError):
                    print("%s batch %d: out of memory, larger batches skipped" % (m, b), file=sys.stderr)
                    torch.cuda.empty_cache()
                    break
                seq = 0 if m in CNNS else a.seq
                out.write("%s,%d,%d,%d,%.6f,%.4f,%d,%.6f,%.2f\n" % ((m, seq, b) + r))
                out.flush()
                print("%-10s seq %d batch %2d: %.4f s (spread %.1f%%), %d kernels, %.4f s of kernels, %.1f GB"
                      % (m, seq, b, r[1], 100 * r[2], r[3], r[4], r[5]), file=sys.stderr, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
