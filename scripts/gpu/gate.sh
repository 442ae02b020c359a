# Sourced by scripts/gpu-check.sh: the GPU gate (docs/gpu-machine.md). One line per check, then GATE PASS/FAIL.
# A change to harness/, the worker or the verdict rules is done only when this passed on a GPU with that change.

# The 10 KernelBench main problems with the largest inputs (8-16 GiB each; level 1).
GATE_LARGEST=${GATE_LARGEST:-45,4,46,96,94,39,38,76,52,51}

gate_line() { # gate_line NAME STATUS DETAIL: one check's line in summary.txt and gate.txt
  printf '%-34s %-4s %s\n' "$1" "$2" "$3" | tee -a "$OUT/summary.txt" "$OUT/gate.txt"
  [[ $2 == PASS ]] || gate_failed=1
}

# identity_memory_table RUN: one line per evaluation: verdict, strict, peak device memory against the budget.
identity_memory_table() {
  "$kj" results --db "$OUT/kj.sqlite" --run "$1" --format json | python3 -c '
import json, sys
rows, bad = json.load(sys.stdin), 0
gib = 2 ** 30
for r in rows:
    m = r.get("memory") or {}
    peak, budget = m.get("device_peak_bytes"), m.get("budget_bytes")
    ok = r["verdict"] == "correct" and r["strict_verdict"] == "pass"
    bad += not ok
    print(f"{r[\"level\"]}:{r[\"problem_id\"]:<4} {r[\"problem\"][:28]:<28} {r[\"verdict\"]:<14} {r[\"strict_verdict\"]:<6} "
          f"peak {peak / gib if peak else 0:6.2f} GiB  judge {(m.get(\"judge_device_bytes\") or 0) / gib:6.2f}  "
          f"runner {(m.get(\"runner_device_bytes\") or 0) / gib:6.2f}  budget {(budget or 0) / gib:6.2f}"
          + ("" if ok else f"  <-- {r[\"strict_failed\"]} {r[\"error\"][:120]}"))
print(f"{len(rows) - bad} of {len(rows)} correct with strict pass")
sys.exit(1 if bad or not rows else 0)'
}

stage_gate() {
  local start=$(date +%s) s gate_failed=0
  : >"$OUT/gate.txt"
  log "gate: build every target, gpu tests, the CUDA suite, identity on the 10 largest KernelBench inputs"
  s=$(date +%s)
  if [[ -x $kj ]]; then cmake --build "$BUILD" -j 16 >/tmp/kj-build.log 2>&1; else configure_and_build; fi
  if [[ $? -eq 0 ]]; then gate_line "build (every target)" PASS "$(($(date +%s) - s)) s"
  else gate_line "build (every target)" FAIL "$(grep -m3 -E 'error' /tmp/kj-build.log "$OUT/build.log" 2>/dev/null | head -3)"; fi
  [[ -f $OUT/build.log ]] && mv -f "$OUT/build.log" "$OUT/configure.log" /tmp/ 2>/dev/null
  s=$(date +%s)
  ctest --test-dir "$BUILD" -L gpu -E "built-in suite" --timeout 600 >"$OUT/gate-ctest.log" 2>&1
  gate_line "gpu tests (timer, baselines, strict and hostile CUDA corpora)" "$([[ $? -eq 0 ]] && echo PASS || echo FAIL)" \
    "$(grep -E 'tests passed|tests failed' "$OUT/gate-ctest.log" | tail -1), $(($(date +%s) - s)) s"
  s=$(date +%s)
  ctest --test-dir "$BUILD" -L gpu -R "built-in suite" --timeout 600 >>"$OUT/gate-ctest.log" 2>&1
  gate_line "built-in CUDA suite" "$([[ $? -eq 0 ]] && echo PASS || echo FAIL)" "$(($(date +%s) - s)) s"
  s=$(date +%s)
  "$kj" run --device cuda --kernelbench "$CARRY/KernelBench" --level 1 --ids "$GATE_LARGEST" --candidates identity \
    --no-timing --db "$OUT/kj.sqlite" --run-id gate-largest >/dev/null 2>"$OUT/gate-largest.err"
  identity_memory_table gate-largest >"$OUT/gate-largest.txt"
  gate_line "identity on the 10 largest inputs" "$([[ $? -eq 0 ]] && echo PASS || echo FAIL)" \
    "$(tail -1 "$OUT/gate-largest.txt"), $(($(date +%s) - s)) s"
  cat "$OUT/gate-largest.txt" >>"$OUT/gate.txt"
  gate_line "GATE" "$([[ $gate_failed -eq 0 ]] && echo PASS || echo FAIL)" \
    "$(($(date +%s) - start)) s on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
}
