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

# triton: Triton candidates (tests/fixtures/kb_triton) for L1 19 and 23 against their headers, under
# --library-policy forbid-torch: an honest ReLU and softmax pass, a decoy whose work is torch.relu fails `library`.
stage_triton() {
  log "triton: tests/fixtures/kb_triton on KernelBench main L1 19, 23, --library-policy forbid-torch"
  "$kj" run --device cuda --kernelbench "$CARRY/KernelBench" --level 1 --ids 19,23 \
    --candidates tests/fixtures/kb_triton/candidates --max-time-ms 300 --rounds 1 --library-policy forbid-torch \
    --db "$OUT/kj.sqlite" --run-id kb-triton >/dev/null 2>"$OUT/triton.err"
  "$kj" results --db "$OUT/kj.sqlite" --run kb-triton --format json | python3 scripts/gpu/honest_table.py triton \
    >"$OUT/triton.txt"
  cat "$OUT/triton.txt" >>"$OUT/summary.txt"
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
# included; stochastic and constant references) at each precision of KB_AUDIT_PRECISIONS (default fp32,bf16,fp16),
# side by side in two phases so that no two audits meet on level 1's 16 GiB inputs: fp32 on level 1 while the
# others audit levels 2-3, then the other way round. Each audit is cut (keeping what it finished) before the call's
# time runs out. Back in $OUT: audit-<precision>.json (what `kj verified build` makes kernelbench/verified from),
# tables and progress in audit.log, unsound rows in the summary.
audit_one() { # audit_one PRECISION LEVELS TAG [IDS]
  local left=$((${KJ_CALL_S:-570} - ($(date +%s) - t0) - 20))
  timeout -s INT "$left" "$kj" audit --device cuda --kernelbench "$CARRY/KernelBench" --level "$2" --precision "$1" \
    ${4:+--ids "$4"} --db /tmp/kj-audit.sqlite --json "/tmp/kj-audit-$1-$3.json" >"/tmp/kj-audit-$1-$3.txt" \
    2>"/tmp/kj-audit-$1-$3.err"
}
# KB_AUDIT_SETS="fp32:3:9-50 fp32:1:34-37" (PRECISION:LEVEL:IDS ...): only these, side by side, one phase (the
# problems an earlier call did not finish); audit-<precision>-<n>.json back in $OUT.
stage_kb_audit_sets() {
  local spec n=0
  log "kj audit --device cuda on $KB_AUDIT_SETS"
  for spec in $KB_AUDIT_SETS; do
    IFS=: read -r p l i <<<"$spec"
    audit_one "$p" "$l" "s$((n++))" "$i" &
  done
  wait
  n=0
  for spec in $KB_AUDIT_SETS; do
    p=${spec%%:*}
    cp "/tmp/kj-audit-$p-s$n.json" "$OUT/audit-$p-$n.json"
    { echo "== $spec"; cat "/tmp/kj-audit-$p-s$n.txt" "/tmp/kj-audit-$p-s$n.err"; } >>"$OUT/audit.log"
    grep -E "UNSOUND|error|problems audited" "/tmp/kj-audit-$p-s$n.txt" | sed "s/^/$p /" | cut -c1-200 >>"$OUT/summary.txt"
    grep -E "stopped|interrupted|locked" "/tmp/kj-audit-$p-s$n.err" | sed "s/^/$p /" | cut -c1-300 >>"$OUT/summary.txt"
    n=$((n + 1))
  done
}
stage_kb_audit() {
  [[ -n ${KB_AUDIT_SETS:-} ]] && { stage_kb_audit_sets; return; }
  local precs=${KB_AUDIT_PRECISIONS:-fp32,bf16,fp16} p tag
  log "kj audit --device cuda on KernelBench main at $precs (two phases: level 1 | levels 2-3)"
  for p in ${precs//,/ }; do if [[ $p == fp32 ]]; then audit_one "$p" 1 a & else audit_one "$p" 2,3 a & fi; done
  wait
  log "kj audit: phase 2"
  for p in ${precs//,/ }; do if [[ $p == fp32 ]]; then audit_one "$p" 2,3 b & else audit_one "$p" 1 b & fi; done
  wait
  for p in ${precs//,/ }; do
    python3 -c 'import json, sys; print(json.dumps([a for f in sys.argv[1:] for a in json.load(open(f))], indent=1))' \
      "/tmp/kj-audit-$p-a.json" "/tmp/kj-audit-$p-b.json" >"$OUT/audit-$p.json"
    for tag in a b; do
      { echo "== $p $tag"; cat "/tmp/kj-audit-$p-$tag.txt" "/tmp/kj-audit-$p-$tag.err"; } >>"$OUT/audit.log"
      grep -E "UNSOUND|error|problems audited" "/tmp/kj-audit-$p-$tag.txt" | sed "s/^/$p /" | cut -c1-200 >>"$OUT/summary.txt"
      grep -E "stopped|interrupted|locked" "/tmp/kj-audit-$p-$tag.err" | sed "s/^/$p /" | cut -c1-300 >>"$OUT/summary.txt"
    done
  done
}
