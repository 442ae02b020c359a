# Sourced by scripts/gpu-check.sh: acceptance runs on KernelBench main (docs/gpu-machine.md).

# The 30 KernelBench main problems with the largest inputs (all level 1, 6-16 GiB).
KB_LARGEST30=${KB_LARGEST30:-45,4,46,96,94,39,38,76,52,51,53,49,48,47,35,37,36,34,32,31,30,29,28,27,26,25,24,23,22,21}

# kb-honest: hand-written CUDA kernels (honest and buggy) for L1 19, 23, 47 against their headers.
stage_kb_honest() {
  log "kb-honest: tests/fixtures/kb_gpu on KernelBench main L1 19, 23, 47"
  "$kj" run --device cuda --kernelbench "$CARRY/KernelBench" --level 1 --ids 19,23,47 \
    --candidates tests/fixtures/kb_gpu/candidates --max-time-ms 500 --rounds "${KB_HONEST_ROUNDS:-3}" \
    --db "$OUT/kj.sqlite" --run-id kb-honest \
    >/dev/null 2>"$OUT/kb-honest.err"
  "$kj" results --db "$OUT/kj.sqlite" --run kb-honest --format json | python3 scripts/gpu/honest_table.py \
    >"$OUT/kb-honest.txt"
  tail -1 "$OUT/kb-honest.txt" | tee -a "$OUT/summary.txt"
}

# kb-memory: identity on the 30 largest inputs (kj's peak per evaluation), then KernelBench's own
# eval_kernel_against_ref on KB_MEM_IDS with each process's device memory sampled by nvidia-smi.
stage_kb_memory() {
  log "kb-memory: identity on the 30 largest KernelBench main inputs"
  "$kj" run --device cuda --kernelbench "$CARRY/KernelBench" --level 1 --ids "$KB_LARGEST30" --candidates identity \
    --no-timing --db "$OUT/kj.sqlite" --run-id kb-largest30 >/dev/null 2>"$OUT/kb-largest30.err"
  identity_memory_table kb-largest30 >"$OUT/kb-memory.txt"
  tail -1 "$OUT/kb-memory.txt" | tee -a "$OUT/summary.txt"
  kb_pip
  log "kb-memory: KernelBench's own eval on L1 ${KB_MEM_IDS:=45,4,19,23,47,39}, ${KB_MEM_JOBS:=2} at a time"
  PYTHONPATH=/tmp/site timeout "${KB_MEM_S:-300}" python3 scripts/kb_memory.py --kb-src "$CARRY/kb-src/src" \
    --problems "$CARRY/KernelBench" --level 1 --ids "$KB_MEM_IDS" --jobs "$KB_MEM_JOBS" \
    >>"$OUT/kb-memory.txt" 2>"$OUT/kb-memory.err"
  grep "^kb " "$OUT/kb-memory.txt" | tee -a "$OUT/summary.txt"
}

# kb-audit: `kj audit` on every KernelBench main problem on the GPU (null candidates under both rules, TF32
# included; stochastic and constant references), one audit per precision in KB_AUDIT_PRECISIONS (default fp32,bf16)
# side by side, each cut (keeping what it finished) before the call's time runs out: audit-<precision>.json (the
# file kernelbench/verified is made from), the tables in audit.txt, progress in audit.err, unsound rows in the summary.
stage_kb_audit() {
  local levels=${KB_AUDIT_LEVELS:-1,2,3} precs=${KB_AUDIT_PRECISIONS:-fp32,bf16} p
  local left=$((${KJ_CALL_S:-570} - ($(date +%s) - t0) - 25))
  log "kj audit --device cuda on KernelBench main levels $levels ${KB_AUDIT_IDS:+ids $KB_AUDIT_IDS }at $precs (${left} s)"
  for p in ${precs//,/ }; do
    # shellcheck disable=SC2086
    timeout -s INT "$left" "$kj" audit --device cuda --kernelbench "$CARRY/KernelBench" --level "$levels" \
      ${KB_AUDIT_IDS:+--ids $KB_AUDIT_IDS} --precision "$p" --db /tmp/kj-audit.sqlite --json "$OUT/audit-$p.json" \
      >"/tmp/kj-audit-$p.txt" 2>"/tmp/kj-audit-$p.err" &
  done
  wait
  for p in ${precs//,/ }; do
    { echo "== $p"; cat "/tmp/kj-audit-$p.txt"; } >>"$OUT/audit.txt"
    { echo "== $p"; cat "/tmp/kj-audit-$p.err"; } >>"$OUT/audit.err"
    grep -E "UNSOUND|error|problems audited" "/tmp/kj-audit-$p.txt" | sed "s/^/$p /" | cut -c1-200 >>"$OUT/summary.txt"
    grep -E "stopped|interrupted" "/tmp/kj-audit-$p.err" | sed "s/^/$p /" >>"$OUT/summary.txt"
  done
}
