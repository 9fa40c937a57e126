import os, sys, time
secs=float(sys.argv[1]); pids=sys.argv[2:]
def snap():
    d={}
    for p in pids:
        try: cmd=open(f'/proc/{p}/cmdline').read().split('\0')
        except: continue
        role=[c for c in cmd if c.startswith('rds4j-') or c=='driver']
        role=role[0] if role else cmd[-2] if len(cmd)>1 else '?'
        for t in os.listdir(f'/proc/{p}/task'):
            try:
                s=open(f'/proc/{p}/task/{t}/stat').read()
                name=s[s.index('(')+1:s.rindex(')')]
                f=s[s.rindex(')')+2:].split()
                d[(p,role,t,name)]=int(f[11])+int(f[12])
            except: pass
    return d
a=snap(); time.sleep(secs); b=snap()
hz=os.sysconf('SC_CLK_TCK')
rows=[]
for k,v in b.items():
    u=(v-a.get(k,v))/hz/secs
    if u>0.02: rows.append((u,k))
for u,k in sorted(rows,reverse=True): print(f"{k[0]:>7} {k[1][:20]:20} {k[3]:24} {u*100:5.1f}%")
