#!/bin/bash
# iodiag PBS (OpenPBS / PBS Pro / Torque) end-of-job epilogue: send the job's Darshan log(s) to iodiag.
#
# PBS runs the epilogue as root with: $1 job id, $2 user name, $3 group, ... Install it as
# $PBS_HOME/mom_priv/epilogue (root-owned, mode 700), or call it from your epilogue with "$@".
# Settings as in slurm-epilog.sh (environment or /etc/iodiag/hook.env): IODIAG_URL, IODIAG_TOKEN (role
# hook), DARSHAN_LOG_DIR, IODIAG_HOOK_MODE, IODIAG_HOOK_DAYS, IODIAG_HOOK_LOG, IODIAG_HOOK_SPOOL,
# IODIAG_HOOK_RETRY_S, IODIAG_HOOK_TIMEOUT.
#
# Darshan takes the job id from PBS_JOBID ("1234.server" -> 1234), which is what its log names carry.
# Never fails the epilogue and never holds it: slurm-epilog.sh sends in the background, retries while the
# server is down or busy, then spools the log for the next epilogue or `iodiag hook flush`. A lost log (one
# the server refused) is reported in IODIAG_HOOK_LOG only: the epilogue is given no job output file that
# is still open when the background sender finishes.

jobid=${1:-${PBS_JOBID:-}}
user=${2:-${PBS_JOBUSER:-${USER:-}}}
jobid=${jobid%%.*}    # 1234.server -> 1234
jobid=${jobid%%\[*}   # array job 1234[7] -> 1234 (Darshan records the numeric part)

here=$(dirname "$(readlink -f "$0")")
hook=${IODIAG_SLURM_HOOK:-$here/slurm-epilog.sh}
if [ -x "$hook" ] || [ -r "$hook" ]; then
  SLURM_JOB_ID=$jobid SLURM_JOB_USER=$user SLURM_JOB_STDOUT='' bash "$hook" </dev/null >/dev/null 2>&1
fi
exit 0
