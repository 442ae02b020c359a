# Sourced by scripts/gpu-check.sh: `ray-gpu`, issue 44's "one GPU through Ray against a local run (target <= 2%
# overhead)" (docs/scaling.md, "Ray"). The machine has no Ray: .gpu-carry/ray holds Ray 2.60's cp312 wheel unpacked
# and slimmed (ray-slim.tar.xz) and its dependencies' wheels. They go into a venv of their own (RAY_VENV), not onto
# PYTHONPATH: kj hands PYTHONPATH on to the judge's Python, where the carried typing_extensions, filelock, ... would
# shadow the machine's in the Ray runs only (RAY_VENV=none: PYTHONPATH all the same, when venv is missing).
# A one-node cluster (`ray start --head --block` in a session of its own, so that the stage stops exactly its own
# processes), then identity candidates on KernelBench L$RAY_LEVEL $RAY_IDS judged by a local `kj run` and by
# scale/kj_ray.py in turn: one warm-up each way, not counted (imports, page cache, the cluster's first worker), then
# local, ray, local, ray. Every run into a fresh database of its own with --baselines none: a kj-ray task starts
# from a copy of the driver's database, so both start from the same (empty) one and neither reads cached baselines.
# ray-gpu.txt: each run's wall seconds, the means, Ray's overhead and whether the timed runs' verdicts agree;
# ray-gpu.tar.gz: the runs' databases and logs. On the CPU (a test of the stage): RAY_DEVICE=cpu RAY_KB=builtin
# RAY_IDS=2-3 RAY_KJ_OPTS=--quick RAY_PYTHON=<a Python 3.12> RAY_PORT=<a free port> (docs/gpu-machine.md).
# shellcheck disable=SC2154 # kj, t0: scripts/gpu-check.sh's
stage_ray_gpu() {
  local dev=${RAY_DEVICE:-cuda} py=${RAY_PYTHON:-python3} venv=${RAY_VENV:-/tmp/kj-ray-venv} port=${RAY_PORT:-6379}
  local W=/tmp/kj-ray-gpu rpy site pg="" i run s rc left ray_env=() src=(--kernelbench "${RAY_KB:-$CARRY/KernelBench}")
  [[ ${RAY_KB:-} == builtin ]] && src=(--builtin)
  # shellcheck disable=SC2206 # RAY_KJ_OPTS: more kj run options, split on spaces
  local opts=(--device "$dev" "${src[@]}" --level "${RAY_LEVEL:-1}" --candidates identity --baselines none ${RAY_KJ_OPTS:-})
  log "ray-gpu: identity on L${RAY_LEVEL:-1} ${RAY_IDS:-1-12} (${src[*]}), $dev: local kj run against kj-ray on one judge"
  rm -rf "$W" && mkdir -p "$W"
  # Ray and its dependencies: into the venv's site-packages (pip, else the wheels unzipped), then imported once
  if [[ $venv != none ]] && rm -rf "$venv" && timeout 60 "$py" -m venv --without-pip "$venv" >"$W/setup.log" 2>&1; then
    rpy=$venv/bin/python3
    site=$("$rpy" -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')
  else
    rpy=$py site=/tmp/kj-ray-site ray_env=(env PYTHONPATH=/tmp/kj-ray-site) && rm -rf "$site"
  fi
  mkdir -p "$site" && timeout 300 tar -C "$site" -xJf "$CARRY/ray/ray-slim.tar.xz" >>"$W/setup.log" 2>&1
  timeout 300 "$py" -m pip install -q --no-index --no-deps --target "$site" "$CARRY"/ray/*.whl >>"$W/setup.log" 2>&1 ||
    for s in "$CARRY"/ray/*.whl; do timeout 60 "$py" -m zipfile -e "$s" "$site"; done >>"$W/setup.log" 2>&1
  if ! "${ray_env[@]}" timeout 60 "$rpy" -c 'import ray, sys; print("Ray", ray.__version__, "on Python", sys.version.split()[0])' \
    >"$W/ray-version.txt" 2>>"$W/setup.log"; then
    log "ray-gpu: Ray cannot be set up from $CARRY/ray with $py ($("$py" --version 2>&1); the wheels are cp312):"
    tail -3 "$W/setup.log" | tee -a "$OUT/summary.txt"
    return 1
  fi
  # The cluster: its `ray start` (and all it starts) in a session and process group of its own, whose id is the
  # leader's pid (timeout's); no draining on SIGTERM (30 s by default)
  ray_down() {
    [[ -n $pg ]] || return 0
    kill -TERM -- "-$pg" 2>/dev/null # ray start stops what it started (its processes share its process group)
    for ((i = 0; i < 30; ++i)); do kill -0 -- "-$pg" 2>/dev/null || break; sleep 1; done
    kill -KILL -- "-$pg" 2>/dev/null
    command -v pkill >/dev/null && pkill -KILL -s "$pg" # its workers: each a process group of its own, same session
    # the GPU machine is a throwaway one: anything else of Ray's goes too (never on a CPU machine others share)
    [[ $dev == cuda ]] && "${ray_env[@]}" timeout 60 "$rpy" -m ray.scripts.scripts stop >>"$W/ray-start.log" 2>&1
    pg=""
  }
  # shellcheck disable=SC2016 # $$: the new session's shell
  RAY_GRACEFUL_SHUTDOWN_DRAIN_TIMEOUT_S=0 "${ray_env[@]}" setsid bash -c 'echo $$ >"$0"; exec timeout "$@"' "$W/ray.sid" \
    "${RAY_CLUSTER_S:-1800}" "$rpy" -m ray.scripts.scripts start --head --block --port "$port" --node-ip-address 127.0.0.1 \
    --num-gpus "$([[ $dev == cpu ]] && echo 0 || echo 1)" --num-cpus "${RAY_CPUS:-$([[ $dev == cpu ]] && echo 1 || echo 4)}" \
    --object-store-memory $((1 << 30)) --include-dashboard=false --disable-usage-stats --temp-dir "$W/rt" \
    >"$W/ray-start.log" 2>&1 &
  for ((i = 0; i < 120; ++i)); do
    [[ -z $pg && -s $W/ray.sid ]] && pg=$(cat "$W/ray.sid")
    grep -qs "Ray runtime started" "$W/ray-start.log" && break
    ((i > 2)) && [[ -n $pg ]] && ! kill -0 "$pg" 2>/dev/null && break
    sleep 1
  done
  if ! grep -q "Ray runtime started" "$W/ray-start.log"; then
    log "ray-gpu: the Ray cluster did not start (port $port):"
    grep -E "Error|error|failed" "$W/ray-start.log" | tail -3 | cut -c1-300 | tee -a "$OUT/summary.txt"
    ray_down
    return 1
  fi
  log "ray-gpu: $(cat "$W/ray-version.txt"), cluster up at 127.0.0.1:$port in $i s"
  # The runs: warm-ups on the slice's first problem, then the timed ones; each within the call's time
  : >"$W/times"
  for run in warm-local warm-ray local-1 ray-1 local-2 ray-2; do
    left=$((${KJ_CALL_S:-570} - ($(date +%s) - t0) - 60))
    ((left > ${RAY_RUN_S:-400})) && left=${RAY_RUN_S:-400}
    ((left < 30)) && { log "ray-gpu: out of the call's time before $run"; break; }
    local args=("${opts[@]}" --ids "${RAY_IDS:-1-12}")
    [[ $run == warm-* ]] && args=("${opts[@]}" --ids "$(echo "${RAY_IDS:-1-12}" | grep -oE '^[0-9]+')")
    s=$(date +%s.%N)
    if [[ $run == *local* ]]; then
      timeout -k 30 -s INT "$left" "$kj" run "${args[@]}" --progress never --db "$W/$run.sqlite" --run-id "ray-$run" \
        >"$W/$run.out" 2>"$W/$run.err"
    else
      "${ray_env[@]}" timeout -k 30 -s INT "$left" "$rpy" scale/kj_ray.py --kj "$kj" --address "127.0.0.1:$port" -- \
        "${args[@]}" --db "$W/$run.sqlite" --run-id "ray-$run" >"$W/$run.out" 2>"$W/$run.err"
    fi
    rc=$?
    echo "$run $s $(date +%s.%N) $rc" >>"$W/times"
    ((rc == 0)) || log "ray-gpu: $run exited $rc: $(grep -v '^\s*$' "$W/$run.err" | tail -1 | cut -c1-200)"
  done
  ray_down
  { echo "ray-gpu: identity candidates on L${RAY_LEVEL:-1} ${RAY_IDS:-1-12} (${src[*]}), kj run ${opts[*]} --ids ${RAY_IDS:-1-12}"
    echo "$(cat "$W/ray-version.txt"); one-node cluster, kj-ray with one judge; $([[ $dev == cuda ]] &&
      nvidia-smi --query-gpu=name --format=csv,noheader | head -1 || echo "CPU: $(nproc) cores")"
    python3 - "$W" <<'PY'
import collections, sqlite3, statistics, sys
W = sys.argv[1]
runs = [line.split() for line in open(f"{W}/times")]
def verdicts(run):
    try:
        with sqlite3.connect(f"file:{W}/{run}.sqlite?mode=ro", uri=True) as c:
            return dict(((l, n), (v, s)) for l, n, v, s in c.execute(
                "select p.level, p.number, e.verdict, e.strict_verdict from evaluations e join runs r on r.id = e.run_id"
                " join problems p on p.id = e.problem_id where r.run_uid = ?", ("ray-" + run,)))
    except sqlite3.Error:
        return {}
secs, got = {}, {}
for run, start, end, rc in runs:
    secs[run], got[run] = float(end) - float(start), verdicts(run)
    print(f"{run:11} {secs[run]:7.1f} s  exit {rc}  {len(got[run])} evaluations{' (not counted)' if 'warm' in run else ''}")
timed = [r for r, _, _, rc in runs if "warm" not in r]
ok = len(timed) == 4 and all(rc == "0" for r, _, _, rc in runs if r in timed)
if ok:
    local = statistics.mean(secs[r] for r in timed if "local" in r)
    ray = statistics.mean(secs[r] for r in timed if "ray" in r)
    over = 100 * (ray / local - 1)
    line = f"local {local:.1f} s, Ray {ray:.1f} s (mean of 2 each): {over:+.1f}% ({'within' if over <= 2 else 'over'} the 2% target)"
else:
    line = "the timed runs did not all finish: no overhead"
first = got.get("local-1", {})
same = ok and first and all(got[r] == first for r in timed)
tally = ", ".join(f"{v}/{s} {n}" for (v, s), n in sorted(collections.Counter(first.values()).items(), key=str))
line += f"; verdicts {'identical' if same else 'DIFFER or missing'} in the {len(timed)} timed runs ({len(first)} candidates: {tally})"
for key in sorted(set().union(*(got[r] for r in timed))) if not same else []:
    print(f"  L{key[0]} {key[1]}: " + ", ".join(f"{r} {got[r].get(key)}" for r in timed))
print("ray-gpu: " + line)
PY
  } >"$OUT/ray-gpu.txt" 2>&1
  tail -1 "$OUT/ray-gpu.txt" >>"$OUT/summary.txt"
  cat "$OUT/ray-gpu.txt"
  tar -C "$W" -czf "$OUT/ray-gpu.tar.gz" --exclude rt . 2>/dev/null
}
