#!/bin/bash
# threads2.sh PID [secs]: per-thread user% sys% and switches over the period
P=$1; S=${2:-2}
snap() { for t in /proc/$P/task/*; do n=$(cat $t/comm 2>/dev/null) || continue; s=($(sed 's/.*) //' $t/stat)); v=$(awk '/^voluntary_ctxt/{print $2}' $t/status); iv=$(awk '/^nonvoluntary/{print $2}' $t/status); echo "$(basename $t) ${n// /_} ${s[11]} ${s[12]} $v $iv"; done; }
snap > /tmp/w/t1.$P; sleep $S; snap > /tmp/w/t2.$P
join <(sort /tmp/w/t1.$P) <(sort /tmp/w/t2.$P) | awk -v S=$S '{u=$8-$3; s=$9-$4; if (u+s>1) printf "%-22s usr%% %3d sys%% %3d vol %7d invol %6d\n", $2, u/S, s/S, $10-$5, $11-$6}'
