#!/usr/bin/env bash
# One-machine Slurm 22.05 cluster for HeterPS tests and demos.
#
#   scripts/slurm/cluster.sh [start|stop|status|env|fail nK]
#
# start   install Debian packages if missing, start munged, slurmctld and one
#         slurmd per fake node (n1..nN on 127.0.0.1), wait until all nodes are
#         up. Idempotent: daemons that already run are only checked.
#         Exit 0 ok, 77 when Slurm cannot run on this machine at all (reason
#         printed), 1 on any other failure.
# stop    stop what start started (pid files), wait for exit. Safe when idle.
# status  exit 0 when the controller answers and every node is up.
# env     print `export SLURM_CONF=...` for `eval "$(cluster.sh env)"`.
# fail nK simulate a crash of node nK (slurmd, its steps and their tasks
#         are SIGKILLed); the node turns DOWN, `start` brings it back.
#
# Settings (environment):
#   HETERPS_SLURM_DIR        state directory   (default /tmp/heterps-slurm)
#   HETERPS_SLURM_NODES      node count        (default 4)
#   HETERPS_SLURM_CPUS       CPUs per node     (default 2; may exceed real cores)
#   HETERPS_SLURM_GPU_NODES  node indices with fake GPUs, e.g. "3 4"
#                            (default: upper half of the nodes; empty = none)
#   HETERPS_SLURM_GPUS       GPUs per GPU node (default 2)
#   HETERPS_SLURM_GPU_TYPE   GPU type name     (default h200)
#   HETERPS_SLURM_PORT       slurmctld port; node k uses PORT+k (default 17000)
#   HETERPS_SLURM_MIN_JOB_AGE seconds a finished job stays visible (default 60)
#   HETERPS_SLURM_TIMEOUT    seconds to wait for nodes to come up (default 60)
set -euo pipefail

DIR=${HETERPS_SLURM_DIR:-/tmp/heterps-slurm}
NODES=${HETERPS_SLURM_NODES:-4}
CPUS=${HETERPS_SLURM_CPUS:-2}
GPUS=${HETERPS_SLURM_GPUS:-2}
GPU_TYPE=${HETERPS_SLURM_GPU_TYPE:-h200}
PORT=${HETERPS_SLURM_PORT:-17000}
MIN_JOB_AGE=${HETERPS_SLURM_MIN_JOB_AGE:-60}
TIMEOUT=${HETERPS_SLURM_TIMEOUT:-60}
# Unset -> default (upper half); set but empty -> no GPU nodes.
if [[ -z ${HETERPS_SLURM_GPU_NODES+x} ]]; then
  GPU_NODES=$(seq $((NODES / 2 + 1)) "$NODES" | tr '\n' ' ')
else
  GPU_NODES=${HETERPS_SLURM_GPU_NODES//,/ }
fi

CONF=$DIR/slurm.conf
PKGS=(slurmctld slurmd slurm-client munge)
MUNGE_SOCKET=/run/munge/munge.socket.2

log() { echo "cluster.sh: $*" >&2; }
die() { log "error: $*"; exit 1; }
skip() { log "skip: $*"; exit 77; }

for v in NODES CPUS GPUS PORT MIN_JOB_AGE TIMEOUT; do
  [[ ${!v} =~ ^[0-9]+$ && ${!v} -gt 0 ]] || die "HETERPS_SLURM_$v must be a positive integer, got '${!v}'"
done

# Daemons get a clean environment (a caller inside a Slurm job must not leak
# SLURM_* variables into slurmctld/slurmd) and not our lock fd 9 (they would
# hold the lock forever).
daemon_env() {
  env -i PATH=/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 SLURM_CONF="$CONF" "$@" 9>&-
}

# Client commands always use our config, whatever the caller's SLURM_CONF.
client() { SLURM_CONF=$CONF "$@"; }

# pid_alive PIDFILE COMM: true when the pid in PIDFILE runs and is COMM
# (guards against stale pid files whose pid was reused).
pid_alive() {
  local pid
  [[ -s $1 ]] || return 1
  pid=$(<"$1")
  [[ $pid =~ ^[0-9]+$ ]] || return 1
  running "$pid" "$2"
}

tail_log() {
  if [[ -f $1 ]]; then
    log "last lines of $1:"
    tail -n 15 "$1" >&2
  else
    log "(no log file $1)"
  fi
}

# ---------------------------------------------------------------- install
ensure_packages() {
  local missing=() p
  for p in "${PKGS[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q '^install ok installed' || missing+=("$p")
  done
  if ((${#missing[@]})); then
    command -v apt-get >/dev/null || skip "Slurm packages missing (${missing[*]}) and no apt-get"
    log "installing ${missing[*]}"
    # No recommends: keeps slurm-wlm-emulator (a front-end build) out.
    if ! DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >"/tmp/heterps-slurm-apt.log" 2>&1; then
      DEBIAN_FRONTEND=noninteractive apt-get update -q >>"/tmp/heterps-slurm-apt.log" 2>&1 || true
      DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends "${missing[@]}" >>"/tmp/heterps-slurm-apt.log" 2>&1 ||
        skip "cannot install ${missing[*]} (see /tmp/heterps-slurm-apt.log)"
    fi
  fi
  # The emulator package diverts slurmd/slurmctld to a front-end build in
  # which all nodes share one slurmd: not a real cluster.
  if dpkg-query -W -f='${Status}' slurm-wlm-emulator 2>/dev/null | grep -q '^install ok installed'; then
    skip "slurm-wlm-emulator is installed (replaces slurmd/slurmctld); remove it: apt-get purge slurm-wlm-emulator"
  fi
  local b
  for b in munged slurmctld slurmd sinfo scontrol; do
    command -v "$b" >/dev/null || PATH=/usr/sbin:$PATH command -v "$b" >/dev/null || skip "$b not found after install"
  done
}

# ---------------------------------------------------------------- config
write_config() {
  local out=$1 k host gpu_line="" gres_lines=""
  host=$(hostname -s)
  {
    cat <<EOF
# Generated by scripts/slurm/cluster.sh; rewritten on every start.
ClusterName=heterps
# slurmctld only accepts a SlurmctldHost that names this machine.
SlurmctldHost=$host(127.0.0.1)
SlurmctldPort=$PORT
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
# Requeued jobs wait cred_expire seconds before they may start again
# (default 120 s); keep it short so requeue tests run quickly.
AuthInfo=cred_expire=10
StateSaveLocation=$DIR/state
SlurmdSpoolDir=$DIR/spool/%n
SlurmctldPidFile=$DIR/run/slurmctld.pid
SlurmdPidFile=$DIR/run/slurmd-%n.pid
SlurmctldLogFile=$DIR/log/slurmctld.log
SlurmdLogFile=$DIR/log/slurmd-%n.log
SlurmctldDebug=info
SlurmdDebug=info
# No cgroups, no systemd: plain process tracking, no task binding.
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
# Trust the node lines below instead of the real hardware, so N fake
# nodes with any CPU count run on a 2-core box.
SlurmdParameters=config_overrides
SelectType=select/cons_tres
SelectTypeParameters=CR_CPU
SchedulerType=sched/backfill
# Default loops run every 30-60 s; a requeued job whose BeginTime passed
# would wait that long. Few jobs here, so poll every 2 s.
SchedulerParameters=sched_interval=2,bf_interval=2
MpiDefault=none
GresTypes=gpu
# No accounting database; finished jobs are logged to a text file instead.
AccountingStorageType=accounting_storage/none
JobAcctGatherType=jobacct_gather/none
JobCompType=jobcomp/filetxt
JobCompLoc=$DIR/log/jobcomp.txt
# Fast failure detection and recovery for fault-tolerance tests.
ReturnToService=2
SlurmdTimeout=10
SlurmctldTimeout=10
JobRequeue=1
KillWait=5
MinJobAge=$MIN_JOB_AGE
InactiveLimit=0
Waittime=0
MessageTimeout=10
EOF
    for ((k = 1; k <= NODES; k++)); do
      gpu_line=""
      if [[ " $GPU_NODES " == *" $k "* ]]; then
        gpu_line=" Gres=gpu:$GPU_TYPE:$GPUS"
        gres_lines+="NodeName=n$k Name=gpu Type=$GPU_TYPE File=$DIR/dev/gpu[0-$((GPUS - 1))]"$'\n'
      fi
      echo "NodeName=n$k NodeHostname=localhost NodeAddr=127.0.0.1 Port=$((PORT + k)) CPUs=$CPUS RealMemory=1024 State=UNKNOWN$gpu_line"
    done
    echo "PartitionName=debug Nodes=ALL Default=YES MaxTime=INFINITE State=UP OverSubscribe=YES"
  } >"$out"
  # gres.conf is read from the directory of slurm.conf. slurmd 22.05 drops
  # GPUs without File= ("Removing file-less GPU", even with Count= or
  # Flags=CountOnly), so each fake GPU is a symlink to /dev/null: a valid
  # character device, harmless without cgroup device constraints. Tasks
  # get CUDA_VISIBLE_DEVICES=<index> like on a real GPU node.
  mkdir -p "$DIR/dev"
  for ((k = 0; k < GPUS; k++)); do ln -sfn /dev/null "$DIR/dev/gpu$k"; done
  {
    echo "# Generated by scripts/slurm/cluster.sh. Fake GPUs: symlinks to /dev/null."
    printf '%s' "$gres_lines"
  } >"${out%/*}/gres.conf.new"
}

# ---------------------------------------------------------------- daemons
munge_works() {
  [[ -S $MUNGE_SOCKET ]] && munge -n 2>/dev/null | unmunge >/dev/null 2>&1
}

start_munged() {
  if munge_works; then return 0; fi
  mkdir -p /run/munge /var/lib/munge /var/log/munge "$DIR/munge"
  chown munge:munge /run/munge /var/lib/munge /var/log/munge "$DIR/munge"
  chmod 0755 /run/munge
  chmod 0700 "$DIR/munge"
  if [[ ! -s /etc/munge/munge.key ]]; then
    # The package normally creates the key; recreate it if it was removed.
    mungekey --create --keyfile=/etc/munge/munge.key >/dev/null 2>&1 ||
      dd if=/dev/urandom of=/etc/munge/munge.key bs=1 count=1024 status=none
    chown munge:munge /etc/munge/munge.key
    chmod 0400 /etc/munge/munge.key
  fi
  rm -f "$MUNGE_SOCKET" "$MUNGE_SOCKET.lock"
  # munged runs as user munge; it daemonizes and writes our pid file.
  daemon_env setsid runuser -u munge -- munged \
    --pid-file="$DIR/munge/munged.pid" --log-file="$DIR/munge/munged.log" \
    </dev/null >>"$DIR/log/munged.out" 2>&1 || {
    tail_log "$DIR/munge/munged.log"; tail_log "$DIR/log/munged.out"
    die "munged failed to start"
  }
  local i
  for ((i = 0; i < 50; i++)); do
    munge_works && { touch "$DIR/run/munged.ours"; return 0; }
    sleep 0.1
  done
  tail_log "$DIR/munge/munged.log"
  die "munged started but munge/unmunge does not work"
}

# wait_pid PIDFILE COMM NAME LOG: wait until the daemon wrote a live pid file.
wait_pid() {
  local i
  for ((i = 0; i < 100; i++)); do
    pid_alive "$1" "$2" && return 0
    sleep 0.1
  done
  tail_log "$4"
  die "$3 did not start (no live pid in $1)"
}

# start_slurmctld CLEAN: CLEAN=1 adds -c (drop saved jobs and node states;
# a fresh cluster has no stale jobs); -i ignores unreadable state files.
start_slurmctld() {
  pid_alive "$DIR/run/slurmctld.pid" slurmctld && return 0
  local opts=(-i)
  (($1)) && opts+=(-c)
  daemon_env setsid slurmctld "${opts[@]}" -f "$CONF" </dev/null >>"$DIR/log/slurmctld.out" 2>&1 || {
    tail_log "$DIR/log/slurmctld.log"; tail_log "$DIR/log/slurmctld.out"
    die "slurmctld failed to start"
  }
  wait_pid "$DIR/run/slurmctld.pid" slurmctld slurmctld "$DIR/log/slurmctld.log"
  local i
  for ((i = 0; i < 100; i++)); do
    client scontrol ping 2>/dev/null | grep -q 'is UP' && return 0
    pid_alive "$DIR/run/slurmctld.pid" slurmctld || break
    sleep 0.2
  done
  tail_log "$DIR/log/slurmctld.log"
  die "slurmctld does not answer (scontrol ping)"
}

start_slurmd() {
  local n=$1
  pid_alive "$DIR/run/slurmd-$n.pid" slurmd && return 0
  mkdir -p "$DIR/spool/$n"
  daemon_env setsid slurmd -N "$n" -f "$CONF" </dev/null >>"$DIR/log/slurmd-$n.out" 2>&1 || {
    tail_log "$DIR/log/slurmd-$n.log"; tail_log "$DIR/log/slurmd-$n.out"
    die "slurmd -N $n failed to start"
  }
  wait_pid "$DIR/run/slurmd-$n.pid" slurmd "slurmd -N $n" "$DIR/log/slurmd-$n.log"
}

# node_stepds NODE: prints "PID JOBID" for each live slurmstepd of NODE.
# All nodes share one host, so a stepd is matched to its node by the
# slurmd-NODE.log it keeps open; the job id comes from "slurmstepd: [J.S]".
node_stepds() {
  local p f cmd
  for p in $(pgrep -x slurmstepd || true); do
    for f in /proc/"$p"/fd/*; do
      [[ $(readlink "$f" 2>/dev/null) == "$DIR/log/slurmd-$1.log" ]] || continue
      cmd=$(tr '\0' ' ' <"/proc/$p/cmdline" 2>/dev/null) || break
      [[ $cmd =~ \[([0-9]+)\. ]] && echo "$p ${BASH_REMATCH[1]}"
      break
    done
  done
}

# wait_stale_steps NODE...: wait (max 20 s) until the live slurmstepds on
# these nodes belong only to jobs the controller runs there, then 1 s more
# so that new credentials postdate the revocation.
wait_stale_steps() {
  local i n running stale pid id
  for ((i = 0; i < 40; i++)); do
    stale=0
    for n in "$@"; do
      running=" $(client squeue -h -t R,S -w "$n" -o %i 2>/dev/null | tr '\n' ' ') "
      while read -r pid id; do
        [[ -n $pid && $running != *" $id "* ]] && stale=1
      done < <(node_stepds "$n")
    done
    ((stale)) || break
    sleep 0.5
  done
  ((stale)) && log "stale job steps remain on $* after 20 s; resuming anyway"
  sleep 1
}

# Prints nodes that are not usable: down/drain/fail/unknown, or not
# responding ('*' suffix). Empty output means all nodes are up.
bad_nodes() {
  local out
  out=$(client sinfo -h -N -o '%N %T' 2>/dev/null) || { echo "controller-unreachable"; return 0; }
  [[ -n $out ]] || { echo "no-nodes"; return 0; }
  # State suffixes: '*' not responding (bad); others such as '-' (planned
  # by backfill) are harmless, so compare the bare state name.
  awk '{s = $2; gsub(/[^a-z]/, "", s)}
       $2 ~ /\*/ || s !~ /^(idle|mixed|allocated|completing|planned)$/ {print $1 "=" $2}' <<<"$out"
}

all_daemons_alive() {
  local k
  munge_works || return 1
  pid_alive "$DIR/run/slurmctld.pid" slurmctld || return 1
  for ((k = 1; k <= NODES; k++)); do
    pid_alive "$DIR/run/slurmd-n$k.pid" slurmd || return 1
  done
}

cmd_start() {
  ensure_packages
  mkdir -p "$DIR"/{state,spool,run,log}
  write_config "$CONF.new"
  # Fast path: same config, everything alive and up -> nothing to do.
  if [[ -f $CONF ]] && cmp -s "$CONF.new" "$CONF" && cmp -s "$DIR/gres.conf.new" "$DIR/gres.conf" &&
    all_daemons_alive && [[ -z $(bad_nodes) ]]; then
    rm -f "$CONF.new" "$DIR/gres.conf.new"
    log "already running ($NODES nodes, SLURM_CONF=$CONF)"
    return 0
  fi
  # A changed config (e.g. another node count) needs a full restart.
  if [[ -f $CONF ]] && ! { cmp -s "$CONF.new" "$CONF" && cmp -s "$DIR/gres.conf.new" "$DIR/gres.conf"; }; then
    log "configuration changed; restarting"
    cmd_stop
  fi
  mv "$CONF.new" "$CONF"
  mv "$DIR/gres.conf.new" "$DIR/gres.conf"

  start_munged
  local k restarted=() clean=1
  for ((k = 1; k <= NODES; k++)); do
    if pid_alive "$DIR/run/slurmd-n$k.pid" slurmd; then clean=0; else restarted+=("n$k"); fi
  done
  # A controller restarted under running slurmds recovers its saved state,
  # so running jobs survive (like a real controller restart).
  pid_alive "$DIR/run/slurmctld.pid" slurmctld && clean=0
  start_slurmctld "$clean"
  # A node whose slurmd died may still run orphaned steps of a job that was
  # requeued meanwhile. When the new slurmd registers, the controller kills
  # them and revokes that job's credentials; if the requeued job is started
  # on this node in the same second, its launch fails with "Job credential
  # revoked". So keep such nodes drained until their stale steps are gone.
  local drained=()
  if ((!clean)); then
    for k in "${restarted[@]}"; do
      client scontrol update NodeName="$k" State=DRAIN Reason=cluster.sh-restart 2>/dev/null && drained+=("$k")
    done
  fi
  for k in "${restarted[@]}"; do start_slurmd "$k"; done
  if ((${#drained[@]})); then
    wait_stale_steps "${drained[@]}"
    for k in "${drained[@]}"; do
      client scontrol update NodeName="$k" State=RESUME 2>/dev/null || true
    done
  fi

  # Wait (bounded) until every node is up. A node that a test left DOWN or
  # DRAINED while its slurmd responds is resumed once.
  local deadline=$((SECONDS + TIMEOUT)) bad resumed=0 n
  while :; do
    bad=$(bad_nodes)
    [[ -z $bad ]] && break
    if ((!resumed && SECONDS > deadline - TIMEOUT + 5)); then
      resumed=1
      for n in $bad; do
        [[ $n == *'*'* || $n != *=* ]] && continue
        client scontrol update NodeName="${n%%=*}" State=RESUME 2>/dev/null || true
      done
    fi
    if ((SECONDS >= deadline)); then
      log "nodes not up after ${TIMEOUT}s: ${bad//$'\n'/ }"
      client sinfo -N -l >&2 2>/dev/null || true
      if [[ $bad == controller-unreachable ]]; then
        tail_log "$DIR/log/slurmctld.log"
        die "slurmctld does not answer"
      fi
      n=${bad%%=*}
      pid_alive "$DIR/run/slurmd-$n.pid" slurmd || log "slurmd -N $n is not running"
      tail_log "$DIR/log/slurmd-$n.log"
      tail_log "$DIR/log/slurmctld.log"
      die "slurmd -N $n did not register with slurmctld"
    fi
    sleep 0.5
  done
  log "cluster up: $NODES nodes, SLURM_CONF=$CONF${restarted[*]:+ (started slurmd: ${restarted[*]})}"
}

# ---------------------------------------------------------------- stop
# running PID COMM: true while PID is alive (not a zombie) and is COMM.
running() {
  local stat
  [[ -r /proc/$1/comm && $(<"/proc/$1/comm") == "$2" ]] || return 1
  stat=$(<"/proc/$1/stat") || return 1
  stat=${stat##*) }
  [[ ${stat:0:1} != Z ]]
}

# stop_pids COMM PIDFILE...: TERM all at once, wait up to 15 s (a zombie
# counts as gone: PID 1 of this VM reaps orphans only every ~2 s), then KILL.
stop_pids() {
  local comm=$1 f pid i pids=()
  shift
  for f in "$@"; do
    if pid_alive "$f" "$comm"; then pids+=("$(<"$f")"); fi
  done
  if ((${#pids[@]})); then
    kill -TERM "${pids[@]}" 2>/dev/null || true
    for ((i = 0; i < 150; i++)); do
      for pid in "${pids[@]}"; do running "$pid" "$comm" && break; done
      running "$pid" "$comm" || break
      sleep 0.1
    done
    for pid in "${pids[@]}"; do
      if running "$pid" "$comm"; then
        log "$comm ($pid) ignored SIGTERM for 15 s; killing"
        kill -KILL "$pid" 2>/dev/null || true
      fi
    done
  fi
  rm -f "$@"
}

cmd_stop() {
  [[ -d $DIR/run ]] || return 0
  local p f k i stepds slurmds=()
  # Cancel jobs first: their slurmstepd and task processes outlive slurmd.
  if pid_alive "$DIR/run/slurmctld.pid" slurmctld && [[ -f $CONF ]] &&
    [[ -n $(client squeue -h -o %i 2>/dev/null) ]]; then
    client scancel --quiet -u "$(id -un)" 2>/dev/null || true
  fi
  # Wait (max 10 s) for the steps to end, then kill what is left.
  for ((i = 0; i < 20; i++)); do
    stepds=()
    for f in "$DIR"/run/slurmd-*.pid; do
      [[ -e $f ]] || continue
      k=${f##*/slurmd-}
      while read -r p _; do [[ -n $p ]] && stepds+=("$p"); done < <(node_stepds "${k%.pid}")
    done
    ((${#stepds[@]})) || break
    sleep 0.5
  done
  if ((${#stepds[@]})); then
    log "killing ${#stepds[@]} leftover slurmstepd process trees"
    kill_trees "${stepds[@]}"
  fi
  for f in "$DIR"/run/slurmd-*.pid; do
    [[ -e $f ]] && slurmds+=("$f")
  done
  ((${#slurmds[@]} == 0)) || stop_pids slurmd "${slurmds[@]}"
  stop_pids slurmctld "$DIR/run/slurmctld.pid"
  # munged only if we started it (it may serve other users of this host).
  if [[ -e $DIR/run/munged.ours ]]; then
    stop_pids munged "$DIR/munge/munged.pid"
    rm -f "$DIR/run/munged.ours"
  fi
  log "stopped"
}

# ---------------------------------------------------------------- fail
# fail NODE: simulate a crashed machine. Killing slurmd alone is not enough:
# its slurmstepd processes and the job's tasks keep running (and even report
# batch completion to slurmctld). So SIGKILL slurmd -N NODE, every
# slurmstepd of that node (found by its open slurmd-NODE.log) and all their
# descendants. The node goes DOWN ~25-30 s later (SlurmdTimeout=10 plus the
# controller's ping cycle); `start` revives it.
cmd_fail() {
  local n=${1:-} victims=() p
  [[ $n =~ ^n[0-9]+$ ]] || die "usage: cluster.sh fail nK"
  pid_alive "$DIR/run/slurmd-$n.pid" slurmd && victims+=("$(<"$DIR/run/slurmd-$n.pid")")
  while read -r p _; do
    [[ -n $p ]] && victims+=("$p")
  done < <(node_stepds "$n")
  if ((${#victims[@]})); then
    kill_trees "${victims[@]}"
    log "killed $n: ${#victims[@]} process trees (slurmd, slurmstepd + their tasks)"
  else
    log "nothing runs for $n"
  fi
}

# kill_trees PID...: SIGKILL these processes and all their descendants.
kill_trees() {
  local victims=("$@") more table
  table=$(ps -e -o pid=,ppid=)
  # Add children until the set stops growing.
  while :; do
    more=$(awk -v set=" ${victims[*]} " 'index(set, " " $2 " ") && !index(set, " " $1 " ") {print $1}' <<<"$table")
    [[ -z $more ]] && break
    # shellcheck disable=SC2206 # pids are plain numbers
    victims+=($more)
  done
  kill -KILL "${victims[@]}" 2>/dev/null || true
}

# ---------------------------------------------------------------- status
cmd_status() {
  if [[ ! -f $CONF ]]; then
    log "not configured ($CONF missing)"
    return 1
  fi
  if ! client scontrol ping 2>/dev/null | grep -q 'is UP'; then
    log "slurmctld does not answer"
    return 1
  fi
  client sinfo -N
  local bad k rc=0
  bad=$(bad_nodes)
  if [[ -n $bad ]]; then
    log "nodes not up: ${bad//$'\n'/ }"
    rc=1
  fi
  # A killed slurmd shows in sinfo only after SlurmdTimeout; check pids too.
  for ((k = 1; k <= NODES; k++)); do
    pid_alive "$DIR/run/slurmd-n$k.pid" slurmd || { log "slurmd -N n$k is not running"; rc=1; }
  done
  return $rc
}

# Serialize start/stop/fail: parallel test processes may all call start.
lock() {
  if [[ $(id -u) -ne 0 ]]; then
    [[ $1 == start ]] && skip "needs root (SlurmUser=root, munged started as user munge)"
    die "needs root"
  fi
  mkdir -p "$DIR"
  exec 9>"$DIR/.lock"
  flock -w 120 9 || die "another cluster.sh holds $DIR/.lock for 120 s"
}

case ${1:-start} in
start) lock start && cmd_start ;;
stop) lock stop && cmd_stop ;;
status) cmd_status ;;
env) echo "export SLURM_CONF=$CONF" ;;
fail) lock fail && cmd_fail "${2:-}" ;;
-h | --help | help) awk 'NR > 1 && !/^#/ {exit} NR > 1 {sub(/^# ?/, ""); print}' "$0" ;;
*) die "unknown command '$1' (start|stop|status|env|fail nK)" ;;
esac
