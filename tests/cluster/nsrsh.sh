#!/bin/sh
# An ssh stand-in for mpirun across network namespaces of one machine (cluster_test.py mpi):
# `nsrsh.sh [ssh options] HOST COMMAND...` runs COMMAND in the namespace NSRSH_MAP names for
# HOST (NSRSH_MAP="host1=ns1 host2=ns2 ..."), under HOST as hostname, like sshd would.
while [ $# -gt 0 ]; do
  case "$1" in
    -*) shift ;;
    *) break ;;
  esac
done
host=$1; shift
ns=
for pair in $NSRSH_MAP; do
  [ "${pair%%=*}" = "$host" ] && ns=${pair#*=}
done
[ -n "$ns" ] || { echo "nsrsh: unknown host $host" >&2; exit 255; }
exec ip netns exec "$ns" unshare --uts -- sh -c 'hostname "$0" && exec /bin/sh -c "$*"' "$host" "$@"
