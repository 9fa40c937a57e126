import sys, collections
# sub.py file frame: self-time of frames below (and including) the given frame, as % of total of thread samples
f,frame=sys.argv[1],sys.argv[2]
c=collections.Counter(); tot=0; sub=0
for line in open(f):
    stack,n=line.rsplit(' ',1); n=int(n); fr=stack.split(';'); tot+=n
    if frame in fr:
        i=fr.index(frame); sub+=n
        # attribute to the immediate child of frame and to the leaf
        child=fr[i+1] if i+1<len(fr) else '(self)'
        c['child '+child]+=n
        c['leaf '+fr[-1]]+=n
print(frame, f'{100*sub/tot:.2f}%')
for k,v in c.most_common(40): print(f'{100*v/tot:6.2f}% {k[:130]}')
