# Sourced by scripts/gpu-check.sh: `numerics` (issue 42, baseline numerics matched; docs/methodology.md "Compared
# at its own numerics too"). On CUDA-L1's H100 kernels that turn TF32 on (NUM_IDS, level 1; default 57,64,76:
# correct, their time not credited at fp32): eager baselines at tf32 (`kj baselines --precision tf32`), the
# kernels judged again in run `cuda-l1-tf32` (their speedup at tf32 beside the run's), then `kj audit` of
# KernelBench main level 1 NUM_AUDIT_IDS (default 1-12) with TF32 off (fp32) and on (tf32), side by side.
# numerics.txt: the results and the two audits' tables; the summary names each kernel's two speedups.
stage_numerics() {
  local dir=$CARRY/cuda-l1 ids=${NUM_IDS:-57,64,76} p left
  [[ -f $dir/claims.json ]] || { log "numerics: no $dir/claims.json (import it first, docs/gpu-machine.md)"; return 1; }
  log "numerics: eager at tf32 for CUDA-L1 L1 $ids, the kernels judged again, audits fp32/tf32 of L1 ${NUM_AUDIT_IDS:-1-12}"
  "$kj" baselines --device cuda --kernelbench "$dir/KernelBench" --kb-version v0 --level 1 --ids "$ids" \
    --modes eager --precision tf32 --db "$OUT/kj.sqlite" >"$OUT/numerics.txt" 2>&1
  log "numerics: baselines at tf32: exit $?"
  "$kj" run --device cuda --kernelbench "$dir/KernelBench" --candidates "$dir/candidates" --level 1 --ids "$ids" \
    --kb-version v0 --producer cuda-l1 --db "$OUT/kj.sqlite" --run-id cuda-l1-tf32 >/dev/null 2>>"$OUT/numerics.txt"
  log "numerics: run cuda-l1-tf32: exit $?"
  "$kj" results --db "$OUT/kj.sqlite" --run cuda-l1-tf32 --verbose >>"$OUT/numerics.txt" 2>&1
  grep -E "^== evaluation|computed at|time not trusted" "$OUT/numerics.txt" | cut -c1-160 | tee -a "$OUT/summary.txt"
  for p in fp32 tf32; do
    left=$((${KJ_CALL_S:-570} - ($(date +%s) - t0) - 30))
    ((left < 30)) && { log "numerics: out of time before the $p audit"; break; }
    timeout -s INT "$left" "$kj" audit --device cuda --kernelbench "$CARRY/KernelBench" --level 1 \
      --ids "${NUM_AUDIT_IDS:-1-12}" --precision "$p" --db /tmp/kj-numerics-audit.sqlite \
      --json "/tmp/kj-numerics-$p.json" >"/tmp/kj-numerics-$p.txt" 2>&1
    log "numerics: audit $p: exit $?"
    { echo "== kj audit --precision $p"; cat "/tmp/kj-numerics-$p.txt"; } >>"$OUT/numerics.txt"
  done
  [[ -f /tmp/kj-numerics-fp32.json && -f /tmp/kj-numerics-tf32.json ]] &&
    python3 - /tmp/kj-numerics-fp32.json /tmp/kj-numerics-tf32.json <<'PY' | tee -a "$OUT/summary.txt"
import json, sys
def load(path):
    return {(a["level"], a["id"]): a for a in json.load(open(path))}
off, on = load(sys.argv[1]), load(sys.argv[2])
same = [k for k in off if k in on and off[k].get("unsound") == on[k].get("unsound")]
print(f"numerics: audits TF32 off/on: {len(off)}/{len(on)} problems, {len(same)} with the same soundness")
for k in sorted(set(off) | set(on)):
    if k not in same:
        print(f"  L{k[0]} {k[1]}: off {off.get(k, {}).get('unsound')}, on {on.get(k, {}).get('unsound')}")
PY
}
