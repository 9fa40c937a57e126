import json,sys,collections,subprocess
# jfrtop.py FILE [thread-substring]: top frames (method:line) of execution samples, self and by inlined parent
data=json.loads(subprocess.check_output(['jfr','print','--json','--events','jdk.ExecutionSample',sys.argv[1]]))
th=sys.argv[2] if len(sys.argv)>2 else 'source'
top=collections.Counter(); meth=collections.Counter(); n=0
for e in data['recording']['events']:
    v=e['values']; t=v['sampledThread']['javaName'] or ''
    if th not in t: continue
    fr=v['stackTrace']['frames']
    if not fr: continue
    n+=1
    f=fr[0]; m=f['method']; name=m['type']['name'].split('.')[-1]+'.'+m['name']
    top[name+':'+str(f['lineNumber'])]+=1; meth[name]+=1
print('samples',n)
for k,c in meth.most_common(25): print('%5.1f%% %s'%(100*c/n,k))
print('--- lines')
for k,c in top.most_common(40): print('%5.1f%% %s'%(100*c/n,k))
