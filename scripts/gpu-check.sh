#!/usr/bin/env bash
# One call on the GPU machine: configure, build, run the `gpu` tests and real `kj` runs; logs and tables go to $OUT.
# Stages (default: build tests suite kb-identity): gate (scripts/gpu/gate.sh), kb-honest, kb-memory, kb-audit
# (scripts/gpu/acceptance.sh), build, tests, corpus, baselines-gpu, suite, kb-identity, kb-compat,
# strict-cost, rep-<name> (any number of repeatability runs), kb-method, kb-own, timing-report, baselines,
# baselines-again, baselines-l4, diag-pin, compare-aa, scale-gpus, scale-shards, ray-gpu (scripts/gpu/ray_gpu.sh),
# agent-gpu, speed, profile, sweep, cuda-l1, identity-bias, triton, numerics (docs/gpu-machine.md says what each does). Headers the machine lacks (sqlite3.h, OpenSSL) come from .gpu-carry/root (Debian packages unpacked with
# dpkg -x) and the KernelBench problems from .gpu-carry/KernelBench.
# The DB is $OUT/kj.sqlite, seeded from .gpu-carry/kj.sqlite when that exists (runs of an earlier call).
set -uo pipefail
cd "$(dirname "$0")/.."
OUT=${OUT:-/tmp/kj-out}
BUILD=${KJ_GPU_BUILD:-/tmp/kjbuild}
CARRY=$(pwd)/.gpu-carry
stages=${*:-build tests suite kb-identity}
t0=$(date +%s) # the call's start: stages with a budget (baselines) end before KJ_CALL_S seconds have passed
mkdir -p "$OUT"
export KJ_CACHE_DIR=/tmp/kj-cache
kj="$BUILD/app/kj"
[[ -f $CARRY/kj.sqlite && ! -f $OUT/kj.sqlite ]] && cp "$CARRY/kj.sqlite" "$OUT/kj.sqlite"
# The timing acceptance set: >= 30 KernelBench problems over the three levels (LEVEL:IDS).
KB_SELECT=${KB_SELECT:-"1:1-12 2:1-12 3:1-10"}
kb_pip() { python3 -m pip install -q --no-index --no-deps --target /tmp/site "$CARRY"/whl/*.whl >/dev/null 2>&1; }
# kb_timing_run RUN-ID [kj run options...]: identity candidates on KB_SELECT, timing only (1 compatible trial).
kb_timing_run() {
  local run=$1 item
  shift
  for item in $KB_SELECT; do
    "$kj" run --device cuda --kernelbench "$CARRY/KernelBench" --level "${item%%:*}" --ids "${item#*:}" \
      --candidates identity --no-strict --trials 1 --db "$OUT/kj.sqlite" --run-id "$run" "$@" 2>>"$OUT/$run.err" >/dev/null
  done
  "$kj" results --db "$OUT/kj.sqlite" --run "$run" >"$OUT/$run.txt"
  tail -1 "$OUT/$run.err" >>"$OUT/summary.txt"
}
log() { printf '== %s %s\n' "$(date +%T)" "$*" | tee -a "$OUT/summary.txt"; }
# Stages kept in files of their own (stage_<name> functions): the gate and the acceptance runs.
for f in scripts/gpu/*.sh; do source "$f"; done

configure_and_build() {
  local args=(-DKJ_PYTHON="$(command -v python3)" -DCMAKE_BUILD_TYPE=RelWithDebInfo)
  [[ -f /usr/include/sqlite3.h ]] || args+=(-DSQLite3_INCLUDE_DIR="$CARRY/root/usr/include"
                                           -DSQLite3_LIBRARY=/usr/lib/x86_64-linux-gnu/libsqlite3.so.0)
  [[ -f /usr/include/openssl/evp.h ]] || args+=(-DOPENSSL_INCLUDE_DIR="$CARRY/root/usr/include"
                                                -DOPENSSL_CRYPTO_LIBRARY=/usr/lib/x86_64-linux-gnu/libcrypto.so.3)
  # libseccomp's headers (and a .pc naming the carried copy) and bubblewrap, when the machine lacks them
  if ! pkg-config --exists libseccomp 2>/dev/null && [[ -f $CARRY/root/usr/include/seccomp.h ]]; then
    mkdir -p /tmp/kj-pc
    printf 'prefix=%s\nincludedir=${prefix}/include\nlibdir=%s\nName: libseccomp\nDescription: carried\nVersion: 2.5.4\nLibs: -L${libdir} -lseccomp\nCflags: -I${includedir}\n' \
      "$CARRY/root/usr" "$CARRY/root/usr/lib/x86_64-linux-gnu" >/tmp/kj-pc/libseccomp.pc
    export PKG_CONFIG_PATH=/tmp/kj-pc${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}
  fi
  if ! command -v bwrap >/dev/null && [[ -x $CARRY/root/usr/bin/bwrap ]]; then
    cp "$CARRY/root/usr/bin/bwrap" /usr/local/bin/bwrap 2>/dev/null || true
  fi
  cmake -S . -B "$BUILD" -G Ninja "${args[@]}" >"$OUT/configure.log" 2>&1 || { tail -30 "$OUT/configure.log"; return 1; }
  # KJ_BUILD_TARGETS (the gate: kj and the gpu tests) builds only what a call runs; CI compiles everything
  # shellcheck disable=SC2086
  cmake --build "$BUILD" -j 16 ${KJ_BUILD_TARGETS:+--target $KJ_BUILD_TARGETS} >"$OUT/build.log" 2>&1 ||
    { grep -E "error|Error" "$OUT/build.log" | head -30; return 1; }
}

for stage in $stages; do
  case $stage in
  build)
    log "build"
    { nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv; python3 -c 'import sys, torch; print(sys.version, torch.__version__, torch.version.cuda)'; } >"$OUT/env.txt" 2>&1
    if [[ -x $kj ]]; then cmake --build "$BUILD" -j 16 >"$OUT/build.log" 2>&1 || { log "rebuild failed"; exit 1; }
    else configure_and_build || { log "build failed"; exit 1; }; fi
    grep -E "kerneljudge:|Catch2" "$OUT/configure.log" 2>/dev/null | tee -a "$OUT/summary.txt"
    mkdir -p /tmp/kj-logs && mv -f "$OUT/configure.log" "$OUT/build.log" /tmp/kj-logs/ 2>/dev/null # 8 files come back
    log "built in $(($(date +%s) - t0)) s"
    ;;
  tests)
    log "ctest: gpu label, then the quick CPU tests (Catch2 of this machine)"
    ctest --test-dir "$BUILD" -L gpu --output-on-failure --timeout 900 2>&1 | tail -40 | tee "$OUT/ctest-gpu.log"
    ctest --test-dir "$BUILD" -LE "gpu|slow" -j 16 2>&1 | tail -5 | tee -a "$OUT/summary.txt"
    ;;
  collision)
    # 15 LLM-style CUDA candidates, 12 sharing load_inline(name="fused_ops"), 3 "matmul_cuda", built 16 at a time
    log "name collisions: tests/fixtures/llm_style/name_collision/cuda, built in parallel, then again (no compile)"
    mkdir -p /tmp/kj-logs
    for id in collision-a collision-b; do
      t=$(date +%s.%N)
      "$kj" run --device cuda --builtin --candidates "$PWD/tests/fixtures/llm_style/name_collision/cuda" \
        --db "$OUT/kj.sqlite" --run-id "$id" --build-jobs 16 --max-time-ms 300 >/dev/null 2>"/tmp/kj-logs/$id.err"
      echo "$id: $(python3 -c "import time; print(round(time.time() - $t, 1))") s" | tee -a "$OUT/summary.txt"
      grep -E "compiling|built before|judged" "/tmp/kj-logs/$id.err" | tee -a "$OUT/summary.txt"
    done
    "$kj" results --db "$OUT/kj.sqlite" --run collision-a --format json >/tmp/kj-logs/collision.json
    python3 - /tmp/kj-logs/collision.json tests/fixtures/llm_style/manifest.json <<'PY' | tee -a "$OUT/summary.txt"
import json, os, sys
rows = json.load(open(sys.argv[1]))
expect = {os.path.basename(c["file"]): c for c in json.load(open(sys.argv[2]))["candidates"] if "name_collision/cuda" in c["file"]}
ok = 0
for r in rows:
    e = expect[os.path.basename(r["candidate"])]
    good = r["verdict"] == e["compatible"] and (e["strict"] is None or r["strict_verdict"] == e["strict"])
    ok += good
    print(f'{"ok  " if good else "MISS"} {os.path.basename(r["candidate"])}: {r["verdict"]}/{r["strict_verdict"]} expected {e["compatible"]}/{e["strict"]} speedup {r["speedup"]}')
print(f"name collisions: {ok} of {len(rows)} as the manifest expects")
PY
    ;;
  baselines-gpu)
    log "ctest: the gpu baseline tests"
    ctest --test-dir "$BUILD" -L gpu -R "baseline" --output-on-failure --timeout 900 2>&1 | tail -30 | tee "$OUT/ctest-baselines.log"
    tail -3 "$OUT/ctest-baselines.log" >>"$OUT/summary.txt"
    ;;
  corpus)
    log "ctest: the CUDA strict corpus and the plugin tests"
    ctest --test-dir "$BUILD" -L gpu -E "built-in suite" --output-on-failure --timeout 900 2>&1 | tail -60 | tee "$OUT/ctest-corpus.log"
    tail -3 "$OUT/ctest-corpus.log" >>"$OUT/summary.txt"
    ;;
  rep-*)
    log "timing repeatability run $stage: identity on $KB_SELECT, method robust"
    kb_timing_run "$stage" --max-time-ms "${KB_MAX_MS:-1000}"
    ;;
  kb-method)
    log "kj's kernelbench timing method on $KB_SELECT"
    kb_timing_run kb-method --timing-method kernelbench --no-floor --no-output-check
    ;;
  kb-own)
    log "KernelBench's own timing code (measure_ref_program_time, cuda_event) on $KB_SELECT"
    kb_pip
    PYTHONPATH=/tmp/site python3 scripts/kb_timing_check.py --kb-src "$CARRY/kb-src/src" --problems "$CARRY/KernelBench" \
      --select $KB_SELECT >"$OUT/kb-own.jsonl" 2>"$OUT/kb-own.err"
    wc -l <"$OUT/kb-own.jsonl" >>"$OUT/summary.txt"
    ;;
  timing-report)
    log "timing report"
    python3 scripts/timing_report.py "$OUT/kj.sqlite" $([[ -s $OUT/kb-own.jsonl ]] && echo --kb-own "$OUT/kb-own.jsonl") \
      ${REP_RUNS:+--runs $REP_RUNS} \
      >"$OUT/timing-report.md" 2>&1
    grep "^- " "$OUT/timing-report.md" | tee -a "$OUT/summary.txt"
    ;;
  baselines | baselines-again)
    # kj baselines over KernelBench L1-L3 (BL_LEVELS) with BL_MODES; capped at BL_BUDGET seconds so a call ends
    # in time: what was measured is in the DB and a later call carries on from the cache.
    log "kj baselines ($stage): levels ${BL_LEVELS:-1,2,3}, modes ${BL_MODES:-eager,compile-default}"
    start=$(date +%s)
    budget=${BL_BUDGET:-$((${KJ_CALL_S:-570} - ($(date +%s) - t0) - 20))}
    ((budget < 60)) && budget=60
    timeout -s INT "$budget" "$kj" baselines --device cuda --kernelbench "$CARRY/KernelBench" \
      --level "${BL_LEVELS:-1,2,3}" ${BL_IDS:+--ids "$BL_IDS"} --modes "${BL_MODES:-eager,compile-default}" \
      --max-time-ms "${BL_MAX_MS:-400}" --jobs "${BL_JOBS:-12}" --db "$OUT/kj.sqlite" \
      >"$OUT/$stage.txt" 2>"$OUT/$stage.err"
    echo "exit $? after $(($(date +%s) - start)) s" | tee -a "$OUT/summary.txt"
    grep -A8 "^mode " "$OUT/$stage.txt" | tee -a "$OUT/summary.txt"
    ;;
  diag-pin)
    # Spread between processes: eager baselines of DIAG_SELECT measured DIAG_N times under each of DIAG_VARIANTS,
    # alternating, one DB per variant: free (as is), pin (taskset to one GPU-local CPU), fixed (no ASLR and
    # PYTHONHASHSEED=0). Host steal time per invocation; table in diag-pin.md, DBs in diag-dbs.tar.gz.
    bus=$(nvidia-smi --query-gpu=pci.bus_id --format=csv,noheader | head -1 | tr 'A-F' 'a-f' | sed 's/^0000\(....:\)/\1/')
    cpus=$(cat "/sys/bus/pci/devices/$bus/local_cpulist" 2>/dev/null || echo "0-$(($(nproc) - 1))")
    cpu=${DIAG_CPU:-$(echo "$cpus" | tr ',' '\n' | tail -1 | sed 's/.*-//')}
    log "diag-pin: GPU $bus local CPUs $cpus (pin: CPU $cpu); ${DIAG_SELECT:=1:1,12,19,23,54 2:6,12 3:7,9,10,19}"
    rm -rf /tmp/diag && mkdir -p /tmp/diag
    stat_cpu() { awk '/^cpu /{print $9, $2+$3+$4+$5+$6+$7+$8+$9}' /proc/stat; }
    for ((k = 0; k < ${DIAG_N:-4}; ++k)); do
      for variant in ${DIAG_VARIANTS:-free pin}; do
        case $variant in
        pin) wrap=(taskset -c "$cpu") ;;
        fixed) wrap=(env PYTHONHASHSEED=0 setarch "$(uname -m)" -R) ;;
        *) wrap=() ;;
        esac
        read -r s0 t0s < <(stat_cpu); start=$(date +%s.%N)
        for item in $DIAG_SELECT; do
          "${wrap[@]}" "$kj" baselines --device cuda --kernelbench "$CARRY/KernelBench" --level "${item%%:*}" \
            --ids "${item#*:}" --modes eager --refresh-baselines --max-time-ms "${KB_MAX_MS:-1000}" \
            --db "/tmp/diag/$variant.sqlite" >>/tmp/diag/log 2>&1
        done
        read -r s1 t1s < <(stat_cpu)
        awk -v v="$variant" -v k="$k" -v w="$(date +%s.%N)" -v st="$start" -v s="$((s1 - s0))" -v t="$((t1s - t0s))" \
          -v l="$(cut -d' ' -f1-3 /proc/loadavg)" 'BEGIN { printf "%s %d: %.0f s, steal %.2f%%, load %s\n", v, k, w - st, 100 * s / t, l }' |
          tee -a "$OUT/summary.txt"
      done
    done
    dbs=(); for variant in ${DIAG_VARIANTS:-free pin}; do dbs+=("$variant=/tmp/diag/$variant.sqlite"); done
    python3 scripts/baseline_spread.py "${dbs[@]}" >"$OUT/diag-pin.md"
    grep "^- " "$OUT/diag-pin.md" | tee -a "$OUT/summary.txt"
    tar -C /tmp -czf "$OUT/diag-dbs.tar.gz" diag
    ;;
  baselines-autotune)
    # default vs max-autotune vs max-autotune-no-cudagraphs on the problems of REFERENCE.md §5 (BL_AUTOTUNE)
    log "kj baselines: compile modes on ${BL_AUTOTUNE:-1:1,19,23,40 2:1,12 3:1,43}"
    for item in ${BL_AUTOTUNE:-1:1,19,23,40 2:1,12 3:1,43}; do
      timeout -s INT "${BL_ITEM_S:-200}" "$kj" baselines --device cuda --kernelbench "$CARRY/KernelBench" \
        --level "${item%%:*}" --ids "${item#*:}" --modes compile-default,max-autotune,max-autotune-no-cudagraphs --max-time-ms "${BL_MAX_MS:-400}" \
        --db "$OUT/kj.sqlite" >>"$OUT/baselines-autotune.txt" 2>>"$OUT/baselines-autotune.err"
    done
    grep -E "^L|^mode|^max|^compile" "$OUT/baselines-autotune.txt" | tee -a "$OUT/summary.txt"
    ;;
  baselines-l4)
    log "kj baselines on KernelBench level 4 (needs transformers and the model weights offline)"
    timeout -s INT 120 "$kj" baselines --device cuda --kernelbench "$CARRY/KernelBench" --level 4 --modes eager \
      --db "$OUT/kj.sqlite" >"$OUT/baselines-l4.txt" 2>&1
    grep -A3 "^mode " "$OUT/baselines-l4.txt" | tee -a "$OUT/summary.txt"
    ;;
  scale-gpus)
    # One GPU against two on the same identity candidates (docs/scaling.md): wall time of each run, the speed-up
    # (target >= 1.8x), and whether both judged every candidate alike. Needs two GPUs (nvidia-h200-x2).
    if (($(nvidia-smi -L | wc -l) < 2)); then log "scale-gpus: needs two GPUs"; continue; fi
    sel=${SCALE_SELECT:-"1:1-40"}
    log "scale-gpus: identity on $sel, --gpus 0 then --gpus 0,1 (max-time ${SCALE_MAX_MS:-500} ms)"
    rm -rf /tmp/kj-scale && mkdir -p /tmp/kj-scale
    scale_run() { # scale_run RUN-ID GPUS: every item of $sel, printing the wall seconds
      local item start
      start=$(date +%s)
      for item in $sel; do
        "$kj" run --device cuda --gpus "$2" --kernelbench "$CARRY/KernelBench" --level "${item%%:*}" \
          --ids "${item#*:}" --candidates identity --baselines none --max-time-ms "${SCALE_MAX_MS:-500}" \
          --db /tmp/kj-scale/kj.sqlite --run-id "$1" >/dev/null 2>>"/tmp/kj-scale/$1.err"
      done
      echo $(($(date +%s) - start))
    }
    # Imports, page cache and the problems' first load: paid here, by neither timed run.
    "$kj" run --device cuda --gpus 0,1 --kernelbench "$CARRY/KernelBench" --level 1 --ids 1-4 --candidates identity \
      --baselines none --no-timing --db /tmp/kj-scale/kj.sqlite --run-id scale-warm >/dev/null 2>&1
    one=$(scale_run scale-one 0) two=$(scale_run scale-two 0,1)
    python3 - /tmp/kj-scale/kj.sqlite "$one" "$two" <<'PY' | tee -a "$OUT/summary.txt"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
one, two = float(sys.argv[2]), float(sys.argv[3])
def rows(run):
    return dict(db.execute("select p.level || '/' || p.number, e.verdict from evaluations e join runs r on "
                           "r.id = e.run_id join problems p on p.id = e.problem_id where r.run_uid = ?", (run,)))
a, b = rows("scale-one"), rows("scale-two")
print(f"scale-gpus: {len(a)} candidates, one GPU {one:.0f} s, two GPUs {two:.0f} s: speed-up {one / two:.2f}x; "
      f"verdicts {'identical' if a == b else 'DIFFER'}")
PY
    ;;
  scale-shards)
    # The built-in suite (examples, no timing) unsharded and as two shards (one per GPU when there are two),
    # merged: the merged run must hold the unsharded run's verdicts, each candidate once.
    log "scale-shards: the built-in suite whole and as shards 1/2 + 2/2, merged"
    rm -rf /tmp/kj-shards && mkdir -p /tmp/kj-shards
    W=/tmp/kj-shards second=0
    (($(nvidia-smi -L | wc -l) > 1)) && second=1
    "$kj" run --device cuda --gpus 0 --no-timing --db $W/whole.sqlite --run-id whole >/dev/null 2>$W/whole.err
    "$kj" run --device cuda --gpus 0 --no-timing --db $W/s1.sqlite --run-id sharded --shard 1/2 >/dev/null 2>$W/s1.err &
    "$kj" run --device cuda --gpus $second --no-timing --db $W/s2.sqlite --run-id sharded --shard 2/2 >/dev/null 2>$W/s2.err
    wait
    "$kj" merge $W/s1.sqlite $W/s2.sqlite -o $W/all.sqlite | tee -a "$OUT/summary.txt"
    python3 - $W/whole.sqlite $W/all.sqlite <<'PY' | tee -a "$OUT/summary.txt"
import sqlite3, sys
def rows(path, run):
    return sorted(sqlite3.connect(path).execute(
        "select p.level, p.number, c.source_hash, e.verdict, e.strict_verdict from evaluations e join runs r on "
        "r.id = e.run_id join problems p on p.id = e.problem_id join candidates c on c.id = e.candidate_id "
        "where r.run_uid = ?", (run,)))
whole, merged = rows(sys.argv[1], "whole"), rows(sys.argv[2], "sharded")
print(f"scale-shards: whole {len(whole)} evaluations, merged shards {len(merged)}: "
      f"{'identical verdicts' if whole == merged else 'DIFFER'}")
PY
    ;;
  suite)
    log "kj run --device cuda on the built-in suite (examples)"
    "$kj" run --device cuda --db "$OUT/kj.sqlite" --run-id suite-cuda 2>"$OUT/suite.err" | tee "$OUT/suite.txt"
    tail -3 "$OUT/suite.txt" >>"$OUT/summary.txt"
    ;;
  handshake)
    # The judge's handshake per timed call on this GPU (docs/security.md): identity candidates on KernelBench
    # main L1 (HS_IDS), robust timing; handshake.md has the calibrated overhead, the allowance and the most a
    # forged sample can gain, per evaluation.
    log "handshake: identity on KernelBench L1 ${HS_IDS:=1,19,23}, robust timing"
    "$kj" run --device cuda --kernelbench "$CARRY/KernelBench" --level 1 --ids "$HS_IDS" --candidates identity \
      --no-strict --trials 1 --db "$OUT/kj.sqlite" --run-id handshake 2>"$OUT/handshake.err" >/dev/null
    python3 scripts/gpu/handshake_table.py "$OUT/kj.sqlite" handshake | tee "$OUT/handshake.md" >>"$OUT/summary.txt"
    tail -2 "$OUT/handshake.err" >>"$OUT/summary.txt"
    ;;
  kb-identity)
    log "kj run --candidates identity on KernelBench level 1 (${KB_IDS:-1-12})"
    "$kj" run --device cuda --kernelbench "$CARRY/KernelBench" --level 1 --ids "${KB_IDS:-1-12}" --candidates identity \
      --db "$OUT/kj.sqlite" --run-id kb-identity --max-time-ms 1000 2>"$OUT/kb.err" | tee "$OUT/kb.txt"
    tail -3 "$OUT/kb.txt" >>"$OUT/summary.txt"
    ;;
  kb-compat)
    # kj (strict verdicts on, no timing) and KernelBench's own evaluator run side by side on the CUDA examples;
    # verdicts are compared at the end. Timing is off because the two share the GPU.
    log "compatible verdicts: kj vs KernelBench's own eval_kernel_against_ref on the CUDA examples"
    # KernelBench compiles each candidate in turn (~45 s each): KB_SHARDS evaluators share the candidates.
    kb_pip
    rm -f /tmp/kj-compat.json
    ( "$kj" run --device cuda --no-timing --db "$OUT/kj.sqlite" --run-id compat-cuda 2>"$OUT/compat.err" >/dev/null
      "$kj" results --db "$OUT/kj.sqlite" --run compat-cuda --format json >/tmp/kj-compat.tmp && mv /tmp/kj-compat.tmp /tmp/kj-compat.json
      "$kj" results --db "$OUT/kj.sqlite" --run compat-cuda >"$OUT/suite-strict.txt" ) &
    shards=${KB_SHARDS:-6}
    for ((k = 0; k < shards; ++k)); do
      PYTHONPATH=/tmp/site python3 scripts/kb_compat_check.py --kb-src "$CARRY/kb-src/src" --problems kernelbench/suite \
        --candidates examples/candidates/cuda --kj-json /tmp/kj-compat.json --shard "$k/$shards" \
        2>"/tmp/kb-compat-$k.err" >"/tmp/kb-compat-$k.txt" &
    done
    wait
    cat /tmp/kb-compat-*.txt >"$OUT/kb-compat.txt"
    tail -n 3 /tmp/kb-compat-*.err >"$OUT/kb-compat.err"
    grep -h "verdicts agree" "$OUT/kb-compat.txt" >>"$OUT/summary.txt"
    ;;
  strict-cost)
    log "strict vs compatible verification time, identity candidates on KernelBench level 1 (${KB_IDS:-1-12})"
    "$kj" run --device cuda --kernelbench "$CARRY/KernelBench" --level 1 --ids "${KB_IDS:-1-12}" --candidates identity \
      --no-timing --db "$OUT/kj.sqlite" --run-id strict-cost 2>"$OUT/strict.err" | tee "$OUT/strict.txt"
    python3 - "$OUT/kj.sqlite" <<'PY' | tee -a "$OUT/summary.txt"
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
rows = db.execute("select p.name, e.verdict, e.strict_verdict, e.strict_failed, e.compatible_s, e.strict_s from evaluations e "
                  "join problems p on p.id = e.problem_id join runs r on r.id = e.run_id where r.run_uid = 'strict-cost'").fetchall()
for r in rows:
    print(f"{r[0]:40} {r[1]:8} strict={r[2]:4} {r[3]:20} compatible {r[4]:6.1f} s  strict {r[5]:6.1f} s  ratio {r[5] / r[4]:.2f}")
PY
    ;;
  agent-gpu)
    # The built-in agent against the scripted model (tests/fixtures/agent/cuda: CUDA kernels in CUDA-Agent's layout,
    # a compile error, a strict NaN failure, profiles with the CUPTI kernel table and, when ncu is on PATH, Nsight
    # Compute). The fake provider needs cpp-httplib's header, which this machine lacks: it comes from
    # .gpu-carry/root/usr/include/httplib.h (Debian's libcpp-httplib-dev, unpacked with dpkg -x).
    log "agent-gpu: kj agent --adapter openai against the scripted model on L1 1-3, --device cuda (ncu: $(command -v ncu || echo none))"
    mkdir -p /tmp/kj-logs
    [[ -f /usr/include/httplib.h || ! -f $CARRY/root/usr/include/httplib.h ]] ||
      cmake -S . -B "$BUILD" -DKJ_HTTPLIB_INCLUDE_DIR="$CARRY/root/usr/include" >/tmp/kj-logs/agent-configure.log 2>&1
    if ! cmake --build "$BUILD" -j 16 --target kj kj_fake_llm >/tmp/kj-logs/agent-build.log 2>&1; then
      log "agent-gpu: building kj_fake_llm failed (is httplib.h in .gpu-carry/root/usr/include?)"
      grep -E "error" /tmp/kj-logs/agent-build.log | head -5 | tee -a "$OUT/summary.txt"
      continue
    fi
    # the carried libcpp-httplib.so and what it needs (brotli) where the machine lacks them
    LD_LIBRARY_PATH=$CARRY/root/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH} \
      "$BUILD/tests/kj_fake_llm" --scripts tests/fixtures/agent >/tmp/kj-fake-llm.out 2>&1 &
    fake=$!
    for _ in $(seq 50); do grep -q "^port " /tmp/kj-fake-llm.out && break; sleep 0.1; done
    port=$(awk '/^port /{print $2}' /tmp/kj-fake-llm.out)
    rm -rf /tmp/kj-agent-ws
    "$kj" agent --adapter openai --base-url "http://127.0.0.1:$port/v1" --model test-model --level 1 --ids 1-3 \
      --device cuda --db "$OUT/kj.sqlite" --run-id agent-gpu --prices tests/fixtures/agent/prices.json \
      --workspaces /tmp/kj-agent-ws --max-time-ms 1000 >"$OUT/agent-gpu.txt" 2>"$OUT/agent-gpu.err"
    rc=$?
    kill "$fake" 2>/dev/null
    { echo "== kj agent exit $rc"; "$kj" show trajectories --db "$OUT/kj.sqlite" --run agent-gpu
      for id in $("$kj" show trajectories --db "$OUT/kj.sqlite" --run agent-gpu | awk 'NR > 1 && $1 ~ /^[0-9]+$/ {print $1}'); do
        "$kj" show trajectory "$id" --db "$OUT/kj.sqlite"
      done; } >>"$OUT/agent-gpu.txt" 2>&1
    log "agent-gpu: exit $rc, $(grep -c "SCRIPT MISMATCH" "$OUT/agent-gpu.txt") script mismatches, $(grep -c "^Nsight Compute\|    Nsight Compute" "$OUT/agent-gpu.txt") Nsight Compute tables"
    grep -E "^ +[0-9]+  L1" "$OUT/agent-gpu.txt" | tee -a "$OUT/summary.txt"
    ;;
  *)
    if declare -F "stage_${stage//-/_}" >/dev/null; then "stage_${stage//-/_}"; else log "unknown stage $stage"; fi
    ;;
  esac
done
for stage in $stages; do # results of the runs this call made (at most 8 files come back from $OUT)
  [[ $stage == suite ]] && "$kj" results --db "$OUT/kj.sqlite" --run suite-cuda --format csv >"$OUT/results-suite.csv"
  [[ $stage == kb-identity ]] && "$kj" results --db "$OUT/kj.sqlite" --run kb-identity --format csv >"$OUT/results-kb.csv"
done
# The DB comes back as one file (at most 8 come back): its write-ahead log folded in, kj's lock file gone, and
# gzipped when it is over 12 MiB (a file over 16 MiB does not come back: gunzip kj.sqlite.gz into .gpu-carry).
if [[ -f $OUT/kj.sqlite ]]; then
  python3 -c 'import sqlite3, sys; c = sqlite3.connect(sys.argv[1]); c.execute("pragma journal_mode=delete"); c.close()' \
    "$OUT/kj.sqlite" 2>/dev/null && rm -f "$OUT/kj.sqlite.lock"
  (($(stat -c %s "$OUT/kj.sqlite") > 12 << 20)) && gzip -f "$OUT/kj.sqlite" && log "kj.sqlite came back as kj.sqlite.gz"
fi
log "done"
