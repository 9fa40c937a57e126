import collections,sys
# apflat.py FILE THREADMATCH [N]: leaf and inclusive shares of the stacks that contain THREADMATCH
f=sys.argv[1]; m=sys.argv[2]; N=int(sys.argv[3]) if len(sys.argv)>3 else 35
leaf=collections.Counter(); incl=collections.Counter(); tot=0
for line in open(f):
    stack,_,n=line.rstrip().rpartition(' ')
    n=int(n); fr=stack.split(';')
    if not any(m in x for x in fr): continue
    tot+=n; leaf[fr[-1]]+=n
    for x in set(fr): incl[x]+=n
print('total',tot)
for x,c in leaf.most_common(N): print('%5.1f%% %s'%(100*c/tot,x))
print('--- inclusive')
for x,c in incl.most_common(N): print('%5.1f%% %s'%(100*c/tot,x))
