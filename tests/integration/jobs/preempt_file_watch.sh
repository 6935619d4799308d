#!/bin/sh
# A job that cannot handle SIGTERM (it ignores it) but watches POD_PREEMPT_FILE: when the file
# appears it "checkpoints" (a marker in POD_CHECKPOINT_DIR) and exits 75 within the grace period.
# Started again after the preemption, it finds the marker and succeeds.
trap '' TERM
marker="$POD_CHECKPOINT_DIR/saved-by-rank-$RANK"
if [ -f "$marker" ]; then
  echo "rank $RANK: resumed from $(cat "$marker")"
  exit 0
fi
i=0
while [ $i -lt 600 ]; do
  if [ -f "$POD_PREEMPT_FILE" ]; then
    echo "deadline $(cat "$POD_PREEMPT_FILE")" > "$marker"
    echo "rank $RANK: preempt file seen, deadline $(cat "$POD_PREEMPT_FILE")"
    exit 75
  fi
  [ "$RANK" = 0 ] && echo "POD_PROGRESS step=$i"
  i=$((i + 1))
  sleep 0.1
done
exit 1
