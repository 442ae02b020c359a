# Sourced by scripts/gpu-check.sh: the throughput check (issue 41). `speed`: identity candidates on KernelBench main
# L2 SPEED_IDS, judged by kj with warm judges (the default), by kj with a judge per evaluation (--fresh-judges), and by
# KernelBench's own eval_kernel_against_ref in a process per problem (scripts/kb_memory.py, one at a time), each with
# its default options (KernelBench's eval_from_generations: 5 correctness trials, 100 timed); seconds per candidate (the command's wall time over the candidates) and kj's phases in speed.txt.
per_candidate() { awk -v s="$1" -v n="$2" 'BEGIN { printf "%2d candidates in %6.1f s: %5.2f s per candidate", n, s, s / (n ? n : 1) }'; }
speed_kj() { # speed_kj MODE [kj run options...]: one kj run, its lines in speed.txt
  local mode=$1 t0 n
  shift
  t0=$(date +%s%N)
  "$kj" run --device cuda --kernelbench "$CARRY/KernelBench" --level 2 --ids "$SPEED_IDS" --candidates identity \
    --db "$OUT/kj.sqlite" --run-id "speed-$mode" "$@" >"/tmp/speed-$mode.txt" 2>"/tmp/speed-$mode.err"
  n=$("$kj" results --db "$OUT/kj.sqlite" --run "speed-$mode" --format csv | tail -n +2 | wc -l)
  echo "kj $mode: $(per_candidate "$(( ($(date +%s%N) - t0) / 1000000 ))e-3" "$n")" | tee -a "$OUT/speed.txt"
  grep -hE "evaluations:|where the time went" "/tmp/speed-$mode.txt" "/tmp/speed-$mode.err" | tail -2 >>"$OUT/speed.txt"
}
stage_speed() {
  log "speed: identity on KernelBench main L2 ${SPEED_IDS:=1-7}: kj warm, kj --fresh-judges, KernelBench's eval"
  : >"$OUT/speed.txt"
  speed_kj warm
  [[ ${SPEED_FRESH:-1} == 1 ]] && speed_kj fresh --fresh-judges
  kb_pip
  local ids t0
  ids=$(python3 -c "import sys; a, _, b = sys.argv[1].partition('-'); print(','.join(str(i) for i in range(int(a), int(b or a) + 1)))" "$SPEED_IDS")
  t0=$(date +%s%N)
  PYTHONPATH=/tmp/site python3 scripts/kb_memory.py --kb-src "$CARRY/kb-src/src" --problems "$CARRY/KernelBench" \
    --level 2 --ids "$ids" --jobs 1 --perf-trials 100 >/tmp/speed-kb.txt 2>/tmp/speed-kb.err
  echo "KernelBench eval: $(per_candidate "$(( ($(date +%s%N) - t0) / 1000000 ))e-3" "$(grep -c '^kb ' /tmp/speed-kb.txt)"), $(grep -c 'correct True' /tmp/speed-kb.txt) correct" |
    tee -a "$OUT/speed.txt"
  cat /tmp/speed-kb.txt >>"$OUT/speed.txt"
  cat "$OUT/speed.txt" >>"$OUT/summary.txt"
}
