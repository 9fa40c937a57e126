import collections,sys
# threads.py FILE...: samples per thread (200 us each), and the top leaf frames of the busiest threads
for f in sys.argv[1:]:
    c=collections.Counter(); leaf=collections.defaultdict(collections.Counter)
    for line in open(f):
        stack,_,n=line.rstrip().rpartition(' ')
        fr=stack.split(';'); n=int(n)
        t=fr[0].split(' tid')[0].strip('[')
        c[t]+=n; leaf[t][fr[-1].split('/')[-1][:70]]+=n
    print(f, sum(c.values()))
    for t,n in c.most_common(6):
        print('  %6d %s'%(n,t))
