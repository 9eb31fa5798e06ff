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
#   IODIAG_HOOK_LOG=/var/log/iodiag-hook.log  one line per log sent, retried, spooled or lost (default: none)
#   IODIAG_HOOK_SPOOL=/var/spool/iodiag-hook  where a log waits while the server is down
#   IODIAG_HOOK_RETRY_S=60                    how long to keep retrying before spooling
#   IODIAG_HOOK_TIMEOUT=30                    seconds per request
#
# A job that set DARSHAN_LOGPATH (a file, or a directory to use instead of the dated tree) is found there.
#
# This script never fails the epilog (a failing epilog drains the node) and never holds it for more than
# a moment: the logs are found with a few globs, then sent by curl from a background process in a session
# of its own (slurmd kills the epilog's process group when the epilog returns).
#
# That process never drops a log silently. Refused connections, timeouts, 408, 429 and 5xx answers are
# retried with backoff for IODIAG_HOOK_RETRY_S; a log the server still did not take is spooled (a record
# of its path, user and job id in IODIAG_HOOK_SPOOL), resent by the next epilog on the node or by
# `iodiag hook flush`. Answers that say this hook is misconfigured (a 3xx redirect, 401, 404, 405) spool
# at once: the log is fine, the URL or token is not. Any other 4xx is the server's final word on the log:
# the log is lost, and so is one that cannot be read or spooled; each such log gets one line
# "iodiag: PATH: log lost: REASON" in the hook log and in the job's output file (SLURM_JOB_STDOUT, which
# slurmd gives the epilog on recent Slurm versions), and the background process exits 1.
#
# IODIAG_HOOK_WAIT=1 runs that process in the foreground and returns its status: for trying the hook by
# hand only, never in hook.env (the epilog would then hold the node, and fail it when a log is lost).

export LC_ALL=C # byte-wise globs and escapes, whatever the node's locale

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
spool=${IODIAG_HOOK_SPOOL:-/var/spool/iodiag-hook}
retry_s=${IODIAG_HOOK_RETRY_S:-60}
timeout_s=${IODIAG_HOOK_TIMEOUT:-30}
job_out=${SLURM_JOB_STDOUT:-}

[ -n "$job" ] && [ -n "$user" ] && [ -n "$url" ] && [ -n "$token" ] || exit 0
case $job$user in *[!A-Za-z0-9._@-]*) exit 0 ;; esac
case $days in '' | *[!0-9]*) days=2 ;; esac
case $retry_s in '' | *[!0-9]*) retry_s=60 ;; esac
case $timeout_s in '' | *[!0-9]* | 0) timeout_s=30 ;; esac
case $mode in path) ;; *) mode=upload ;; esac
url=${url%/}

logs=()
find_logs() {
  local logdir=${DARSHAN_LOG_DIR:-} d day f
  if [ -n "${DARSHAN_LOGPATH:-}" ]; then
    if [ -f "$DARSHAN_LOGPATH" ]; then
      logs+=("$DARSHAN_LOGPATH")
    elif [ -d "$DARSHAN_LOGPATH" ]; then
      logdir=$DARSHAN_LOGPATH
    fi
  fi
  if [ ${#logs[@]} -eq 0 ] && [ -n "$logdir" ] && [ -d "$logdir" ]; then
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
}

shopt -s nullglob
detached=
if [ "${1:-}" = --detached ]; then
  detached=1
  shift
  logs=("$@")
else
  find_logs
fi
waiting=("$spool"/*.rec)
[ ${#logs[@]} -gt 0 ] || [ ${#waiting[@]} -gt 0 ] || exit 0

# --- the sender (runs in the background) ---------------------------------------------------------------

n_sent=0 n_spooled=0 n_lost=0
work=

say() { printf '%s iodiag: %s\n' "$(date '+%F %T')" "$*"; }

# One line whatever the text holds: control characters (a newline in a file name) would forge lines.
printable() { local s=${1//[[:cntrl:]]/?}; printf '%s' "${s:0:400}"; }

# The server's one-line reason: the "detail" of its JSON error, else the start of the body.
detail() {
  local body d
  body=$(tr -s '\r\n\t' '   ' <"$work/body" 2>/dev/null)
  d=$(printf '%s' "$body" | sed -n 's/.*"detail" *: *"\(\([^"\\]\|\\.\)*\)".*/\1/p')
  printable "${d:-$body}"
}

# curl's -F value syntax splits at ';' and ',' unless the name is double-quoted, with '"' and '\' escaped.
# Sets the variable named $1 (a command substitution would drop a file name's trailing newline).
form_quote() {
  local s=${2//\\/\\\\}
  printf -v "$1" '%s' "${s//\"/\\\"}"
}

json_string() {
  local s=$1 esc="" c i
  s=${s//\\/\\\\}
  s=${s//\"/\\\"}
  s=${s//$'\n'/\\n}
  s=${s//$'\r'/\\r}
  s=${s//$'\t'/\\t}
  if [[ $s == *[[:cntrl:]]* ]]; then
    for ((i = 0; i < ${#s}; i++)); do
      c=${s:i:1}
      [[ $c == [[:cntrl:]] ]] && printf -v c '\\u%04x' "'$c"
      esc+=$c
    done
    s=$esc
  fi
  printf '"%s"' "$s"
}

# The name the server shows. curl since 7.81 sends it exactly with --form-escape; an older curl would send
# '"' and '\' unescaped and break the part's header, so those become '_' there. Control characters go:
# the server drops them from names anyway, and a raw newline would end the header.
if curl --form-escape --version >/dev/null 2>&1; then
  form_escape=(--form-escape)
else
  form_escape=()
fi
upload_name() {
  local n=${1##*/}
  n=${n//[[:cntrl:]]/}
  if [ ${#form_escape[@]} -eq 0 ]; then
    n=${n//\"/_}
    n=${n//\\/_}
  fi
  printf '%s' "${n:-log.darshan}"
}

# One request. Sets $answer (the server's reply, on success) or $problem (one line), and returns:
# 0 accepted, 1 no answer (refused, timed out), 2 refused for good (4xx, unreadable file),
# 3 this hook is misconfigured (3xx, 401, 404, 405), 4 the server is busy or failing (408, 429, 5xx).
attempt() {
  local f=$1 m=$2 u=$3 j=$4 http rc qpath qname
  answer='' problem=''
  : >"$work/body"
  # The token goes to curl on stdin, never on its command line (which every user on the node can read).
  if [ "$m" = path ]; then
    http=$(printf 'header = "Authorization: Bearer %s"\n' "$token" |
      curl -sS -o "$work/body" -w '%{http_code}' --connect-timeout 5 --max-time "$timeout_s" -K - \
        -H 'Content-Type: application/json' \
        --data-raw "{\"path\": $(json_string "$f"), \"user\": \"$u\", \"job_id\": \"$j\"}" \
        "$url/api/v1/analyses" 2>"$work/err")
  else
    if [ ! -f "$f" ] || [ ! -r "$f" ]; then
      problem="cannot read the file"
      return 2
    fi
    form_quote qpath "$f"
    form_quote qname "$(upload_name "$f")"
    http=$(printf 'header = "Authorization: Bearer %s"\n' "$token" |
      curl -sS -o "$work/body" -w '%{http_code}' --connect-timeout 5 --max-time "$timeout_s" -K - \
        "${form_escape[@]}" -F "file=@\"$qpath\";filename=\"$qname\";type=application/octet-stream" \
        --form-string "user=$u" --form-string "job_id=$j" \
        "$url/api/v1/analyses" 2>"$work/err")
  fi
  rc=$?
  case $rc in
    0) ;;
    26)
      problem="cannot read the file"
      return 2
      ;;
    *)
      problem=$(printable "$(tr -s '\r\n' '  ' <"$work/err")")
      while [[ $problem == *' ' ]]; do problem=${problem% }; done
      problem=${problem:-curl exit $rc}
      return 1
      ;;
  esac
  case $http in
    2??)
      answer=$(printable "$(tr -s '\r\n' '  ' <"$work/body")")
      return 0
      ;;
    3?? | 401 | 404 | 405)
      problem="$http $(detail)"
      return 3
      ;;
    408 | 429 | 5??)
      problem="$http $(detail)"
      return 4
      ;;
    4??)
      problem="$http $(detail)"
      return 2
      ;;
    *)
      problem="unexpected answer $http"
      return 4
      ;;
  esac
}

# GNU sleep takes fractions: sleep_ms 1500 -> sleep 1.500
sleep_ms() { sleep "$(($1 / 1000)).$(printf '%03d' $(($1 % 1000)))"; }

# Tries until the server takes the log, refuses it, or retry_s has passed. Returns attempt()'s code.
deliver() {
  local f=$1 m=$2 u=$3 j=$4 started=$SECONDS delay=500 tries=0 rc
  while :; do
    attempt "$f" "$m" "$u" "$j"
    rc=$?
    tries=$((tries + 1))
    case $rc in 0 | 2 | 3) return $rc ;; esac
    if ((SECONDS - started >= retry_s)); then
      problem="$problem (after $tries tries in $((SECONDS - started)) s)"
      return $rc
    fi
    say "$(printable "$f"): try $tries: $problem; again in about $((delay / 1000)).$((delay % 1000 / 100)) s"
    # Jitter: the nodes that saw the server go down must not all come back at the same instant.
    sleep_ms $((delay * (50 + RANDOM % 100) / 100))
    delay=$((delay * 2 > 15000 ? 15000 : delay * 2))
  done
}

# A line in the job's output file, so its owner learns the log is lost. Written as that user: the path is
# theirs to choose, and root appending to it would follow any symlink they put there.
tell_job() {
  local line=$1 u=$2 dest=$3
  case $dest in /*) ;; *) return 0 ;; esac
  case $dest in *%*) return 0 ;; esac # an unexpanded pattern (slurm-%j.out), not a file
  [ -f "$dest" ] || return 0
  if [ "$(id -u)" = 0 ]; then
    command -v runuser >/dev/null 2>&1 || return 0
    # shellcheck disable=SC2016 # $1 and $2 are the inner shell's arguments
    runuser -u "$u" -- sh -c 'printf "%s\n" "$1" >>"$2"' iodiag "$line" "$dest" 2>/dev/null
  else
    printf '%s\n' "$line" >>"$dest" 2>/dev/null
  fi
  return 0
}

lost() {
  local line
  line="iodiag: $(printable "$1"): log lost: $2"
  printf '%s %s\n' "$(date '+%F %T')" "$line"
  tell_job "$line" "$3" "$4"
  n_lost=$((n_lost + 1))
}

# Record fields are one line each: '\' and line ends in a path are escaped, undone by printf %b.
rec_escape() {
  local s=${1//\\/\\\\}
  s=${s//$'\n'/\\n}
  printf '%s' "${s//$'\r'/\\r}"
}

# Written whole or not at all: a temporary file renamed into place, so a reader never sees half a record.
spool_it() {
  local f=$1 m=$2 reason=$3 tmpf
  # shellcheck disable=SC2174 # only the spool itself is ours to make private; its parents are the system's
  [ -d "$spool" ] || mkdir -p -m 700 -- "$spool" 2>/dev/null
  tmpf=$(mktemp "$spool/.tmp.XXXXXXXX" 2>/dev/null) || return 1
  if printf 'iodiag-hook-spool 1\npath=%s\nuser=%s\njob_id=%s\nmode=%s\njob_output=%s\nspooled_at=%s\nreason=%s\n' \
    "$(rec_escape "$f")" "$user" "$job" "$m" "$(rec_escape "$job_out")" "$(date '+%F %T')" \
    "$(printable "$reason")" >"$tmpf" &&
    mv -f -- "$tmpf" "$spool/$(date +%Y%m%d-%H%M%S)-$job-${tmpf##*.}.rec"; then
    return 0
  fi
  rm -f -- "$tmpf"
  return 1
}

read_record() {
  local line first=1
  r_path='' r_user='' r_job='' r_mode=upload r_out=''
  while IFS= read -r line || [ -n "$line" ]; do
    if [ -n "$first" ]; then
      [ "$line" = "iodiag-hook-spool 1" ] || return 1
      first=
      continue
    fi
    case $line in
      path=*) printf -v r_path '%b' "${line#path=}" ;;
      user=*) r_user=${line#user=} ;;
      job_id=*) r_job=${line#job_id=} ;;
      mode=*) r_mode=${line#mode=} ;;
      job_output=*) printf -v r_out '%b' "${line#job_output=}" ;;
    esac
  done <"$1"
  [ -n "$r_path" ] && [ -n "$r_user" ] && [ -n "$r_job" ] || return 1
  case $r_user$r_job in *[!A-Za-z0-9._@-]*) return 1 ;; esac
  case $r_mode in upload | path) ;; *) return 1 ;; esac
}

# What earlier runs spooled: one try each (this run's own logs get the backoff), oldest first. A record
# goes once the server took the log, or refused it for good; no answer at all stops the round, since the
# rest would not get one either. Returns 1 when records were left for lack of an answer.
resend_spooled() {
  local rec rc left=0
  [ -d "$spool" ] || return 0
  # One sender at a time (jobs ending together, `iodiag hook flush`): the others leave the spool alone.
  { exec 9>>"$spool/.lock"; } 2>/dev/null || return 0
  if command -v flock >/dev/null 2>&1 && ! flock -n 9; then
    exec 9>&-
    return 0
  fi
  for rec in "$spool"/*.rec; do
    [ -f "$rec" ] || continue
    if ! read_record "$rec"; then
      say "$(printable "$rec"): not a spool record, left alone"
      continue
    fi
    attempt "$r_path" "$r_mode" "$r_user" "$r_job"
    rc=$?
    case $rc in
      0)
        rm -f -- "$rec"
        n_sent=$((n_sent + 1))
        say "$(printable "$r_path"): sent from the spool (job $r_job, user $r_user): $answer"
        ;;
      2)
        rm -f -- "$rec"
        lost "$r_path" "$problem" "$r_user" "$r_out"
        ;;
      4) say "$(printable "$r_path"): still spooled: $problem" ;;
      *)
        say "spool $(printable "$spool"): $(printable "$r_path") not taken ($problem); the rest stays spooled"
        left=1
        break
        ;;
    esac
  done
  exec 9>&-
  return $left
}

send_all() {
  local f rc cut=0 first_sent
  work=$(mktemp -d "${TMPDIR:-/tmp}/iodiag-hook.XXXXXXXX") || {
    say "job $job: no temporary directory; nothing sent"
    return 0
  }
  resend_spooled || cut=1
  first_sent=$n_sent
  for f in "${logs[@]}"; do
    say "job $job user $user: $(printable "$f")"
    deliver "$f" "$mode" "$user" "$job"
    rc=$?
    case $rc in
      0)
        n_sent=$((n_sent + 1))
        say "$(printable "$f"): sent: $answer"
        ;;
      2) lost "$f" "$problem" "$user" "$job_out" ;;
      *)
        if spool_it "$f" "$mode" "$problem"; then
          n_spooled=$((n_spooled + 1))
          say "$(printable "$f"): spooled in $(printable "$spool") ($problem)"
        else
          lost "$f" "$problem, and it could not be spooled in $(printable "$spool")" "$user" "$job_out"
        fi
        ;;
    esac
  done
  # The server came back while this run's logs were being sent: what is still spooled goes now too.
  if [ "$cut" = 1 ] && [ "$n_sent" -gt "$first_sent" ]; then
    resend_spooled
  fi
  rm -rf -- "$work"
  say "job $job: $n_sent sent, $n_spooled spooled, $n_lost lost"
  [ "$n_lost" -eq 0 ]
}

# A hook log that cannot be opened must not stop the sending.
{ : >>"$out"; } 2>/dev/null || out=/dev/null

if [ -n "$detached" ]; then
  # In a session of its own already (below): the sender goes to the background, and this returns at once.
  (send_all) </dev/null >>"$out" 2>&1 &
  exit 0
fi

if [ -n "${IODIAG_HOOK_WAIT:-}" ]; then
  send_all </dev/null >>"$out" 2>&1
  exit
fi

# slurmd kills the epilog's whole process group as soon as the epilog exits, so the sender must be in a
# session of its own before this returns: this script again, under setsid, which starts the sender and
# exits at once. No inherited descriptors either, so slurmd does not wait for it.
if command -v setsid >/dev/null 2>&1; then
  setsid bash "${BASH_SOURCE[0]}" --detached "${logs[@]}" </dev/null >/dev/null 2>&1
else
  (send_all) </dev/null >>"$out" 2>&1 &
  disown 2>/dev/null
fi
exit 0
