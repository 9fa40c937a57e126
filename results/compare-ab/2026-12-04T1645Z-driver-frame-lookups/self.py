import sys, collections
# usage: self.py file [thread-substring] -> self and inclusive top frames
f=sys.argv[1]; th=sys.argv[2] if len(sys.argv)>2 else ''
selfc=collections.Counter(); incl=collections.Counter(); tot=0; thr=collections.Counter()
for line in open(f):
    stack,n=line.rsplit(' ',1); n=int(n); fr=stack.split(';')
    thr[fr[0]]+=n
    if th and th not in fr[0]: continue
    tot+=n; selfc[fr[-1]]+=n
    for x in set(fr[1:]): incl[x]+=n
print('threads:', ', '.join(f'{k}:{v}' for k,v in thr.most_common(8)))
print('total', tot)
print('-- self'); [print(f'{100*v/tot:6.2f}% {k[:120]}') for k,v in selfc.most_common(int(sys.argv[3]) if len(sys.argv)>3 else 25)]
print('-- inclusive'); [print(f'{100*v/tot:6.2f}% {k[:120]}') for k,v in incl.most_common(int(sys.argv[3]) if len(sys.argv)>3 else 30)]
