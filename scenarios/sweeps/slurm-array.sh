#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-3.0-or-later
# A sweep on a Slurm cluster: a job array runs one shard of the sweep per
# task (lbsim sweep --shard K/N, each with its own results file and job log),
# and a job that starts when they have all succeeded merges the shards.
#
# Submit from a login node, in a folder every node sees (shared storage):
#
#   scenarios/sweeps/slurm-array.sh SWEEP.ini OUTDIR [SHARDS]
#
# which runs the two sbatch commands below itself (SHARDS defaults to 8).
# The results end in OUTDIR/results.db. A task that fails or is preempted
# can be resubmitted alone: it resumes its shard without redoing the points it finished; give it the number of shards,
# which a task alone cannot tell from its own array:
#
#   sbatch --array=K scenarios/sweeps/slurm-array.sh SWEEP.ini OUTDIR SHARDS
#
# Adjust the #SBATCH lines to your
# site (partition, account, time); lbsim and GNU parallel must be on PATH
# on the nodes (or set LBSIM to lbsim's path).
#SBATCH --job-name=lbsim-sweep
#SBATCH --cpus-per-task=8
#SBATCH --time=02:00:00
#SBATCH --output=lbsim-sweep-%A_%a.out
set -euo pipefail
lbsim=${LBSIM:-lbsim}
sweep=${1:?usage: slurm-array.sh SWEEP.ini OUTDIR [SHARDS]}
out=${2:?usage: slurm-array.sh SWEEP.ini OUTDIR [SHARDS]}

if [ -z "${SLURM_ARRAY_TASK_ID:-}" ]; then
	# On the login node: check the sweep, then submit the array and the merge.
	shards=${3:-8}
	"$lbsim" sweep "$sweep" --list > /dev/null
	mkdir -p "$out"
	job=$(sbatch --parsable --array=1-"$shards" "$0" "$sweep" "$out" "$shards")
	sbatch --dependency=afterok:"${job%%;*}" --job-name=lbsim-merge --output="$out/merge-%j.out" \
		--wrap "'$lbsim' merge '$out/results.db' '$out'/shard-*-of-$shards.db"
	echo "submitted $shards shards (job $job) and their merge into $out/results.db"
	exit 0
fi

# In array task K of N: shard K/N, as many points at once as CPUs given. N
# is the third argument (the array of a resubmitted task holds only K).
k=$SLURM_ARRAY_TASK_ID
n=${3:-${SLURM_ARRAY_TASK_COUNT:-$SLURM_ARRAY_TASK_MAX}}
mkdir -p "$out"
exec "$lbsim" sweep "$sweep" --shard "$k/$n" -j "${SLURM_CPUS_PER_TASK:-1}" -o "$out/shard-$k-of-$n.db"
