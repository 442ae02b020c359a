#!/usr/bin/env bash
# A throwaway single-node Slurm cluster on this machine, to try kj-array.sbatch (and what kj's test of it runs):
# munged, slurmctld and slurmd from Debian's packages (munge, slurmctld, slurmd, slurm-client), every file of
# theirs in DIR, their ports free ones, the node offering NGPUS fake `gpu` GRES (no device behind them: use
# `--device cpu` in KJ_ARGS) so that the script's `--gres=gpu:1` is scheduled as on a GPU cluster.
#   sudo examples/slurm/local-cluster.sh start /tmp/kj-slurm [NGPUS]   # then: export SLURM_CONF=/tmp/kj-slurm/slurm.conf
#   sudo examples/slurm/local-cluster.sh stop /tmp/kj-slurm
# Needs root: slurmd starts each job as the user who submitted it. Exit codes: 0 started or stopped, 1 a daemon
# did not start (its log is printed), 2 bad use or a missing package.
set -euo pipefail

usage() { echo "usage: $0 start|stop DIR [NGPUS]" >&2; exit 2; }
[[ $# -ge 2 ]] || usage
action=$1 dir=$2 gpus=${3:-2}

stop() {
  local name
  [[ -f $dir/slurm.conf ]] && SLURM_CONF=$dir/slurm.conf scancel --quiet --full -u root 2>/dev/null || true
  for name in slurmd slurmctld munged; do
    [[ -f $dir/$name.pid ]] && kill "$(cat "$dir/$name.pid")" 2>/dev/null || true
  done
  for name in slurmd slurmctld munged; do # gone before the folder is reused
    for _ in $(seq 50); do
      [[ -f $dir/$name.pid ]] && kill -0 "$(cat "$dir/$name.pid")" 2>/dev/null || break
      sleep 0.1
    done
    rm -f "$dir/$name.pid"
  done
}

free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

started() { # NAME: its pid file names a live process within 10 s, else its log and exit 1
  for _ in $(seq 100); do
    [[ -f $dir/$1.pid ]] && kill -0 "$(cat "$dir/$1.pid")" 2>/dev/null && return 0
    sleep 0.1
  done
  echo "local-cluster: $1 did not start; the end of $dir/$1.log:" >&2
  tail -n 20 "$dir/$1.log" >&2 2>/dev/null
  stop
  exit 1
}

start() {
  local missing=() tool host
  for tool in munged slurmctld slurmd sbatch sinfo scontrol; do command -v "$tool" >/dev/null || missing+=("$tool"); done
  if ((${#missing[@]})); then
    echo "local-cluster: ${missing[*]} not found; install Debian's munge slurmctld slurmd slurm-client" >&2
    exit 2
  fi
  [[ $(id -u) -eq 0 ]] || { echo "local-cluster: run it as root (slurmd starts jobs as their user)" >&2; exit 2; }
  [[ $gpus =~ ^[1-9][0-9]*$ ]] || { echo "local-cluster: NGPUS must be a positive number, not '$gpus'" >&2; exit 2; }
  stop
  mkdir -p "$dir/state" "$dir/spool"
  chmod 700 "$dir"
  [[ -f $dir/munge.key ]] || { head -c 1024 /dev/urandom >"$dir/munge.key"; chmod 600 "$dir/munge.key"; }
  munged --force --key-file="$dir/munge.key" --socket="$dir/munge.sock" --pid-file="$dir/munged.pid" \
    --log-file="$dir/munged.log" --seed-file="$dir/munged.seed"
  started munged
  host=$(hostname -s)
  for i in $(seq 0 $((gpus - 1))); do : >"$dir/gpu$i"; done
  echo "NodeName=$host Name=gpu File=$dir/gpu[0-$((gpus - 1))]" >"$dir/gres.conf"
  cat >"$dir/slurm.conf" <<EOF
ClusterName=kjlocal
SlurmctldHost=$host
SlurmctldPort=$(free_port)
SlurmdPort=$(free_port)
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=$dir/munge.sock,cred_expire=10
SlurmUser=root
SlurmdUser=root
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/slurmctld.log
SlurmdLogFile=$dir/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
SlurmdParameters=config_overrides
ReturnToService=2
MpiDefault=none
KillWait=30
MinJobAge=3600
GresTypes=gpu
NodeName=$host CPUs=64 RealMemory=262144 Gres=gpu:$gpus State=UNKNOWN
PartitionName=local Nodes=ALL Default=YES MaxTime=INFINITE State=UP
EOF
  export SLURM_CONF=$dir/slurm.conf
  slurmctld -f "$SLURM_CONF"
  started slurmctld
  slurmd -f "$SLURM_CONF"
  started slurmd
  for _ in $(seq 100); do # the node registers
    [[ $(sinfo -h -o %t 2>/dev/null) == idle ]] && { echo "export SLURM_CONF=$SLURM_CONF"; return 0; }
    sleep 0.2
  done
  echo "local-cluster: the node did not come up; sinfo says: $(sinfo -h -o '%t %E' 2>&1)" >&2
  tail -n 20 "$dir/slurmctld.log" >&2
  stop
  exit 1
}

case $action in
start) start ;;
stop) stop ;;
*) usage ;;
esac
