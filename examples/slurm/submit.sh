#!/bin/bash
# Submits a dualtime plan to Slurm: a job array of one task per shard, then the merge as
# a dependent job. Prints "ARRAY_JOB_ID MERGE_JOB_ID".
#   dualtime plan --shards 4 --output runs/p --backends cuda [run options]
#   examples/slurm/submit.sh runs/p [sbatch options for the shards, e.g. --gres=gpu:1]
# Shards write runs/p/shard-I (results.json, results.md); the merge writes runs/p/merged.
# Note: a shard whose cases fail exits 1, so the merge (afterok) does not start; run
# `dualtime merge runs/p/shard-* --output runs/p/merged` by hand to see those results.
set -eu
DIR=${1:?usage: submit.sh PLAN_DIR [sbatch options]}
shift
HERE=$(cd "$(dirname "$0")" && pwd)
N=$(sed -n 's/^  "shards": \([0-9][0-9]*\),$/\1/p' "$DIR/plan.json")
[ -n "$N" ] || { echo "submit.sh: $DIR/plan.json names no shard count" >&2; exit 2; }
LOGS=${DUALTIME_SLURM_LOGS:-$DIR}
ARRAY=$(sbatch --parsable --array=0-$((N - 1)) --output="$LOGS/slurm-shard-%a.out" "$@" \
        "$HERE/shard.sbatch" "$DIR" "$N")
ARRAY=${ARRAY%%;*}
MERGE=$(sbatch --parsable --dependency=afterok:"$ARRAY" --output="$LOGS/slurm-merge.out" \
        "$HERE/merge.sbatch" "$DIR")
echo "${ARRAY} ${MERGE%%;*}"
