#!/bin/bash
# recv.sh: rds4j sink fed by compare's ideal sender; PERF=1 profiles the sink
PSYS=rds4j ASYS=wire /tmp/w/pe.sh ${1:-64} "${@:2}"
