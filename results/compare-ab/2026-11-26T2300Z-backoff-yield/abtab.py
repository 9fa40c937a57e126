import json, sys, collections
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    build, rep, js = line.split(' ', 2)
    d = json.loads(js)
    key = (d['bench'], d['label'])
    if d['bench'] == 'rtt':
        v = '%s/%s/%s' % (d.get('p50_us'), d.get('p90_us'), d.get('p99_us'))
    else:
        mps = d.get('msgs_per_s') or d.get('rate') or 0
        cpu = (d.get('cpu_s') or 0) + (d.get('peer_cpu_s') or 0)
        secs = d.get('secs') or 1
        v = '%.2fM cpu/M=%.3f' % (mps / 1e6, cpu / (mps * secs / 1e6) if mps else 0)
    rows[key].append((build, rep, v))
for key in sorted(rows):
    print(key[0], key[1])
    for b in ('before', 'after'):
        print('   ', b, ' | '.join(v for bb, r, v in rows[key] if bb == b))
