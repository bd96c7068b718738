#!/bin/bash
# A one-node SLURM cluster on this machine, for tests: munged, slurmctld and slurmd, all
# configured in DIR (nothing in /etc is touched), listening on localhost only.
#   slurm-local.sh start DIR [PORT]   start it (ports PORT and PORT+1, default 16817); prints
#                                     the SLURM_CONF to export; waits until the node is idle
#   slurm-local.sh stop DIR           cancel its jobs and stop the daemons
# Needs root (slurmd runs jobs as their users) and Debian's slurm-wlm and munge.  Fails with
# the reason when the cluster cannot start; it never pretends.
set -u
. "$(dirname "$0")/slurm-lib.sh"
cmd=${1:-}; dir=${2:-}
[ -n "$cmd" ] && [ -n "$dir" ] || { echo "usage: $0 start|stop DIR [PORT]" >&2; exit 2; }
conf=$dir/slurm.conf

stop() {
    if [ -f "$conf" ]; then
        SLURM_CONF=$conf scancel --full --quiet -u "$(id -un)" 2>/dev/null || true
    fi
    stop_daemons "$dir" slurmd slurmctld munged
}

if [ "$cmd" = stop ]; then
    stop
    exit 0
fi
[ "$cmd" = start ] || { echo "usage: $0 start|stop DIR [PORT]" >&2; exit 2; }
port=${3:-16817}
[ "$(id -u)" = 0 ] || { echo "slurm-local: needs root (slurmd starts jobs as their users)" >&2; exit 1; }
for t in munged slurmctld slurmd sbatch squeue scancel; do
    command -v "$t" >/dev/null || { echo "slurm-local: $t not found (install slurm-wlm and munge: make setup)" >&2; exit 1; }
done
mkdir -p "$dir"/state "$dir"/spool "$dir"/log "$dir"/munge
dir=$(cd "$dir" && pwd)
conf=$dir/slurm.conf
stop
key=$dir/munge/munge.key
[ -f "$key" ] || { head -c 1024 /dev/urandom > "$key" && chmod 400 "$key"; }
munged --key-file="$key" --socket="$dir/munge/munge.sock" --pid-file="$dir/munged.pid" \
    --log-file="$dir/log/munged.log" --seed-file="$dir/munge/seed" --force ||
    { echo "slurm-local: munged did not start:" >&2; tail -3 "$dir/log/munged.log" >&2; exit 1; }
mem=$(awk '/MemTotal/ {print int($2 / 1024 * 0.9)}' /proc/meminfo)
cat > "$conf" <<CONF
ClusterName=forkscope-test
SlurmctldHost=localhost(127.0.0.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SchedulerParameters=sched_interval=1
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/jobcomp.txt
NodeName=fknode NodeAddr=127.0.0.1 CPUs=$(nproc) RealMemory=$mem State=UNKNOWN
PartitionName=fk Nodes=fknode Default=YES MaxTime=INFINITE State=UP
CONF
export SLURM_CONF=$conf
slurmctld -f "$conf" || { echo "slurm-local: slurmctld did not start:" >&2; tail -5 "$dir/log/slurmctld.log" >&2; stop; exit 1; }
slurmd -f "$conf" -N fknode || { echo "slurm-local: slurmd did not start:" >&2; tail -5 "$dir/log/slurmd.log" >&2; stop; exit 1; }
for _ in $(seq 100); do
    state=$(sinfo -h -n fknode -o %T 2>/dev/null)
    [ "$state" = idle ] && { echo "SLURM_CONF=$conf"; exit 0; }
    sleep 0.2
done
echo "slurm-local: the node did not become idle (state: ${state:-none}):" >&2
tail -5 "$dir/log/slurmctld.log" "$dir/log/slurmd.log" >&2
stop
exit 1
