import os, sys, time
pid = sys.argv[1]; win = float(sys.argv[2]) if len(sys.argv) > 2 else 2
def snap():
    r = {}
    for t in os.listdir(f"/proc/{pid}/task"):
        try:
            st = open(f"/proc/{pid}/task/{t}/stat").read()
            comm = st[st.index('(')+1:st.rindex(')')]
            f = st[st.rindex(')')+2:].split()
            cpu = int(f[11]) + int(f[12])
            sw = {l.split(':')[0]: int(l.split()[1]) for l in open(f"/proc/{pid}/task/{t}/status") if 'ctxt' in l}
            r[t] = (comm, cpu, sw['voluntary_ctxt_switches'], sw['nonvoluntary_ctxt_switches'])
        except Exception:
            pass
    return r
a = snap(); time.sleep(win); b = snap()
for t in b:
    if t in a:
        d = b[t][1] - a[t][1]
        if d > 2:
            print(f"{b[t][0]:<24} cpu% {d/win:5.0f} vol/s {(b[t][2]-a[t][2])/win:8.0f} invol/s {(b[t][3]-a[t][3])/win:7.0f}")
