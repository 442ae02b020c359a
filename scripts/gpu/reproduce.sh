# Sourced by scripts/gpu-check.sh: `cuda-l1` (issue 42's reproduction): CUDA-L1's H100 kernels, imported on the CPU with
#   kj import cuda-l1 h100.json --out .gpu-carry/cuda-l1 --kernelbench <KernelBench 21fbe5a>/KernelBench
# (docs/gpu-machine.md), judged with KernelBench v0's rules, run `cuda-l1`, level by level (REPRO_LEVELS, default
# "1 2 3"; each level extends the one run, hence --force). Resumable across calls like `sweep`: when the call's time (KJ_CALL_S, 570 s) runs out the run is
# interrupted (SIGINT: what it judged is kept); copy $OUT/kj.sqlite to .gpu-carry/kj.sqlite and call again.
# cuda-l1.md: `kj claims --format markdown` of what the run holds so far; cuda-l1.err: kj's stderr.
stage_cuda_l1() {
  local dir=$CARRY/cuda-l1 level left s rc item
  [[ -f $dir/claims.json ]] || { log "cuda-l1: no $dir/claims.json (import it first, docs/gpu-machine.md)"; return 1; }
  log "cuda-l1: CUDA-L1's H100 kernels on their own references, levels ${REPRO_LEVELS:=1 2 3}"
  # REPRO_RERUN="LEVEL:IDS ..." judges those kernels again in the run `cuda-l1-rerun` (after a fix in kj)
  for item in ${REPRO_RERUN:-}; do
    "$kj" run --device cuda --kernelbench "$dir/KernelBench" --candidates "$dir/candidates" --level "${item%%:*}" \
      --ids "${item#*:}" --kb-version v0 --producer cuda-l1 --db "$OUT/kj.sqlite" --run-id cuda-l1-rerun --force \
      >/dev/null 2>>"$OUT/cuda-l1.err"
    log "cuda-l1: rerun of $item: exit $?"
  done
  [[ -n ${REPRO_RERUN:-} ]] && "$kj" results --db "$OUT/kj.sqlite" --run cuda-l1-rerun | tee -a "$OUT/summary.txt"
  for level in $REPRO_LEVELS; do
    left=$((${KJ_CALL_S:-570} - ($(date +%s) - t0) - 40))
    ((left < 30)) && { log "cuda-l1: out of time before level $level; carry kj.sqlite and call again"; break; }
    s=$(date +%s)
    timeout -s INT "$left" "$kj" run --device cuda --kernelbench "$dir/KernelBench" --candidates "$dir/candidates" \
      --level "$level" --kb-version v0 --producer cuda-l1 --db "$OUT/kj.sqlite" --run-id cuda-l1 --force \
      >/dev/null 2>>"$OUT/cuda-l1.err"
    rc=$?
    log "cuda-l1: level $level: exit $rc after $(($(date +%s) - s)) s"
    ((rc == 124 || rc == 130)) && { log "cuda-l1: interrupted in level $level; carry kj.sqlite and call again"; break; }
  done
  # a kernel judged again (REPRO_RERUN, this call or an earlier one) counts with its newer evaluation
  local reruns=()
  "$kj" runs --db "$OUT/kj.sqlite" --format json 2>/dev/null | grep -q '"cuda-l1-rerun"' && reruns=(--run cuda-l1-rerun)
  "$kj" claims "$dir/claims.json" --db "$OUT/kj.sqlite" --run cuda-l1 "${reruns[@]}" --format markdown \
    >"$OUT/cuda-l1.md" 2>&1
  grep -E "^\| (all|L[0-9]) \|" "$OUT/cuda-l1.md" | head -4 | tee -a "$OUT/summary.txt"
}
