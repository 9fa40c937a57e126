import collections,sys
# sub.py FILE THREAD [DEPTH]: inclusive share of methods (each counted once per stack) and self leaves
f,th=sys.argv[1],sys.argv[2]
inc=collections.Counter(); leaf=collections.Counter(); tot=0
for line in open(f):
    stack,_,n=line.rstrip().rpartition(' ')
    fr=stack.split(';'); n=int(n)
    if th not in fr[0]: continue
    tot+=n
    seen=set()
    for x in fr[1:]:
        k=x.split('/')[-1][:80]
        if k not in seen: seen.add(k); inc[k]+=n
    leaf[fr[-1].split('/')[-1][:80]]+=n
print('samples',tot)
for k,n in inc.most_common(int(sys.argv[3]) if len(sys.argv)>3 else 45): print('%5.1f%% %s'%(100*n/tot,k))
print('-- self')
for k,n in leaf.most_common(25): print('%5.1f%% %s'%(100*n/tot,k))
