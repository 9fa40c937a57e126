import sys,statistics,collections
d=collections.defaultdict(dict)
for l in open(sys.argv[1]):
    f=l.split(); d[int(f[0])][f[1]]=float(f[3])
r=[d[i]['B']/d[i]['A'] for i in sorted(d) if 'A' in d[i] and 'B' in d[i]]
A=[d[i]['A'] for i in d]; B=[d[i]['B'] for i in d]
print('pairs',len(r),'median ratio B/A %.3f'%statistics.median(r),'min %.2f max %.2f'%(min(r),max(r)),'B higher in',sum(x>1 for x in r),
 'medians A %.2fM B %.2fM'%(statistics.median(A)/1e6,statistics.median(B)/1e6))
