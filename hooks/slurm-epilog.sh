#!/bin/bash
# iodiag Slurm epilog: send the finished job's Darshan log(s) to an iodiag server for analysis.
#
# Install (see docs/hooks.md): copy to the compute nodes, e.g. /etc/slurm/epilog.d/iodiag.sh, and run it
# from slurm.conf's Epilog (or from your existing epilog). Settings come from the environment or from
# /etc/iodiag/hook.env (IODIAG_HOOK_CONF; keep it root-only, it holds the token):
#
#   IODIAG_URL=https://iodiag.example.org    the server
#   IODIAG_TOKEN=iod_...                      a token with role "hook" (iodiag token create --user slurm --role hook)
#   DARSHAN_LOG_DIR=/lus/darshan-logs         root of Darshan's dated tree <dir>/YYYY/M/D/
#   IODIAG_HOOK_MODE=upload                   upload (default) or path (the server reads the file itself;
#                                             it must see the same path and list it in IODIAG_ALLOWED_LOG_DIRS)
#   IODIAG_HOOK_DAYS=2                        also look this many days back (the tree is dated by job start)
#   IODIAG_HOOK_LOG=/var/log/iodiag-hook.log  where curl's output goes
#
# A job that set DARSHAN_LOGPATH (a file, or a directory to use instead of the dated tree) is found there.
#
# This script never fails the epilog (a failing epilog drains the node) and never holds it for more than
# a moment: the logs are found with a few globs, then posted by curl in the background, each request
# limited to 5 seconds.

conf=${IODIAG_HOOK_CONF:-/etc/iodiag/hook.env}
# shellcheck disable=SC1090
[ -r "$conf" ] && . "$conf"

job=${SLURM_JOB_ID:-}
user=${SLURM_JOB_USER:-}
url=${IODIAG_URL:-}
token=${IODIAG_TOKEN:-}
mode=${IODIAG_HOOK_MODE:-upload}
days=${IODIAG_HOOK_DAYS:-2}
out=${IODIAG_HOOK_LOG:-/dev/null}

[ -n "$job" ] && [ -n "$user" ] && [ -n "$url" ] && [ -n "$token" ] || exit 0
case $job$user in *[!A-Za-z0-9._@-]*) exit 0 ;; esac
case $days in '' | *[!0-9]*) days=2 ;; esac

logs=()
logdir=${DARSHAN_LOG_DIR:-}
if [ -n "${DARSHAN_LOGPATH:-}" ]; then
  if [ -f "$DARSHAN_LOGPATH" ]; then
    logs+=("$DARSHAN_LOGPATH")
  elif [ -d "$DARSHAN_LOGPATH" ]; then
    logdir=$DARSHAN_LOGPATH
  fi
fi
if [ ${#logs[@]} -eq 0 ] && [ -n "$logdir" ] && [ -d "$logdir" ]; then
  shopt -s nullglob
  # Darshan names a log <user>_<exe>_id<jobid>_<month>-<day>-<seconds>-<hash>_<n>.darshan, under the job's
  # start date; a job started before midnight has its log in an earlier day's directory.
  for ((d = 0; d <= days; d++)); do
    day=$(date -d "-$d day" +%Y/%-m/%-d 2>/dev/null) || break
    for f in "$logdir/$day/${user}"_*_id"${job}"_*.darshan; do
      [ -f "$f" ] && logs+=("$f")
    done
  done
  # A job directory of its own (DARSHAN_LOGPATH set to a per-job directory) holds its logs at the top.
  if [ ${#logs[@]} -eq 0 ]; then
    for f in "$logdir/${user}"_*_id"${job}"_*.darshan; do
      [ -f "$f" ] && logs+=("$f")
    done
  fi
fi
[ ${#logs[@]} -gt 0 ] || exit 0

post() {
  local f=$1 esc
  # The token goes to curl on stdin, never on its command line (which every user on the node can read).
  if [ "$mode" = path ]; then
    esc=${f//\\/\\\\}
    esc=${esc//\"/\\\"}
    printf 'header = "Authorization: Bearer %s"\n' "$token" |
      curl -sS --max-time 5 --retry 2 --retry-max-time 12 -K - \
        -H 'Content-Type: application/json' \
        --data "{\"path\": \"$esc\", \"user\": \"$user\", \"job_id\": \"$job\"}" \
        "$url/api/v1/analyses"
  else
    printf 'header = "Authorization: Bearer %s"\n' "$token" |
      curl -sS --max-time 5 --retry 2 --retry-max-time 12 -K - \
        -F "file=@$f;type=application/octet-stream" -F "user=$user" -F "job_id=$job" \
        "$url/api/v1/analyses"
  fi
  echo
}

# Detached: its own session, no inherited descriptors, so slurmd neither waits for it nor kills it.
(
  for f in "${logs[@]}"; do
    echo "$(date '+%F %T') job $job user $user: $f"
    post "$f"
  done
) </dev/null >>"$out" 2>&1 &
disown 2>/dev/null
exit 0
