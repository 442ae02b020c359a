# Sourced by scripts/gpu-check.sh: `profile` (issue 41): where an evaluation's time goes inside kj's processes.
# Identity candidates, judged by kj runs while py-spy (.gpu-carry/whl/py_spy-*.whl) samples every judge and runner
# (scripts/gpu/profile_watch.py): KernelBench main L1 19 and 23 at full size with the default options, L1 1-4 with
# compare-aa's options (--no-strict --trials 1 --max-time-ms 500) and L2 1-3 with the default options
# (PROFILE_RUNS: NAME:LEVEL:IDS:OPTIONS, options comma-separated). profile.txt: each evaluation's phases, then the
# heaviest Python frames per role and run; profile.tar.gz: the raw stacks.
profile_phases() { # profile_phases RUN: one line per evaluation, its seconds and its phases
  python3 - "$OUT/kj.sqlite" "$1" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("select e.id, p.name, e.verdict, e.strict_verdict, e.duration_s from evaluations e join problems p on "
                  "p.id = e.problem_id join runs r on r.id = e.run_id where r.run_uid = ? order by e.id", (sys.argv[2],))
for eid, name, verdict, strict, seconds in rows.fetchall():
    phases = db.execute("select phase, seconds from evaluation_phases where evaluation_id = ? order by seconds desc",
                        (eid,)).fetchall()
    print(f"{name[:32]:32} {verdict}/{strict or '-'} {seconds or 0:6.2f} s: " +
          " ".join(f"{ph}={s:.2f}" for ph, s in phases if s >= 0.01))
PY
}
stage_profile() {
  local spy=/tmp/kj-pyspy/bin/py-spy spec name level ids opts went
  if [[ ! -x $spy ]]; then
    python3 -m pip install -q --no-index --no-deps --prefix /tmp/kj-pyspy "$CARRY"/whl/py_spy-*.whl >/dev/null 2>&1
  fi
  [[ -x $spy ]] || { log "profile: no py-spy (put its wheel in .gpu-carry/whl)"; return 0; }
  : >"$OUT/profile.txt"
  for spec in ${PROFILE_RUNS:-"full:1:19,23:" "aa:1:1-4:--no-strict,--trials,1,--max-time-ms,500" "l2:2:1-3:"}; do
    IFS=: read -r name level ids opts <<<"$spec"
    log "profile: $name (L$level $ids ${opts//,/ })"
    rm -rf "/tmp/kj-prof/$name" && mkdir -p "/tmp/kj-prof/$name"
    # shellcheck disable=SC2086
    python3 scripts/gpu/profile_watch.py "$spy" "/tmp/kj-prof/$name" -- "$kj" run --device cuda \
      --kernelbench "$CARRY/KernelBench" --level "$level" --ids "$ids" --candidates identity ${opts//,/ } \
      --db "$OUT/kj.sqlite" --run-id "prof-$name" --progress never >"/tmp/kj-prof/$name.txt" 2>"/tmp/kj-prof/$name.err"
    went=$(grep -h "where the time went" "/tmp/kj-prof/$name.err" "/tmp/kj-prof/$name.txt" | tail -1)
    echo "$went" >>"$OUT/summary.txt"
    { echo "=== $name: L$level $ids ${opts//,/ }"; echo "$went"; profile_phases "prof-$name"
      cat "/tmp/kj-prof/$name.txt"; } >>"$OUT/profile.txt"
  done
  tar -C /tmp -czf "$OUT/profile.tar.gz" kj-prof
}
