#!/bin/bash
# sides.sh N SIZE SECS: alternated rounds of the rds4j pair (pe.sh of ../2026-11-29T0700Z-send-ring-as-queue/), the ideal sender into rds4j's sink (feed.sh),
# rds4j's source into the ideal receiver (drain.sh) and the raw NIO pair (pn.sh of ../2026-11-29T1400Z-log-model/)
N=$1; SIZE=$2; SECS=$3
for i in $(seq $N); do
  echo "$i $SIZE rds4j-pair $(NOCPU=1 WAIT=1 bash /tmp/w/pe.sh $SIZE $SECS | tail -1)"
  echo "$i $SIZE feed-to-rds4j-sink $(NOCPU=1 WAIT=1 bash /tmp/w/feed.sh $SIZE $SECS | head -1)"
  echo "$i $SIZE rds4j-source-to-drain $(NOCPU=1 WAIT=1 bash /tmp/w/drain.sh $SIZE $SECS | tail -1)"
  echo "$i $SIZE nio-pair $(bash /tmp/w/pn.sh $SIZE $SECS | tail -1)"
done
