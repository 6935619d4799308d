#!/bin/sh
# Each rank writes its lines in pieces (no newline between them), the way a program that
# flushes mid-line does; mpirun forwards each piece as it comes.
for i in 1 2 3; do
  printf 'rank %s line %s begins' "$RANK" "$i"
  sleep 0.2
  printf ' and ends\n'
done
