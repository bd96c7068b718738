#!/bin/bash
# A SLURM cluster of several nodes on this machine, for tests.  Each node is a slurmd in its own
# network, UTS and mount namespaces: its own hostname (nodeI), its own address on a bridge this
# script makes (10.A.B.10+I/24; the controller is 10.A.B.1 on the bridge), its own view of
# /proc/cpuinfo if asked.  munged and slurmctld run here; everything is configured in DIR and
# nothing in /etc is touched.  No address outside the bridge's subnet is used.
#   slurm-cluster.sh start DIR N PORT [FAKE]   N nodes (ports PORT, PORT+1); node FAKE (if given)
#                                              sees a /proc/cpuinfo whose model name is
#                                              "forkscope fake CPU"; prints the SLURM_CONF to
#                                              export once every node is idle
#   slurm-cluster.sh kill DIR I                node I lost: every process in its namespaces
#                                              killed at once (slurmd, its job steps, their jobs)
#   slurm-cluster.sh stop DIR                  cancel the jobs, stop the daemons, remove the
#                                              namespaces and the bridge
# (slurmctld listens on this machine's addresses as any slurmctld does; munge authenticates
# whoever talks to it.)
# Needs root, ip and ss (iproute2), unshare and nsenter (util-linux), slurm-wlm and munge.  Fails with the reason when the
# cluster cannot be made; it never pretends.
set -u
. "$(dirname "$0")/slurm-lib.sh"
cmd=${1:-}; dir=${2:-}
usage() { echo "usage: $0 start DIR N PORT [FAKE] | kill DIR I | stop DIR" >&2; exit 2; }
[ -n "$cmd" ] && [ -n "$dir" ] || usage
conf=$dir/slurm.conf
tag() { cat "$dir/tag" 2>/dev/null; }

# The pids in node I's network namespace (slurmd, slurmstepd, the jobs).
node_pids() { ip netns pids "fk$(tag)n$1" 2>/dev/null; }

# Kills every process of node I; 1 (said) if some are still there after 2 s.
kill_node() {
    local i=$1 pids
    for _ in $(seq 10); do
        pids=$(node_pids "$i")
        [ -z "$pids" ] && return 0
        kill -9 $pids 2>/dev/null
        sleep 0.2
    done
    echo "slurm-cluster: node $i: processes $(node_pids "$i" | tr '\n' ' ')survive kill -9" >&2
    return 1
}

stop() {
    [ -f "$dir/tag" ] || return 0
    if [ -f "$conf" ]; then
        SLURM_CONF=$conf timeout 10 scancel --full --quiet 2>/dev/null || true
    fi
    local n
    n=$(cat "$dir/nodes" 2>/dev/null || echo 0)
    for i in $(seq "$n"); do
        kill_node "$i"
        ip netns del "fk$(tag)n$i" 2>/dev/null
    done
    stop_daemons "$dir" slurmctld munged
    ip link del "fk$(tag)br" 2>/dev/null
    rm -f "$dir/tag"
}

case $cmd in
stop) stop; exit 0 ;;
kill) [ -n "${3:-}" ] || usage; kill_node "$3"; exit ;;
start) ;;
*) usage ;;
esac
n=${3:-}; port=${4:-}; fake=${5:-0}
[ -n "$n" ] && [ -n "$port" ] || usage
fail() { echo "slurm-cluster: $*" >&2; stop; exit 1; }
[ "$(id -u)" = 0 ] || { echo "slurm-cluster: needs root (namespaces, and slurmd starts jobs as their users)" >&2; exit 1; }
for t in ip ss unshare nsenter munged slurmctld slurmd sbatch squeue scancel sinfo; do
    command -v "$t" >/dev/null || { echo "slurm-cluster: $t not found (install iproute2, util-linux, slurm-wlm and munge: make setup)" >&2; exit 1; }
done
mkdir -p "$dir"/state "$dir"/spool "$dir"/log "$dir"/munge
dir=$(cd "$dir" && pwd)
conf=$dir/slurm.conf
stop
# names and a subnet of our own: 10.A.B.0/24 with A.B from the port (two clusters at once
# take two ports), refused if the bridge exists already (another cluster on this port: left
# alone), or if an address or a route here is in the subnet; the tag that stop() cleans up by
# is written only once the bridge is ours
t=$(printf '%04x' "$port")
a=$((200 + port % 50)); b=$((port / 50 % 250))
net=10.$a.$b
br=fk${t}br
refuse() { echo "slurm-cluster: $*" >&2; exit 1; }
ip link show "$br" >/dev/null 2>&1 && refuse "$br exists: another cluster uses port $port; choose another PORT"
ip -o addr | grep -q " $net\." && refuse "the subnet $net.0/24 is in use here; choose another PORT"
[ -z "$(ip route show root "$net.0/24")" ] || refuse "a route here leads into $net.0/24; choose another PORT"
for p in "$port" $((port + 1)); do
    ss -Hltn "sport = :$p" 2>/dev/null | grep -q . && refuse "port $p is taken here; choose another PORT"
done
ip link add "$br" type bridge 2>/dev/null || refuse "cannot make a bridge (ip link add $br type bridge): no permission or no bridge module"
echo "$t" > "$dir/tag"; echo "$n" > "$dir/nodes"
ip addr add "$net.1/24" dev "$br" && ip link set "$br" up || fail "cannot bring up $br"
for i in $(seq "$n"); do
    ns=fk${t}n$i
    ip netns add "$ns" || fail "cannot make network namespace $ns"
    ip link add "fk${t}v$i" type veth peer name eth0 netns "$ns" || fail "cannot make a veth pair for $ns"
    ip link set "fk${t}v$i" master "$br" up
    ip -n "$ns" link set lo up
    ip -n "$ns" addr add "$net.$((10 + i))/24" dev eth0
    ip -n "$ns" link set eth0 up
done
key=$dir/munge/munge.key
[ -f "$key" ] || { head -c 1024 /dev/urandom > "$key" && chmod 400 "$key"; }
munged --key-file="$key" --socket="$dir/munge/munge.sock" --pid-file="$dir/munged.pid" \
    --log-file="$dir/log/munged.log" --seed-file="$dir/munge/seed" --force ||
    fail "munged did not start: $(tail -3 "$dir/log/munged.log")"
cpus=$(nproc)
mem=$(awk -v n="$n" '/MemTotal/ {print int($2 / 1024 * 0.9 / n)}' /proc/meminfo)
cat > "$conf" <<CONF
ClusterName=forkscope-nodes
SlurmctldHost=$(hostname -s)($net.1)
SlurmUser=root
SlurmdUser=root
SlurmctldPort=$port
SlurmdPort=$((port + 1))
AuthType=auth/munge
AuthInfo=socket=$dir/munge/munge.sock
CredType=cred/munge
StateSaveLocation=$dir/state
SlurmdSpoolDir=$dir/spool/%n
SlurmctldPidFile=$dir/slurmctld.pid
SlurmdPidFile=$dir/slurmd.%n.pid
SlurmctldLogFile=$dir/log/slurmctld.log
SlurmdLogFile=$dir/log/slurmd.%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
MpiDefault=none
SelectType=select/cons_tres
SelectTypeParameters=CR_Core
ReturnToService=2
SlurmdTimeout=6
MessageTimeout=3
KillWait=2
JobRequeue=0
SchedulerParameters=sched_interval=1
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
JobCompType=jobcomp/filetxt
JobCompLoc=$dir/jobcomp.txt
NodeName=node[1-$n] NodeAddr=$net.[11-$((10 + n))] CPUs=$cpus RealMemory=$mem State=UNKNOWN
PartitionName=fk Nodes=node[1-$n] Default=YES MaxTime=INFINITE State=UP OverSubscribe=NO
CONF
export SLURM_CONF=$conf
slurmctld -f "$conf" || fail "slurmctld did not start: $(tail -5 "$dir/log/slurmctld.log")"
for i in $(seq "$n"); do # each node reaches the controller over the bridge
    for _ in $(seq 50); do
        ip netns exec "fk${t}n$i" bash -c ": </dev/tcp/$net.1/$port" 2>/dev/null && continue 2
        sleep 0.1
    done
    fail "node $i cannot reach the controller at $net.1:$port over the bridge"
done
sed 's/^model name\t: .*/model name\t: forkscope fake CPU/' /proc/cpuinfo > "$dir/cpuinfo.fake"
for i in $(seq "$n"); do
    mkdir -p "$dir/spool/node$i"
    mnt=
    [ "$i" = "$fake" ] && mnt="mount --bind $dir/cpuinfo.fake /proc/cpuinfo &&"
    # (nsenter, not ip netns exec: that remounts /sys, hiding the cgroup mounts slurmd wants)
    nsenter --net="/run/netns/fk${t}n$i" unshare --uts --mount --propagation private \
        sh -c "hostname node$i && $mnt exec slurmd -f '$conf'" ||
        fail "slurmd of node$i did not start: $(tail -5 "$dir/log/slurmd.node$i.log" 2>/dev/null)"
done
for _ in $(seq 150); do
    states=$(sinfo -h -N -o '%N %T' 2>/dev/null | sort -u)
    idle=$(echo "$states" | grep -c ' idle$')
    [ "$idle" = "$n" ] && { echo "SLURM_CONF=$conf"; exit 0; }
    sleep 0.2
done
echo "slurm-cluster: not every node became idle:" >&2
echo "$states" >&2
tail -n 3 "$dir/log/slurmctld.log" "$dir"/log/slurmd.node*.log >&2
stop
exit 1
