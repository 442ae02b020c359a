# Sourced by scripts/gpu-check.sh: `identity-bias` (issue 41): why an identity candidate times 2-4% slower than
# its reference on some KernelBench main L2 problems. BIAS_IDS (default 9,12,63,76: the sweep's largest gaps)
# judged by kj under several options, one DB each (identity-bias.md: per problem the candidate's and the
# reference's median, the kernels' own time from the candidate's trace, and the gap), and scripts/gpu/launch_gap.py
# (the same model timed in one process and in a child driven over a socket: launch-gap.txt, the first two).
# BIAS_VARIANTS: default, nosandbox, fresh, cuda-agent, rounds6, pinned (kj on GPU0's CPUs), tight (on CPUs 2-5),
# shared (KJ_TIMING_CPU=shared: candidate and reference timed on one CPU), BIAS_LEVEL (default 2) the level,
# each any number of times (default2, tight2, ...).
stage_identity_bias() {
  local ids=${BIAS_IDS:-9,12,63,76} v db args
  log "identity-bias: KernelBench main L${BIAS_LEVEL:-2} $ids"
  local kb=$CARRY/KernelBench/level${BIAS_LEVEL:-2}
  { echo "## the machine"; echo '```'; lscpu | grep -E "^(CPU\(s\)|Thread|Core|Socket|NUMA|Model name)"
    numactl -H 2>/dev/null | head -4; nvidia-smi topo -m 2>/dev/null | head -4; echo '```'; } >>"$OUT/identity-bias.md"
  local probed=0
  for n in ${ids//,/ }; do
    ((probed++ < ${BIAS_PROBE:-2})) || break # the first BIAS_PROBE (2) problems
    local f
    f=$(ls "$kb"/"${n}"_*.py 2>/dev/null | head -1)
    [[ -n $f ]] && { echo "== $(basename "$f")"; timeout 120 python3 scripts/gpu/launch_gap.py "$f" 60 2>&1; } >>"$OUT/launch-gap.txt"
  done
  log "identity-bias: launch gap done"
  # pinned: kj and everything it starts on the CPUs local to the GPU (NVML's affinity, from nvidia-smi topo)
  local near
  near=$(nvidia-smi topo -m 2>/dev/null | awk '$1 == "GPU0" {for (i = 2; i <= NF; i++) if ($i ~ /^[0-9]+[-,0-9]*$/ && $i ~ /-/) {print $i; exit}}')
  for v in ${BIAS_VARIANTS:-default nosandbox fresh cuda-agent rounds6 default2}; do
    db=/tmp/kj-bias-$v.sqlite
    rm -f "$db"
    args=()
    local envs=()
    case $v in
    nosandbox) envs=(KJ_SANDBOX=none) ;;
    fresh) args=(--fresh-judges) ;;
    cuda-agent) args=(--timing-method cuda-agent) ;;
    rounds6) args=(--rounds 6) ;;
    pinned*) envs=(taskset -c "${near:-0-7}") ;;
    tight*) envs=(taskset -c 2-5) ;; # four CPUs for kj, its judge, runners and the spare
    shared*) envs=(KJ_TIMING_CPU=shared) ;; # both subjects timed on one CPU (engine/worker/timing_cpus.hpp)
    esac
    local s
    s=$(date +%s)
    [[ $v == pinned* ]] && log "identity-bias: $v on CPUs ${near:-0-7} (GPU0's affinity: '${near}')"
    env "${envs[@]}" timeout 200 "$kj" run --device cuda --kernelbench "$CARRY/KernelBench" --level "${BIAS_LEVEL:-2}" --ids "$ids" \
      --candidates identity --db "$db" --run-id "bias-$v" "${args[@]}" >/dev/null 2>>"$OUT/identity-bias.err"
    log "identity-bias: $v exit $? in $(($(date +%s) - s)) s"
    python3 scripts/gpu/bias_table.py "$db" "bias-$v" >/tmp/kj-bias-$v.txt
    { echo "## $v"; cat /tmp/kj-bias-$v.txt; echo; } >>"$OUT/identity-bias.md"
    log "identity-bias: $v: $(grep -c '^\*' /tmp/kj-bias-$v.txt) of $(wc -l </tmp/kj-bias-$v.txt) outside 1%; ratios $(grep -o 'ratio [0-9.]*' /tmp/kj-bias-$v.txt | cut -d' ' -f2 | tr '\n' ' ')"
  done
}
