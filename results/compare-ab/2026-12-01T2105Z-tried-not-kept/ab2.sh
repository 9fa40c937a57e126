#!/bin/bash
# ab2.sh ROUNDS SIZE: A/B pair, prints rate, sink cpu, src cpu, src agent cpu, ack-only frames
R=${1:-4}; S=${2:-64}; shift 2
for i in $(seq $R); do for v in A B; do
  JAR=/tmp/w/$v.jar DUR=${DUR:-3} /tmp/w/pe.sh $S "$@" >/dev/null 2>&1
  python3 - $v <<'PY'
import json,sys,re
s=json.loads(open('/tmp/w/sink.out').read().split('RESULT ')[1].split('\n')[0]); a=json.loads(open('/tmp/w/src.out').read().split('RESULT ')[1].split('\n')[0])
e=open('/tmp/w/sink.err').read(); m=re.search(r'send_ack_only=(\d+)',e)
print(sys.argv[1], s['msgs_per_s'], 'ns/msg sink %.0f src %.0f agent %.0f' % (s['cpu_s']/s['msgs']*1e9, a['cpu_s']/a['sent']*1e9, a['agent_cpu_s']/a['sent']*1e9), 'acks', m.group(1) if m else '-')
PY
done; done
