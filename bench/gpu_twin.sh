#!/bin/sh
# SPDX-License-Identifier: GPL-3.0-or-later
# The measured twins on one CUDA GPU (doc/gpus.md, "Measured on an H200"):
#   1. lbsim calibrate --cuda: the training GEMMs of ResNet-50 and GPT-3 125M
#      through cuBLAS (fp32), two measured profiles;
#   2. testbed/gpu_steps.py: real PyTorch training steps of the same networks
#      (ResNet-50 in fp32 beside its GEMMs; GPT-3 125M to 6.7B and Llama 2 7B
#      in bf16, the datasheet model's held-out twin), one CSV each.
# Each part runs even if another failed; the status is 1 if any did.
# Usage: bench/gpu_twin.sh OUTDIR   (LBSIM, PYTHON: the programs)
out=${1:?usage: bench/gpu_twin.sh OUTDIR}
here=$(cd "$(dirname "$0")/.." && pwd)
lbsim=${LBSIM:-$here/lbsim}
python=${PYTHON:-python3}
mkdir -p "$out" || exit 1
rc=0
run() { echo "== $*" >&2; "$@" || { echo "== failed ($?): $*" >&2; rc=1; }; }
run "$lbsim" calibrate --cuda resnet50 --batches 1,2,4,8,16,32,64 -o "$out/cuda-resnet50.ini"
run "$lbsim" calibrate --cuda gpt3-125m --batches 1,2,4,8 -o "$out/cuda-gpt3-125m.ini"
run "$python" "$here/testbed/gpu_steps.py" --models resnet50 --batches 1,2,4,8,16,32,64 \
	-o "$out/steps-resnet50.csv"
run "$python" "$here/testbed/gpu_steps.py" \
	--models gpt3-125m,gpt3-350m,gpt3-760m,gpt3-1.3b,gpt3-2.7b,gpt3-6.7b --batches 1,2,4,8 \
	-o "$out/steps-gpt3.csv"
run "$python" "$here/testbed/gpu_steps.py" --models llama2-7b --seq 2048 --batches 1,2,4 \
	-o "$out/steps-llama-2048.csv"
run "$python" "$here/testbed/gpu_steps.py" --models llama2-7b --seq 4096 --batches 1,2 \
	-o "$out/steps-llama-4096.csv"
# fused element-wise kernels (torch.compile), as Megatron-LM's: the largest steps
run "$python" "$here/testbed/gpu_steps.py" --compile --models gpt3-1.3b,gpt3-2.7b --batches 8 \
	-o "$out/steps-compiled-gpt3.csv"
run "$python" "$here/testbed/gpu_steps.py" --compile --models gpt3-6.7b --batches 2 \
	-o "$out/steps-compiled-gpt3-6.7b.csv"
run "$python" "$here/testbed/gpu_steps.py" --compile --models llama2-7b --seq 4096 --batches 1 \
	-o "$out/steps-compiled-llama-4096.csv"
exit $rc
