# Sourced by scripts/gpu-check.sh: `compare-aa`.
stage_compare_aa() {
  # kj compare's acceptance (docs/reports.md): identity candidates over levels CMP_LEVELS (default 1,2), ids CMP_IDS
  # (default 1-30: 60 KernelBench problems) run twice (cmp-a, cmp-b: an A/A pair, compared and --calibrate'd as
  # soon as both are whole), then a candidate set 5-10% slower on every third problem (cmp-slow,
  # scripts/make_slow_candidates.py), compared with cmp-a. Each run is one `kj run` (a run's options are its own:
  # a second level into the same run id is refused), resumed by id: when the call's time runs out, copy
  # $OUT/kj.sqlite to .gpu-carry/kj.sqlite and call it again with the same CMP_LEVELS, CMP_IDS and CMP_MAX_MS (other
  # options into a run id the carried DB holds are refused: start from a .gpu-carry without kj.sqlite).
  # Back in $OUT: compare-aa.md, compare-slow.md, calibrate.txt and compare.tar.gz (JSON, HTML, logs).
  local levels=${CMP_LEVELS:-1,2} ids=${CMP_IDS:-1-30}
  log "compare-aa: identity reruns and a slower set on levels $levels, ids $ids"
  W=/tmp/kj-cmp && mkdir -p $W
  cmp_run() { # cmp_run RUN-ID CANDIDATES: the selection into run RUN-ID, within the call's budget
    local left=$((${KJ_CALL_S:-570} - ($(date +%s) - t0) - 40))
    ((left < 30)) && { log "compare-aa: out of time before $1; copy kj.sqlite to .gpu-carry and call again"; return 1; }
    timeout -s INT "$left" "$kj" run --device cuda --kernelbench "$CARRY/KernelBench" --level "$levels" \
      --ids "$ids" --candidates "$2" --no-strict --trials 1 --max-time-ms "${CMP_MAX_MS:-500}" \
      --db "$OUT/kj.sqlite" --run-id "$1" >"$W/$1.out" 2>"$W/$1.err" && return 0
    log "compare-aa: $1 stopped (exit $?; 124: out of the call's time): $(grep -E "^kj: .*(error|differ|refus)" "$W/$1.err" | tail -n1)"
    return 1
  }
  cmp_run cmp-a identity && cmp_run cmp-b identity || return 0 # the DB still comes back
  # the A/A pair's comparison and calibration (the false-alarm rate) first: they need no third run
  "$kj" compare cmp-a cmp-b --db "$OUT/kj.sqlite" --markdown "$OUT/compare-aa.md" --json "$W/compare-aa.json" \
    --html "$W/compare-aa.html" >"$W/compare-aa.txt"
  echo "A/A (cmp-a vs cmp-b): exit $? (0: no regression); $(tail -2 "$W/compare-aa.txt" | head -1)" | tee -a "$OUT/summary.txt"
  "$kj" compare cmp-a cmp-b --db "$OUT/kj.sqlite" --calibrate --inject 0.05,0.10 --json "$W/calibrate.json" \
    >"$OUT/calibrate.txt"
  grep -E "^A/A|^injected|^calibration" "$OUT/calibrate.txt" | tee -a "$OUT/summary.txt"
  rm -rf /tmp/kj-slow /tmp/kj-slow.slowed.json /tmp/kj-problems.json
  "$kj" problems --kernelbench "$CARRY/KernelBench" --level "$levels" --ids "$ids" --no-shapes --format json \
    >/tmp/kj-problems.json
  "$kj" results --db "$OUT/kj.sqlite" --run cmp-a --format json >/tmp/kj-cmp-a.json
  python3 scripts/make_slow_candidates.py --problems /tmp/kj-problems.json --results /tmp/kj-cmp-a.json \
    --out /tmp/kj-slow | tee -a "$OUT/summary.txt"
  cp /tmp/kj-slow.slowed.json "$W/cmp-slowed.json"
  cmp_run cmp-slow /tmp/kj-slow || { tar -C /tmp -czf "$OUT/compare.tar.gz" kj-cmp; return 0; }
  "$kj" compare cmp-a cmp-slow --db "$OUT/kj.sqlite" --markdown "$OUT/compare-slow.md" --json "$W/compare-slow.json" \
    --html "$W/compare-slow.html" >"$W/compare-slow.txt"
  echo "slower set (cmp-a vs cmp-slow): exit $? (1: regression); $(tail -2 "$W/compare-slow.txt" | head -1)" | tee -a "$OUT/summary.txt"
  python3 - "$W/compare-slow.json" "$W/cmp-slowed.json" <<'PY' | tee -a "$OUT/summary.txt"
import json, sys
rows = json.load(open(sys.argv[1]))["rows"]
slowed = {(s["level"], s["problem_id"]): s["slowdown"] for s in json.load(open(sys.argv[2]))}
flagged = {(r["level"], r["problem_id"]) for r in rows if r["class"] == "regressed"}
for share in sorted(set(slowed.values())):
  keys = {k for k, v in slowed.items() if v == share}
  print(f"slowed by {share:.0%}: {len(keys & flagged)} of {len(keys)} flagged")
print(f"not slowed but flagged: {len(flagged - set(slowed))} of {len(rows) - len(slowed)}")
for r in rows:
  if (r["level"], r["problem_id"]) in slowed and r["class"] != "regressed":
      print(f"  missed L{r['level']} {r['problem_id']} {r['problem']}: {r['class']} {r['reason']}")
PY
  tar -C /tmp -czf "$OUT/compare.tar.gz" kj-cmp
}
