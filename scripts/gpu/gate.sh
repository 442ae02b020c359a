# Sourced by scripts/gpu-check.sh: the GPU gate (docs/gpu-machine.md). One line per check, then GATE PASS/FAIL.
# A change to engine/, timing/, cuda/, planning/, the worker or the verdict rules is done only when this passed on a GPU with that change.
# GATE_CHECKS picks checks (default: all, in this order): build quick largest honest hostile suite.

# Five of the KernelBench main problems with the largest inputs (level 1): a 16 GiB input (45), a reference with
# its own 8 GiB workspace (38), a convolution (76), a one-value output (94 MSELoss) and an integer one (51 Argmax).
# kb-memory runs the 30 largest.
GATE_LARGEST=${GATE_LARGEST:-45,38,76,94,51}

gate_line() { # gate_line NAME STATUS DETAIL: one check's line in summary.txt and gate.txt
  printf '%-40s %-4s %s\n' "$1" "$2" "$3" | tee -a "$OUT/summary.txt" "$OUT/gate.txt"
  [[ $2 == PASS ]] || gate_failed=1
}
pass_fail() { [[ $1 -eq 0 ]] && echo PASS || echo FAIL; }

# identity_memory_table RUN: one line per evaluation: verdict, strict, peak device memory against the budget.
identity_memory_table() {
  "$kj" results --db "$OUT/kj.sqlite" --run "$1" --format json | python3 scripts/gpu/memory_table.py
}

gate_build() { # only what the gate runs: kj (with its CUDA plugin) and the gpu tests; CI builds the rest
  export KJ_BUILD_TARGETS="kj kj_tests_gpu"
  # shellcheck disable=SC2086
  if [[ -x $kj ]]; then cmake --build "$BUILD" -j 16 --target $KJ_BUILD_TARGETS >/tmp/kj-build.log 2>&1
  else configure_and_build; fi
  local rc=$?
  mv -f "$OUT/build.log" "$OUT/configure.log" /tmp/ 2>/dev/null
  gate_line "build (kj, gpu tests)" "$(pass_fail $rc)" "$(grep -m3 -hE 'error:|FAILED:' /tmp/kj-build.log /tmp/build.log 2>/dev/null)"
}
gate_quick() { # the gpu-label tests that take seconds: the plugin, the timer, CUPTI, NVML
  ctest --test-dir "$BUILD" -L gpu -E "built-in suite|corpus|CUDA attacks|baselines" --timeout 120 \
    >"$OUT/gate-quick.log" 2>&1
  gate_line "gpu tests: plugin, timer, CUPTI, NVML" "$(pass_fail $?)" "$(grep -E 'tests passed' "$OUT/gate-quick.log")"
}
gate_largest() {
  timeout 300 "$kj" run --device cuda --kernelbench "$CARRY/KernelBench" --level 1 --ids "$GATE_LARGEST" \
    --candidates identity --no-timing --db "$OUT/kj.sqlite" --run-id gate-largest >/dev/null 2>"$OUT/gate-largest.err"
  identity_memory_table gate-largest >"$OUT/gate-largest.txt"
  gate_line "identity on large KernelBench inputs" "$(pass_fail $?)" "$(tail -1 "$OUT/gate-largest.txt")"
  cat "$OUT/gate-largest.txt" >>"$OUT/gate.txt"
}
gate_honest() { # strict hack sample: hand-written kernels, honest and buggy, on KernelBench main L1 19/23/47
  # GATE_HONEST_ROUNDS timing rounds (default 1): each checks three timed outputs (sampled in 64 KiB chunks on
  # the device when larger than 64 MiB), once 28 s per round when 6.4 GB outputs went to the host and back.
  KB_HONEST_ROUNDS=${GATE_HONEST_ROUNDS:-1} stage_kb_honest >/dev/null
  tail -1 "$OUT/kb-honest.txt" | awk '$2 > 0 && $2 == $4 {ok = 1} END {exit !ok}'
  gate_line "strict sample (kb-honest)" "$(pass_fail $?)" "$(tail -1 "$OUT/kb-honest.txt")"
}
gate_hostile() { # the hostile and the outside CUDA corpora against their manifests (ctest, label gpu)
  ctest --test-dir "$BUILD" -L gpu -R "CUDA attacks|CUDA hacks" --timeout 400 --output-on-failure >"$OUT/gate-hostile.log" 2>&1
  gate_line "hostile and outside CUDA corpora" "$(pass_fail $?)" "$(grep -E 'tests passed|Total Test time' "$OUT/gate-hostile.log" | tr '\n' ' ')"
}
gate_suite() {
  ctest --test-dir "$BUILD" -L gpu -R "built-in suite" --timeout 400 --output-on-failure >"$OUT/gate-suite.log" 2>&1
  gate_line "built-in CUDA suite" "$(pass_fail $?)" "$(grep -E 'Total Test time' "$OUT/gate-suite.log")"
}

stage_gate() {
  local start=$(date +%s) s check gate_failed=0
  : >"$OUT/gate.txt"
  log "gate: ${GATE_CHECKS:=build quick largest honest hostile suite}"
  for check in $GATE_CHECKS; do
    s=$(date +%s)
    "gate_$check"
    echo "   ($check: $(($(date +%s) - s)) s)" | tee -a "$OUT/gate.txt"
  done
  gate_line "GATE" "$(pass_fail $gate_failed)" \
    "$(($(date +%s) - start)) s on $(nvidia-smi --query-gpu=name --format=csv,noheader | head -1)"
}
