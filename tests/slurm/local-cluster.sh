#!/usr/bin/env bash
# A single-node Slurm cluster on this machine's loopback, for tests/slurm.rs (needs root and Debian's packages):
# installs slurmd, slurmctld, munge and the client commands, writes /etc/slurm/slurm.conf for this host (all its
# CPUs, one partition "debug"), and starts munged, slurmctld and slurmd. Idempotent: daemons already running are
# restarted with the same configuration. `tests/slurm/local-cluster.sh stop` stops them.
set -euo pipefail
if [ "$(id -u)" != 0 ]; then
  echo "local-cluster.sh: needs root (it installs packages and starts daemons)" >&2
  exit 1
fi
stop() {
  pkill -x slurmd 2>/dev/null || true
  pkill -x slurmctld 2>/dev/null || true
  pkill -x munged 2>/dev/null || true
  sleep 1
}
if [ "${1:-}" = stop ]; then
  stop
  exit 0
fi
if ! command -v slurmctld >/dev/null || ! command -v sbatch >/dev/null || ! command -v munged >/dev/null; then
  DEBIAN_FRONTEND=noninteractive apt-get install -y slurmd slurmctld munge slurm-client
fi
stop
host="$(hostname -s)"
mkdir -p /etc/slurm /var/spool/slurmctld /var/spool/slurmd /var/log/slurm /run/munge
cat > /etc/slurm/slurm.conf <<CONF
ClusterName=crossling-test
SlurmctldHost=${host}(127.0.0.1)
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
StateSaveLocation=/var/spool/slurmctld
SlurmdSpoolDir=/var/spool/slurmd
SlurmctldPidFile=/run/slurmctld.pid
SlurmdPidFile=/run/slurmd.pid
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
ReturnToService=2
SchedulerType=sched/backfill
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
MpiDefault=none
SlurmctldLogFile=/var/log/slurm/slurmctld.log
SlurmdLogFile=/var/log/slurm/slurmd.log
NodeName=${host} NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=1000 State=UNKNOWN
PartitionName=debug Nodes=${host} Default=YES MaxTime=INFINITE State=UP
CONF
if [ ! -s /etc/munge/munge.key ]; then
  mkdir -p /etc/munge
  dd if=/dev/urandom bs=1 count=1024 of=/etc/munge/munge.key 2>/dev/null
fi
chown -R munge:munge /etc/munge /run/munge /var/lib/munge /var/log/munge 2>/dev/null || true
chmod 0400 /etc/munge/munge.key
runuser -u munge -- munged
slurmctld -c
slurmd -c
for _ in $(seq 1 30); do
  if sinfo --noheader --format=%t 2>/dev/null | grep -q idle; then
    sinfo
    exit 0
  fi
  sleep 1
done
echo "local-cluster.sh: the node did not come up; see /var/log/slurm/" >&2
sinfo >&2 || true
exit 1
