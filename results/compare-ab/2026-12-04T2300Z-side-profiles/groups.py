import collections,sys
# groups.py FILE THREAD: one thread's share of samples per step of a message's path, the first rule that matches a
# stack (async-profiler's collapsed output with -t, whose first frame names the thread)
f,th=sys.argv[1],sys.argv[2]
rules=[
 ('kernel: read/recv syscall', lambda fr: any('SocketDispatcher.read' in x or 'IOUtil.read' in x for x in fr)),
 ('kernel: sendfile/write', lambda fr: any('LibC.sendfile' in x or 'SocketDispatcher.write' in x or 'IOUtil.write' in x for x in fr)),
 ('idle: yield/select/park', lambda fr: any(k in x for x in fr for k in ('sched_yield','Thread.yield','epoll_wait','SelectorImpl.select','LockSupport.park','WakeSignal.park'))),
 ('delivery into the receive ring (StackAgent.deliver)', lambda fr: any('StackAgent.deliver' in x for x in fr)),
 ('frame parse, validation, ack rules', lambda fr: any('TcpFrameReader.parse' in x for x in fr)),
 ('take from the receive ring (ReceiveQueue.takeInto)', lambda fr: any('ReceiveQueue.takeInto' in x for x in fr)),
 ('append: transport write of the frame', lambda fr: any('TcpPath.append' in x for x in fr)),
 ('append: connection, sequence, frame record', lambda fr: any('Connection.append' in x for x in fr)),
 ('send: room (send buffer)', lambda fr: any('reserveRoom' in x for x in fr)),
 ('send: checks (destination, congestion)', lambda fr: any('checkSend' in x or 'Congestion$Sender.refuses' in x for x in fr)),
 ('duty cycle lock (hold/unhold)', lambda fr: any('tryHold' in x or 'unhold' in x for x in fr)),
 ('duty cycles (other)', lambda fr: any('StackAgent.doWork' in x for x in fr)),
 ('benchmark loop', lambda fr: 'Rds4jBench' in fr[-1]),
]
c=collections.Counter(); tot=0
for line in open(f):
    stack,_,n=line.rstrip().rpartition(' ')
    fr=stack.split(';'); n=int(n)
    if th not in fr[0]: continue
    tot+=n
    for name,r in rules:
        if r(fr): c[name]+=n; break
    else: c['other']+=n
print(f,'samples',tot)
for k,n in c.most_common(): print('%5.1f%%  %s'%(100*n/tot,k))
