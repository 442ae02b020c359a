# Sourced by scripts/gpu-check.sh: `identity-bias` (issue 41): why an identity candidate times 2-4% slower than
# its reference on some KernelBench main L2 problems. BIAS_IDS (default 9,12,63,76: the sweep's largest gaps)
# judged by kj under several options, one DB each (identity-bias.md: per problem the candidate's and the
# reference's median, the kernels' own time from the candidate's trace, and the gap), and scripts/gpu/launch_gap.py
# (the same model timed in one process and in a child driven over a socket: launch-gap.txt).
stage_identity_bias() {
  local ids=${BIAS_IDS:-9,12,63,76} v db args
  log "identity-bias: KernelBench main L2 $ids"
  local kb=$CARRY/KernelBench/KernelBench/level2
  for n in ${ids//,/ }; do
    local f
    f=$(ls "$kb"/"${n}"_*.py 2>/dev/null | head -1)
    [[ -n $f ]] && { echo "== $(basename "$f")"; timeout 120 python3 scripts/gpu/launch_gap.py "$f" 60 2>&1; } >>"$OUT/launch-gap.txt"
  done
  log "identity-bias: launch gap done"
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
    esac
    local s
    s=$(date +%s)
    env "${envs[@]}" timeout 200 "$kj" run --device cuda --kernelbench "$CARRY/KernelBench" --level 2 --ids "$ids" \
      --candidates identity --db "$db" --run-id "bias-$v" "${args[@]}" >/dev/null 2>>"$OUT/identity-bias.err"
    log "identity-bias: $v exit $? in $(($(date +%s) - s)) s"
    { echo "## $v"; python3 scripts/gpu/bias_table.py "$db" "bias-$v"; echo; } >>"$OUT/identity-bias.md"
  done
}
