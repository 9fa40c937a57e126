# abmed.py FILE BASE NEW: per case, the median of the per-round ratios NEW/BASE (lines: "round build case: msgs/s N ...")
import sys,collections,statistics
f,base,new=sys.argv[1:4]
d=collections.defaultdict(dict)
for l in open(f):
    p=l.split()
    if len(p)<5: continue
    d[(p[0],p[2].rstrip(':'))][p[1]]=float(p[4])
for c in sorted({k[1] for k in d}):
    ks=[k for k in d if k[1]==c and base in d[k] and new in d[k]]
    rs=[d[k][new]/d[k][base] for k in ks]
    print(c,'pairs',len(rs),'median ratio %.3f (%.2f-%.2f)'%(statistics.median(rs),min(rs),max(rs)),
      '%s median %.2fM, %s %.2fM'%(base,statistics.median(d[k][base] for k in ks)/1e6,new,statistics.median(d[k][new] for k in ks)/1e6))
