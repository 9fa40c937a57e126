import os,sys,time
# thcpu.py SECONDS PID...: per-thread CPU share (utime+stime) over SECONDS
secs=float(sys.argv[1]); pids=sys.argv[2:]
def snap():
    d={}
    for p in pids:
        try: ts=os.listdir(f"/proc/{p}/task")
        except Exception: continue
        for t in ts:
            try:
                st=open(f"/proc/{p}/task/{t}/stat").read()
                name=st[st.index('(')+1:st.rindex(')')]
                f=st[st.rindex(')')+2:].split()
                d[(p,t)]=(name,int(f[11])+int(f[12]),int(f[11]),int(f[12]))
                s=open(f"/proc/{p}/task/{t}/status").read()
                v=[l for l in s.splitlines() if 'voluntary_ctxt' in l]
                d[(p,t)]+=tuple(int(x.split()[1]) for x in v)
            except Exception: pass
    return d
a=snap(); time.sleep(secs); b=snap()
hz=os.sysconf('SC_CLK_TCK')
for k in sorted(b):
    if k in a:
        dt=(b[k][1]-a[k][1])/hz/secs
        if dt>0.01: print(k[0],b[k][0],f"{dt*100:.0f}%", f"usr {(b[k][2]-a[k][2])/hz/secs*100:.0f}% sys {(b[k][3]-a[k][3])/hz/secs*100:.0f}%", "vcsw/s",int((b[k][4]-a[k][4])/secs),"ivcsw/s",int((b[k][5]-a[k][5])/secs))
