# Sourced by scripts/gpu-check.sh: `sweep` (issue 41's acceptance): identity candidates on every KernelBench main
# problem of SWEEP_LEVELS (default "1 2 3": 250 problems), default options, one run per level (sweep-l1 ...;
# SWEEP_SUFFIX names a second sweep: sweep-l3-shared).
# Resumable across calls: when the call's time (KJ_CALL_S, 570 s) runs out the level's run is interrupted
# (SIGINT: what it judged is kept); copy $OUT/kj.sqlite to .gpu-carry/kj.sqlite and call the stage again.
# sweep.md: the per-level table (scripts/gpu/sweep_table.py) of what the runs hold so far; sweep.err: kj's stderr.
stage_sweep() {
  local level left run
  log "sweep: identity candidates on KernelBench main levels ${SWEEP_LEVELS:=1 2 3}"
  for level in $SWEEP_LEVELS; do
    run=sweep-l$level${SWEEP_SUFFIX:-}
    left=$((${KJ_CALL_S:-570} - ($(date +%s) - t0) - 30))
    ((left < 30)) && { log "sweep: out of time before level $level; carry kj.sqlite and call again"; break; }
    local s
    s=$(date +%s)
    timeout -s INT "$left" "$kj" run --device cuda --kernelbench "$CARRY/KernelBench" --level "$level" \
      --candidates identity --db "$OUT/kj.sqlite" --run-id "$run" >/dev/null 2>>"$OUT/sweep.err"
    local rc=$?
    log "sweep: level $level: exit $rc after $(($(date +%s) - s)) s ($( "$kj" results --db "$OUT/kj.sqlite" --run "$run" --format csv | tail -n +2 | wc -l) judged)"
    ((rc == 124 || rc == 130)) && { log "sweep: interrupted in level $level; carry kj.sqlite and call again"; break; }
  done
  rm -f /tmp/kj-sweep-*.json
  for level in $SWEEP_LEVELS; do
    "$kj" results --db "$OUT/kj.sqlite" --run "sweep-l$level${SWEEP_SUFFIX:-}" --format json >"/tmp/kj-sweep-$level.json" 2>/dev/null ||
      rm -f "/tmp/kj-sweep-$level.json"
  done
  python3 -c 'import json, sys; print(json.dumps([r for f in sys.argv[1:] for r in json.load(open(f))]))' \
    /tmp/kj-sweep-*.json | python3 scripts/gpu/sweep_table.py >"$OUT/sweep.md"
  tail -1 "$OUT/sweep.md" | tee -a "$OUT/summary.txt"
}
