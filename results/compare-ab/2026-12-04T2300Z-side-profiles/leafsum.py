import sys
# leafsum.py THREAD PATTERN[,PATTERN...] FILE...: share of a thread's samples whose leaf frame matches a pattern
th=sys.argv[1]; pats=sys.argv[2].split(',')
for f in sys.argv[3:]:
    tot=hit=0
    for line in open(f):
        stack,_,n=line.rstrip().rpartition(' '); fr=stack.split(';'); n=int(n)
        if th not in fr[0]: continue
        tot+=n
        if any(p in fr[-1] for p in pats): hit+=n
    print('%5.2f%% %s'%(100*hit/tot,f))
