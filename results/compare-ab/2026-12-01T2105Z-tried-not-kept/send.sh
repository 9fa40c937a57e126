#!/bin/bash
# send.sh SIZE [args]: rds4j's sending side alone: rds4j-source into compare's ideal wire-sink
PSYS=wire ASYS=rds4j /tmp/w/pe.sh ${1:-64} "${@:2}"
