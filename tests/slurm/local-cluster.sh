#!/usr/bin/env bash
# A private single-node Slurm cluster on this machine's loopback, for tests/slurm.rs (needs root and Debian's
# slurmctld, slurmd, munge and slurm-client; the script installs nothing).
#
#   tests/slurm/local-cluster.sh [DIR]
#
# Everything lives in DIR (default: a new folder from mktemp -d): slurm.conf, the munge key and socket, the state
# and spool folders, pid files and logs. Nothing under /etc, /run or /var is read or written, and daemons already on
# the host are left alone (ports: $CROSSLING_SLURMCTLD_PORT and $CROSSLING_SLURMD_PORT, default 6817 and 6818, must
# be free). It starts munged, slurmctld and slurmd in the foreground of their own (so their process ids are known
# exactly), waits until the node is idle, prints
#
#   SLURM_CONF=DIR/slurm.conf
#   ready
#
# on stdout, then runs until its standard input ends (or it gets SIGINT, SIGTERM or SIGHUP). On exit it stops the
# processes it started, by their ids and no others, and removes DIR unless CROSSLING_SLURM_KEEP=1 (a DIR given on
# the command line is kept). Point the client commands at the cluster with SLURM_CONF (sbatch, squeue and sinfo read
# it); by hand: `sudo tests/slurm/local-cluster.sh`, then `SLURM_CONF=… sinfo` in another shell, Ctrl-D to stop.
set -euo pipefail

say() { echo "local-cluster.sh: $*" >&2; }

if [ "$(id -u)" != 0 ]; then
  say "needs root (slurmd starts each job as its user)"
  exit 1
fi
for cmd in munged slurmctld slurmd sinfo sbatch; do
  if ! command -v "$cmd" >/dev/null; then
    say "$cmd is not installed: apt-get install slurmctld slurmd munge slurm-client"
    exit 1
  fi
done

keep="${CROSSLING_SLURM_KEEP:-0}"
if [ $# -ge 1 ]; then
  dir="$1"
  keep=1
  mkdir -p "$dir"
else
  dir="$(mktemp -d "${TMPDIR:-/tmp}/crossling-slurm.XXXXXX")"
fi
dir="$(cd "$dir" && pwd -P)"

pids=()
# Stops exactly the processes this script started (newest first: slurmd, slurmctld, munged), waiting up to 10 s
# for each before SIGKILL. (Called by the EXIT trap, which shellcheck does not follow.)
# shellcheck disable=SC2317
cleanup() {
  local status=$?
  trap - EXIT INT TERM HUP
  local i pid
  for ((i = ${#pids[@]} - 1; i >= 0; i--)); do
    pid="${pids[i]}"
    if kill -0 "$pid" 2>/dev/null; then
      kill -TERM "$pid" 2>/dev/null || true
      for _ in $(seq 1 100); do
        kill -0 "$pid" 2>/dev/null || break
        sleep 0.1
      done
      if kill -0 "$pid" 2>/dev/null; then
        say "process $pid did not stop on SIGTERM; sending SIGKILL"
        kill -KILL "$pid" 2>/dev/null || true
      fi
    fi
    wait "$pid" 2>/dev/null || true
  done
  if [ "$keep" = 1 ]; then
    say "stopped; kept $dir"
  else
    rm -rf -- "$dir"
  fi
  exit "$status"
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM
trap 'exit 129' HUP

mkdir -p "$dir/munge" "$dir/state" "$dir/spool" "$dir/log"
# munged wants its socket's folders searchable by all (root owns them and only root writes them).
chmod 0755 "$dir" "$dir/munge"
key="$dir/munge/munge.key"
dd if=/dev/urandom bs=1024 count=1 of="$key" 2>/dev/null
chmod 0400 "$key"
socket="$dir/munge/munge.socket"

host="$(hostname -s)"
user="$(id -un)"
ctld_port="${CROSSLING_SLURMCTLD_PORT:-6817}"
slurmd_port="${CROSSLING_SLURMD_PORT:-6818}"
conf="$dir/slurm.conf"
cat > "$conf" <<CONF
ClusterName=crossling-test
SlurmctldHost=${host}(127.0.0.1)
SlurmctldPort=${ctld_port}
SlurmdPort=${slurmd_port}
SlurmUser=${user}
SlurmdUser=${user}
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket=${socket}
StateSaveLocation=${dir}/state
SlurmdSpoolDir=${dir}/spool
SlurmctldPidFile=${dir}/slurmctld.pid
SlurmdPidFile=${dir}/slurmd.pid
SlurmctldLogFile=${dir}/log/slurmctld.log
SlurmdLogFile=${dir}/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/none
MpiDefault=none
NodeName=${host} NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=${host} Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF="$conf"

munged --foreground --force --key-file="$key" --socket="$socket" --pid-file="$dir/munge/munged.pid" \
  --log-file="$dir/log/munged.log" --seed-file="$dir/munge/munged.seed" >>"$dir/log/munged.out" 2>&1 &
pids+=("$!")
for _ in $(seq 1 50); do
  [ -S "$socket" ] && break
  sleep 0.1
done
if [ ! -S "$socket" ]; then
  say "munged did not come up; its log:"
  cat "$dir/log/munged.log" >&2 || true
  exit 1
fi
# In the foreground (-D) as this script's own background jobs: $! is the daemon itself. Their messages go to
# DIR/log/*.log (and what they print to DIR/log/*.out).
slurmctld -D -f "$conf" >>"$dir/log/slurmctld.out" 2>&1 &
pids+=("$!")
slurmd -D -f "$conf" >>"$dir/log/slurmd.out" 2>&1 &
pids+=("$!")

for _ in $(seq 1 30); do
  if sinfo --noheader --format=%t 2>/dev/null | grep -qx idle; then
    echo "SLURM_CONF=$conf"
    echo ready
    # Until stdin ends; a signal ends it too (its trap exits, and the EXIT trap cleans up).
    while read -r _; do :; done || true
    exit 0
  fi
  for pid in "${pids[@]}"; do
    if ! kill -0 "$pid" 2>/dev/null; then
      say "a daemon (process $pid) exited"
      break 2
    fi
  done
  sleep 1
done
say "the node did not come up; the logs:"
tail -n 30 "$dir"/log/* >&2 || true
sinfo >&2 || true
exit 1
